use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    // An i32 as Int64 is lossless and allowed; an i64 as Int32 would lose data.
    #[table(edm = "Int64")]
    fine: i32,
    #[table(edm = "Int32")]
    big: i64,
}

fn main() {}
