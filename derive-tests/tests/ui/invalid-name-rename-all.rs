use table_model::TableEntity;

#[derive(TableEntity)]
#[table(rename_all = "kebab-case")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    unit_price: f64,
    // A single word has no `-`: fine.
    total: f64,
}

fn main() {}
