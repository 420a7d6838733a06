// Four fields of types the derive cannot store: exactly one error each, on the field's type, and nothing the
// generated code adds after it (a JSON field's type used to be reported once per generated function and bound,
// one of them on the derive itself).
use table_model::TableEntity;

struct Address {
    city: String,
}

#[derive(serde::Serialize)]
struct Tags(Vec<String>);

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    count: u64,
    size: Option<usize>,
    #[table(json)]
    address: Address,
    #[table(json)]
    tags: Tags,
}

fn main() {}
