//! A tour of table-model: `cargo run --example quickstart`.
//!
//! 1. A derived struct: the derive checks every property name, both keys and the table name at compile time
//!    with the rules the service enforces; the struct converts to and from `Entity` and straight to and from
//!    the JSON the service speaks.
//! 2. A dynamic `Entity` and its JSON request body.
//! 3. Reverse-chronological RowKeys (newest first) and the way back to their instants.
//! 4. The error a bad table name, property name, key and value each get, before anything is sent.

use table_model::json::MetadataLevel;
use table_model::key;
use table_model::{
    DateTime, ETag, EdmValue, Entity, PartitionKey, PropertyName, RowKey, TableEntity, TableEnum, TableName,
    TableProperties,
};

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

    // 1. To and from a dynamic entity.
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

    // 2. A dynamic entity, for data whose shape is known only at run time.
    let now = DateTime::try_from(chrono::Utc::now())?;
    let mut reading = Entity::new(PartitionKey::new("sensor-7")?, key::reverse_chronological(now));
    reading.insert(PropertyName::new("Celsius")?, 21.5)?;
    reading.insert(PropertyName::new("Samples")?, 1_000_000_000_000i64)?;
    reading.insert(PropertyName::new("Raw")?, vec![1u8, 2, 3, 4])?;
    reading.insert(PropertyName::new("TakenAt")?, now)?;
    let body = table_model::encode_entity(&reading)?;
    println!("\ndynamic entity, {} bytes by the size formula, body of {} bytes:", reading.size(), body.len());
    println!("{}", body.as_str());
    assert_eq!(table_model::decode_entity(body.as_bytes(), None)?, reading);

    // 3. Reverse-chronological keys: the service returns rows in key order, so the newest comes first.
    let times: Vec<DateTime> = ["2024-05-06T07:08:09.1234567Z", "2025-01-01T00:00:00Z", "1999-12-31T23:59:59Z"]
        .map(str::parse)
        .into_iter()
        .collect::<Result<_, _>>()?;
    let mut keys: Vec<RowKey> = times.iter().map(|&t| key::reverse_chronological(t)).collect();
    keys.sort();
    println!("\nreverse-chronological row keys, in the order the service returns them:");
    for row_key in &keys {
        println!("  {row_key} -> {}", key::parse_reverse_chronological(row_key)?);
    }

    // 4. What invalid input gets: a typed error naming the rule, the character and its position.
    println!("\nrefused before sending:");
    println!("  {}", "my-orders".parse::<TableName>().unwrap_err());
    println!("  {}", PropertyName::new("unit price").unwrap_err());
    println!("  {}", RowKey::new("2024/05/06").unwrap_err());
    println!("  {}", EdmValue::try_from("x".repeat(40_000)).unwrap_err());
    let early = chrono::DateTime::from_timestamp(-11_700_000_000, 0).ok_or("timestamp")?;
    println!("  {}", reading.insert(PropertyName::new("Installed")?, early).unwrap_err());
    Ok(())
}
