use table_model::TableEntity;

#[derive(TableEntity)]
struct Event {
    #[table(partition_key, unique)]
    source: String,
    #[table(row_key, reverse_chronological, unique)]
    id: u64,
}

fn main() {}
