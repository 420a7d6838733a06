use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    total: f64,
}

fn main() {}
