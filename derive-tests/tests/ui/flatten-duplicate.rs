use table_model::{TableEntity, TableProperties};

#[derive(TableProperties)]
#[table(rename_all = "PascalCase")]
struct Address {
    city: String,
}

#[derive(TableEntity)]
#[table(rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    ship_city: String,
    #[table(flatten, prefix = "Ship")]
    shipping: Address,
}

fn main() {}
