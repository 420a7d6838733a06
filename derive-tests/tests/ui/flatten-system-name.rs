use table_model::{TableEntity, TableProperties};

#[derive(TableProperties)]
#[table(rename_all = "PascalCase")]
struct Part {
    key: String,
}

// `Row` + `Key` is `RowKey`: each part is valid, the joined name is a system property.
#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(flatten, prefix = "Row")]
    row: Part,
}

fn main() {}
