use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(rename = "unit-price")]
    price: f64,
    #[table(rename = "2fast")]
    speed: f64,
    #[table(rename = "")]
    nothing: bool,
}

fn main() {}
