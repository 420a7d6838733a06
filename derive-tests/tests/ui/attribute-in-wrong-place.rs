use table_model::TableEntity;

#[derive(TableEntity)]
#[table(rename = "Order", partition_key)]
struct Order {
    #[table(name = "Orders")]
    #[table(partition_key)]
    customer: String,
    #[table(row_key = "x")]
    id: u32,
}

fn main() {}
