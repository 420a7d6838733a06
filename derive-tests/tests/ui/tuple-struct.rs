use table_model::TableEntity;

#[derive(TableEntity)]
struct Pair(String, String);

fn main() {}
