use table_model::TableEntity;

// Cosmos DB reserves `ID`, `rid`, `etag` and `ResourceId` in any case: field names that are those names.
#[derive(TableEntity)]
#[table(service = "cosmos")]
struct Device {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    id: u32,
    rid: String,
    etag: String,
    // Not reserved: only the exact names are.
    ids: Vec<u8>,
    resource: String,
}

fn main() {}
