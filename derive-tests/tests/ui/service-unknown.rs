use table_model::{TableEntity, TableProperties};

#[derive(TableEntity)]
#[table(service = "cosmosdb")]
struct A {
    #[table(partition_key)]
    pk: String,
    #[table(row_key)]
    rk: String,
}

#[derive(TableEntity)]
#[table(service = "Storage")]
struct B {
    #[table(partition_key)]
    pk: String,
    #[table(row_key)]
    rk: String,
}

#[derive(TableEntity)]
#[table(service)]
struct C {
    #[table(partition_key)]
    pk: String,
    #[table(row_key)]
    rk: String,
}

// The service is the entity's: a flattened struct takes the rules of the entity that flattens it.
#[derive(TableProperties)]
#[table(service = "cosmos")]
struct D {
    value: String,
}

#[derive(TableEntity)]
#[table(service = "cosmos", service = "portable")]
struct E {
    #[table(partition_key)]
    pk: String,
    #[table(row_key)]
    rk: String,
}

fn main() {}
