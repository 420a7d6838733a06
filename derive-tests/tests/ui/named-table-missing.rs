// A struct without #[table(name = "...")] names no table: asking for it (as `TableServiceClient::table_for`
// does) fails the build, on the struct.
use table_model::{NamedTable, TableEntity, TableName};

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
}

fn table_of<T: NamedTable>() -> TableName {
    T::TABLE_NAME
}

fn main() {
    let _ = table_of::<Order>();
}
