// `#[table(service = "...")]`: the same names are fine under "storage" (and by default), and a "cosmos" or
// "portable" struct without reserved names builds and round-trips.
use table_model::{RuleSet, TableEntity, TableProperties};

#[derive(TableEntity, Debug, PartialEq)]
#[table(service = "storage", rename_all = "PascalCase")]
struct OnStorage {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    id: u32,
    e_tag: String,
    #[table(rename = "rid")]
    r: String,
    resource_id: Option<String>,
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(rename_all = "PascalCase")]
struct ByDefault {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    id: u32,
}

#[derive(TableProperties, Debug, PartialEq)]
struct Part {
    id: u32,
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(service = "cosmos", rename_all = "PascalCase")]
struct OnCosmos {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    device_id: u32,
    ids: Vec<u8>,
    #[table(etag)]
    etag: Option<table_model::ETag>,
    #[table(flatten, prefix = "Part")]
    part: Part,
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(service = "portable", partition_key = "p")]
struct Portable {
    #[table(row_key)]
    serial: String,
    identity: String,
}

fn main() {
    assert_eq!(OnStorage::SCHEMA.rules(), RuleSet::Storage);
    assert_eq!(ByDefault::SCHEMA.rules(), RuleSet::Storage);
    assert_eq!(OnCosmos::SCHEMA.rules(), RuleSet::CosmosDb);
    assert_eq!(Portable::SCHEMA.rules(), RuleSet::Portable);

    let s = OnStorage {
        site: "s".into(),
        serial: "1".into(),
        id: 7,
        e_tag: "x".into(),
        r: "y".into(),
        resource_id: None,
    };
    let e = s.to_entity().unwrap();
    assert!(e.value("Id").is_some() && e.value("ETag").is_some() && e.value("rid").is_some());
    assert_eq!(OnStorage::from_entity(e).unwrap(), s);

    let c = OnCosmos {
        site: "s".into(),
        serial: "1".into(),
        device_id: 7,
        ids: vec![1, 2],
        etag: None,
        part: Part { id: 3 },
    };
    let json = c.to_json().unwrap();
    assert!(json.as_str().contains(r#""Partid":"3""#), "{}", json.as_str());
    assert_eq!(OnCosmos::from_json(json.as_bytes()).unwrap(), c);
    assert_eq!(OnCosmos::from_entity(c.to_entity().unwrap()).unwrap(), c);
    for name in OnCosmos::SCHEMA.properties() {
        assert!(RuleSet::CosmosDb.check_property_name(name.name()).is_ok(), "{}", name.name());
    }

    let p = Portable { serial: "1".into(), identity: "me".into() };
    assert_eq!(Portable::from_json(p.to_json().unwrap().as_bytes()).unwrap(), p);
}
