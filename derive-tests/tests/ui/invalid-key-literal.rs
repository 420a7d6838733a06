use table_model::TableEntity;

#[derive(TableEntity)]
#[table(partition_key = "eu/west", row_key = "what?")]
struct Setting {
    value: String,
}

fn main() {}
