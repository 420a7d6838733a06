use table_model::{TableEntity, TableProperties};

#[derive(TableProperties)]
#[table(rename_all = "PascalCase")]
struct Part {
    key: String,
}

// In a generic struct the joined names are checked when the impl is used.
#[derive(TableEntity)]
struct Generic<T> {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    value: T,
    #[table(flatten, prefix = "Row")]
    row: Part,
}

fn main() {
    let g = Generic { customer: String::new(), id: 0, value: 1i32, row: Part { key: String::new() } };
    let _ = g.to_entity();
}
