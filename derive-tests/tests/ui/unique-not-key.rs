use table_model::TableEntity;

#[derive(TableEntity)]
#[table(unique)]
struct Event {
    #[table(partition_key)]
    source: String,
    #[table(row_key, reverse_chronological, uniqe)]
    at: chrono::DateTime<chrono::Utc>,
    #[table(unique)]
    seen: chrono::DateTime<chrono::Utc>,
    #[table(json, unique)]
    tags: Vec<String>,
    #[table(timestamp, unique = true)]
    ts: Option<table_model::DateTime>,
}

fn main() {}
