use table_model::TableEntity;

#[derive(TableEntity)]
#[table(rename_all = "Pascalcase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
}

#[derive(TableEntity)]
#[table(rename_all = "Title Case")]
struct Other {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
}

fn main() {}
