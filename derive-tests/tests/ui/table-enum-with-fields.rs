use table_model::TableEnum;

#[derive(TableEnum)]
#[table(rename_all = "lowercase")]
enum Status {
    Pending,
    Shipped { carrier: String },
    Lost(u32),
    #[table(rename = "pending")]
    Waiting,
}

#[derive(TableEnum)]
struct NotAnEnum {
    x: i32,
}

fn main() {}
