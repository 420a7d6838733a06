//! A struct stored as a table entity: `cargo run --example quickstart`.
//!
//! The derive checks every property name, both keys and the table name at compile time with the rules the
//! service enforces; the struct then converts to and from `Entity` and straight to and from the JSON the
//! service speaks.

use table_model::json::MetadataLevel;
use table_model::{DateTime, ETag, TableEntity, TableEnum, TableProperties};

#[derive(TableEnum, Debug, Clone, Copy, PartialEq)]
enum Status {
    Pending,
    Shipped,
}

#[derive(TableProperties, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Address {
    city: String,
    zip: String,
}

#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(name = "Orders", rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    // Newest first: the RowKey is `DateTime.MaxValue.Ticks - ticks`, 19 digits.
    #[table(row_key, reverse_chronological)]
    placed: chrono::DateTime<chrono::Utc>,
    total: f64,
    #[table(rename = "Qty")]
    quantity: i32,
    id: uuid::Uuid,
    note: Option<String>,
    status: Status,
    #[table(flatten, prefix = "Ship")] // ShipCity, ShipZip
    shipping: Address,
    #[table(json)] // stored as the JSON string `["gift"]`
    tags: Vec<String>,
    #[table(default)] // absent in rows written before the field existed
    added_later: i64,
    #[table(timestamp)]
    timestamp: Option<DateTime>,
    #[table(etag)]
    etag: Option<ETag>,
    #[table(skip)]
    cache: Vec<u8>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let order = Order {
        customer: "customer-42".into(),
        placed: chrono::DateTime::from_timestamp(1_715_950_000, 0).ok_or("timestamp")?,
        total: 99.5,
        quantity: 3,
        id: uuid::Uuid::from_u128(7),
        note: None,
        status: Status::Shipped,
        shipping: Address { city: "Oslo".into(), zip: "0150".into() },
        tags: vec!["gift".into()],
        added_later: 0,
        timestamp: None,
        etag: None,
        cache: Vec::new(),
    };

    // To and from a dynamic entity.
    let entity = order.to_entity()?;
    println!("PartitionKey={} RowKey={}", entity.partition_key(), entity.row_key());
    for (name, value) in &entity {
        println!("  {name} = {value:?}");
    }
    assert_eq!(Order::from_entity(entity)?, order);

    // Straight to the JSON body of an insert, and back from a response at any metadata level.
    let body = order.to_json()?;
    println!("{}", body.as_str());
    assert_eq!(Order::from_json(body.as_bytes())?, order);
    println!("Accept: {}", MetadataLevel::None.accept_header());

    // The static schema and typed property handles.
    println!("table {:?}, $select={}", Order::SCHEMA.table_name(), Order::SCHEMA.select());
    println!("the total is stored as {}", Order::PROPERTIES.total.name());
    Ok(())
}
