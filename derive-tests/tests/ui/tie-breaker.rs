use table_model::{TableEntity, TableProperties};

#[derive(TableEntity)]
struct NotUnique {
    #[table(partition_key)]
    source: String,
    #[table(row_key, reverse_chronological)]
    at: chrono::DateTime<chrono::Utc>,
    #[table(tie_breaker)]
    seq: u32,
}

#[derive(TableEntity)]
struct Twice {
    #[table(partition_key)]
    source: String,
    #[table(row_key, unique)]
    at: table_model::DateTime,
    #[table(tie_breaker)]
    seq: u32,
    #[table(tie_breaker, rename = "Seq")]
    again: u32,
}

#[derive(TableProperties)]
struct Group {
    #[table(tie_breaker)]
    seq: u32,
}

fn main() {}
