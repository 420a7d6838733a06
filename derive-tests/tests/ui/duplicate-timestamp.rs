use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(timestamp)]
    ts: Option<table_model::DateTime>,
    #[table(timestamp)]
    again: Option<table_model::DateTime>,
    #[table(etag)]
    etag: Option<table_model::ETag>,
    #[table(etag)]
    etag_again: Option<table_model::ETag>,
}

fn main() {}
