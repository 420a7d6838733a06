use table_model::TableEntity;

// Every problem of a struct is reported in one build.
#[derive(TableEntity)]
#[table(name = "x", rename_all = "camelCase")]
struct Order {
    #[table(rwo_key)]
    id: u32,
    unit_price: f64,
    #[table(rename = "unit-price")]
    price: f64,
    #[table(rename = "unitPrice")]
    price_again: f64,
}

// The derive's stub impl keeps the rest of the crate quiet: no error for this use.
fn use_it(order: &Order) -> Result<table_model::Entity, table_model::EntityError> {
    order.to_entity()
}

fn main() {}
