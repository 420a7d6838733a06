use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(edm = "Decimal")]
    price: f64,
    #[table(edm = "int64")]
    count: i32,
}

fn main() {}
