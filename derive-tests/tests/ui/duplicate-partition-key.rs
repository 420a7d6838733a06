use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(partition_key)]
    region: String,
    #[table(row_key)]
    id: u32,
}

fn main() {}
