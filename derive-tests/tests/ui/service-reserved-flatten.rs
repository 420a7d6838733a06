use table_model::{TableEntity, TableProperties};

#[derive(TableProperties)]
struct Part {
    id: u32,
}

// `R` + `id` is `Rid`: each part is valid, the joined name is reserved by Cosmos DB.
#[derive(TableEntity)]
#[table(service = "cosmos")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    number: u32,
    #[table(flatten, prefix = "R")]
    part: Part,
}

fn main() {}
