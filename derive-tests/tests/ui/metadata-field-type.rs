use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(timestamp)]
    ts: i64,
    #[table(etag)]
    etag: String,
}

fn main() {}
