use table_model::TableEntity;

#[derive(TableEntity)]
#[table(partition_key = "orders", row_key = "latest")]
struct Order {
    #[table(row_key)]
    id: u32,
}

fn main() {}
