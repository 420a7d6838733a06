use std::collections::HashMap;
use table_model::TableEntity;

struct Address {
    city: String,
}

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    count: u64,
    size: usize,
    huge: i128,
    tags: HashMap<String, String>,
    address: Address,
}

fn main() {}
