use table_model::TableEntity;

#[derive(TableEntity)]
struct Nothing;

fn main() {}
