use table_model::TableEntity;

// Names from field names: `_private` and `r#type` (as `type`) are valid; `timestamp` is a system name.
// Non-ASCII letters are valid; a zero-width space is not an XML name character.
#[derive(TableEntity)]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: u32,
    _private: i32,
    r#type: String,
    timestamp: i64,
    #[table(rename = "Größe")]
    size: i32,
    #[table(rename = "a\u{200B}b")]
    zero_width: i32,
}

fn main() {}
