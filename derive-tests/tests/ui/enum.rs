use table_model::TableEntity;

#[derive(TableEntity)]
enum Status {
    Pending,
    Shipped,
}

fn main() {}
