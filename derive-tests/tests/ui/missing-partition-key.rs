use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(row_key)]
    id: u32,
    total: f64,
}

fn main() {}
