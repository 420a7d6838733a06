use table_model::TableEntity;

#[derive(TableEntity)]
#[table(rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    row_key: String,
    #[table(rename = "timestamp")]
    when: i64,
    #[table(rename = "PARTITIONKEY")]
    shouting: bool,
}

fn main() {}
