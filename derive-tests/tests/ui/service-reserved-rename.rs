use table_model::TableEntity;

// Under "portable", a reserved name given by `rename`: the error points at the string.
#[derive(TableEntity)]
#[table(service = "portable")]
struct Device {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    #[table(rename = "ResourceID")]
    resource: String,
    #[table(json, rename = "RID")]
    tags: Vec<String>,
}

fn main() {}
