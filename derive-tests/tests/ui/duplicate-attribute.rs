use table_model::TableEntity;

#[derive(TableEntity)]
#[table(name = "Orders")]
#[table(name = "Orders2")]
struct Order {
    #[table(partition_key, partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(rename = "A", rename = "B")]
    total: f64,
}

fn main() {}
