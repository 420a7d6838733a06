//! Request bodies to Azurite are ASCII (`docs/rules.md` §5.6): every other character as a `\u` escape, in
//! entity bodies and batch bodies; Azure Table Storage and Cosmos DB get raw UTF-8. Both decode to the same.
#![cfg(all(feature = "http", feature = "derive"))]

use table_model::json::decode_entity;
use table_model::{
    Batch, Entity, PartitionKey, RowKey, ServiceKind, TableEntity, TableService, UpdateMode, WriteEntity,
};

#[derive(TableEntity, Debug, PartialEq)]
#[table(partition_key = "pé")]
struct Note {
    #[table(row_key)]
    row: String,
    #[table(rename = "Název")]
    title: String,
}

fn azurite() -> TableService {
    TableService::from_connection_string("UseDevelopmentStorage=true").unwrap()
}

fn entity() -> Entity {
    Entity::new(PartitionKey::new("pé").unwrap(), RowKey::new("r😀").unwrap())
        .with("Text".parse().unwrap(), "Zoë \u{1}\"中😀")
        .unwrap()
}

#[test]
fn entity_bodies_to_azurite_are_ascii_and_mean_the_same() {
    let service = azurite();
    assert_eq!(service.service_kind(), ServiceKind::Azurite);
    let table = "Notes".parse().unwrap();
    let note = Note { row: "ж".into(), title: "čeština 𝄞".into() };
    let requests = [
        service.insert(&table, &entity()).unwrap(),
        service.upsert(&table, &entity(), UpdateMode::Merge).unwrap(),
        service.update(&table, &entity(), UpdateMode::Replace, table_model::IfMatch::Any).unwrap(),
        service.insert(&table, &note).unwrap(),
    ];
    for request in &requests[..3] {
        let body = request.body();
        assert!(body.is_ascii(), "{}", String::from_utf8_lossy(body));
        assert_eq!(decode_entity(body, None).unwrap(), entity());
    }
    let body = requests[3].body();
    assert_eq!(
        std::str::from_utf8(body).unwrap(),
        r#"{"PartitionKey":"p\u00e9","RowKey":"\u0436","N\u00e1zev":"\u010de\u0161tina \ud834\udd1e"}"#
    );
    assert_eq!(Note::from_json(body).unwrap(), note);
}

#[test]
fn entity_bodies_to_storage_and_cosmos_stay_utf8() {
    let table = "Notes".parse().unwrap();
    for kind in [ServiceKind::Storage, ServiceKind::CosmosDb] {
        let service = azurite().with_service_kind(kind);
        let body = service.insert(&table, &entity()).unwrap().into_body();
        let text = String::from_utf8(body).unwrap();
        assert!(text.contains(r#""RowKey":"r😀""#) && text.contains("Zoë"), "{text}");
    }
}

#[test]
fn batch_bodies_to_azurite_are_ascii() {
    let table: table_model::TableName = "Notes".parse().unwrap();
    let mut batch = Batch::new(table.clone(), PartitionKey::new("pé").unwrap());
    batch.insert(&entity()).unwrap();
    batch.upsert(&Note { row: "ж".into(), title: "𝄞".repeat(1000) }, UpdateMode::Replace).unwrap();
    batch.insert(&Note { row: "plain".into(), title: "ascii".into() }).unwrap();

    let escaped = azurite().batch(&batch).unwrap();
    let body = escaped.body();
    assert!(body.is_ascii());
    let text = std::str::from_utf8(body).unwrap();
    assert!(text.contains(r#""Text":"Zo\u00eb \u0001\"\u4e2d\ud83d\ude00""#), "{text}");
    assert!(text.contains(&r"\ud834\udd1e".repeat(1000)));
    // The entity addresses are percent-encoded, as ever.
    assert!(text.contains("PartitionKey='p%C3%A9',RowKey='%D0%B6'"), "{text}");

    let raw = azurite().with_service_kind(ServiceKind::Storage).batch(&batch).unwrap();
    let raw_text = std::str::from_utf8(raw.body()).unwrap();
    assert!(raw_text.contains("Zoë") && raw_text.contains(&"𝄞".repeat(1000)));
    // Only the escapes differ, by what each entity body grows in ASCII.
    let grows = |e: &dyn WriteEntity| {
        let body = e.encode().unwrap().into_body();
        body.clone().into_ascii().unwrap().len() - body.len()
    };
    let note = Note { row: "ж".into(), title: "𝄞".repeat(1000) };
    // `pé` and `Název` are in every Note body, ASCII title or not.
    let plain = Note { row: "plain".into(), title: "ascii".into() };
    assert_eq!(grows(&plain), 2 * (6 - 2));
    assert_eq!(body.len() - raw.body().len(), grows(&entity()) + grows(&note) + grows(&plain));
}
