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
    #[table(flatten)]
    shipping: Address,
}

fn main() {}
