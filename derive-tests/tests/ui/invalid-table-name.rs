use table_model::TableEntity;

#[derive(TableEntity)]
#[table(name = "my-orders")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
}

#[derive(TableEntity)]
#[table(name = "tables")]
struct Tables {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
}

fn main() {}
