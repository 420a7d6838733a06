use table_model::{TableEntity, TableEnum, TableProperties};

#[derive(TableEnum, Debug, PartialEq)]
enum Status { Pending, Shipped }

#[derive(TableProperties, Debug, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Address { city: String, zip: String }

#[derive(TableEntity, Debug, PartialEq)]
#[table(name = "Orders", rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key, reverse_chronological)]
    placed: chrono::DateTime<chrono::Utc>,
    total: f64,
    #[table(rename = "Qty")]
    quantity: i32,
    note: Option<String>,
    status: Status,
    #[table(flatten, prefix = "Ship")]
    shipping: Address,
    #[table(json)]
    tags: Vec<String>,
    #[table(default)]
    added_later: i64,
    #[table(edm = "Int64")]
    small: i32,
    #[table(timestamp)]
    ts: Option<table_model::DateTime>,
    #[table(etag)]
    etag: Option<table_model::ETag>,
    #[table(skip)]
    cache: Vec<u8>,
}

#[test]
fn smoke() {
    let order = Order {
        customer: "c1".into(), placed: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(), total: 1.5,
        quantity: 2, note: None, status: Status::Shipped,
        shipping: Address { city: "Oslo".into(), zip: "0150".into() }, tags: vec!["a".into()], added_later: 0,
        small: 7, ts: None, etag: None, cache: vec![],
    };
    let e = order.to_entity().unwrap();
    println!("{e:?}");
    assert_eq!(Order::from_entity(e).unwrap(), order);
    println!("{}", Order::SCHEMA.select());
}
