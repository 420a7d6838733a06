use table_model::{TableEntity, TableProperties};

#[derive(TableProperties)]
#[table(rename_all = "PascalCase")]
struct Part {
    key: String,
}

// A generic struct's joined names are checked where it is defined, used or not, when the flattened types do not
// depend on its parameters (only a property's type does here).
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

fn main() {}
