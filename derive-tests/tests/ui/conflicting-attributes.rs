use table_model::TableEntity;

#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    #[table(skip, rename = "Cache")]
    cache: Vec<u8>,
    #[table(json, flatten)]
    tags: Vec<String>,
    #[table(partition_key, row_key)]
    both: String,
    #[table(flatten, rename = "Ship")]
    shipping: Vec<String>,
    #[table(json, edm = "String")]
    notes: Vec<String>,
    #[table(prefix = "X")]
    plain: i32,
}

fn main() {}
