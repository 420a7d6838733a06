use table_model::TableEntity;

#[derive(TableEntity)]
#[table(nmae = "Orders", deny_unknown_fields)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(rwo_key)]
    id: u32,
    #[table(flaten)]
    total: f64,
    #[table(banana = 1)]
    count: i32,
}

fn main() {}
