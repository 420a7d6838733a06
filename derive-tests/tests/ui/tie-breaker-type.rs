use table_model::TableEntity;

#[derive(TableEntity)]
struct Event {
    #[table(partition_key)]
    source: String,
    #[table(row_key, unique)]
    at: table_model::DateTime,
    #[table(tie_breaker)]
    seq: u64,
}

fn main() {}
