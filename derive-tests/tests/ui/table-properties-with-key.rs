use table_model::TableProperties;

#[derive(TableProperties)]
#[table(name = "Addresses", partition_key = "x")]
struct Address {
    #[table(row_key)]
    id: String,
    #[table(timestamp)]
    ts: Option<table_model::DateTime>,
    city: String,
}

fn main() {}
