use table_model::TableEntity;

#[derive(TableEntity)]
struct Reading {
    #[table(partition_key)]
    sensor: f64,
    #[table(row_key, reverse_chronological)]
    at: u64,
}

fn main() {}
