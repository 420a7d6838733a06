use table_model::TableEntity;

// `rename_all` makes `Id` of `id` and `ETag` of `e_tag`: both reserved by Cosmos DB.
#[derive(TableEntity)]
#[table(service = "cosmos", rename_all = "PascalCase")]
struct Device {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    id: u32,
    e_tag: String,
    // The ETag the entity was read with is metadata, not a property: fine.
    #[table(etag)]
    version: Option<table_model::ETag>,
}

fn main() {}
