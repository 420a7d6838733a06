use table_model::TableEntity;

#[derive(TableEntity)]
#[table(rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    total: f64,
    #[table(rename = "Total")]
    grand_total: f64,
    #[table(json, rename = "Total")]
    totals: Vec<f64>,
}

fn main() {}
