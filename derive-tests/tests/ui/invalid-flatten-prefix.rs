use table_model::{TableEntity, TableProperties};

#[derive(TableProperties)]
struct Address {
    city: String,
}

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(flatten, prefix = "ship-to")]
    shipping: Address,
    #[table(flatten, prefix = "9")]
    billing: Address,
}

fn main() {}
