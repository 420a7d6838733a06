use table_model::TableEntity;

#[derive(TableEntity)]
struct Event {
    #[table(partition_key, reverse_chronological)]
    source: String,
    #[table(row_key)]
    id: u32,
    #[table(reverse_chronological)]
    at: chrono::DateTime<chrono::Utc>,
}

fn main() {}
