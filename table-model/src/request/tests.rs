use super::*;
use crate::connection::{AccountKey, SasToken};
use crate::entity::Entity;
use crate::filter::{Filter, PARTITION_KEY};
use std::time::{Duration, UNIX_EPOCH};

fn service() -> TableService {
    TableService::from_connection_string("UseDevelopmentStorage=true")
        .unwrap()
        .at_time(UNIX_EPOCH + Duration::from_secs(1_795_306_922))
}

fn table() -> TableName {
    TableName::new("People").unwrap()
}

fn entity(pk: &str, rk: &str) -> Entity {
    Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap()).with("Age".parse().unwrap(), 36).unwrap()
}

fn header<'a>(r: &'a Request<Vec<u8>>, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}

/// Headers every request carries.
fn assert_common(r: &Request<Vec<u8>>, accept: &str) {
    assert_eq!(header(r, "x-ms-version"), Some("2019-02-02"));
    assert_eq!(header(r, "x-ms-date"), Some("Sun, 22 Nov 2026 00:22:02 GMT"));
    assert_eq!(header(r, "dataserviceversion"), Some("3.0"));
    assert_eq!(header(r, "maxdataserviceversion"), Some("3.0;NetFx"));
    assert_eq!(header(r, "accept"), Some(accept));
    assert!(header(r, "authorization").unwrap().starts_with("SharedKey devstoreaccount1:"));
    assert_eq!(header(r, "content-type").is_some(), !r.body().is_empty());
}

const MINIMAL: &str = "application/json;odata=minimalmetadata";

#[test]
fn insert() {
    let e = entity("eu", "a");
    let r = service().insert(&table(), &e).unwrap();
    assert_common(&r, MINIMAL);
    assert_eq!(r.method(), "POST");
    assert_eq!(r.uri(), "http://127.0.0.1:10002/devstoreaccount1/People");
    assert_eq!(header(&r, "content-type"), Some("application/json"));
    assert_eq!(header(&r, "prefer"), Some("return-no-content"));
    assert_eq!(header(&r, "if-match"), None);
    assert_eq!(r.body(), br#"{"PartitionKey":"eu","RowKey":"a","Age":36}"#);
    // The signature over "POST\n\napplication/json\n<date>\n/devstoreaccount1/devstoreaccount1/People", computed
    // independently with Python's hmac (see auth.rs).
    assert_eq!(
        header(&r, "authorization"),
        Some("SharedKey devstoreaccount1:qfFm4Kqz/HzdFs1uc3U2RJtGeW2P42OPg6r1W/a3IO4=")
    );
}

#[test]
fn upsert_and_update_differ_only_by_precondition() {
    let e = entity("eu", "O'Brien 50%");
    let path = "http://127.0.0.1:10002/devstoreaccount1/People(PartitionKey='eu',RowKey='O%27%27Brien%2050%25')";
    for (mode, method) in [(UpdateMode::Merge, "MERGE"), (UpdateMode::Replace, "PUT")] {
        let up = service().upsert(&table(), &e, mode).unwrap();
        assert_common(&up, MINIMAL);
        assert_eq!((up.method().as_str(), up.uri().to_string().as_str()), (method, path));
        assert_eq!(header(&up, "if-match"), None);
        assert_eq!(header(&up, "prefer"), None);

        let etag = ETag::new("W/\"datetime'2024-01-02T03%3A04%3A05.1234567Z'\"");
        let upd = service().update(&table(), &e, mode, IfMatch::from(&etag)).unwrap();
        assert_common(&upd, MINIMAL);
        assert_eq!((upd.method().as_str(), upd.uri().to_string().as_str()), (method, path));
        assert_eq!(header(&upd, "if-match"), Some(etag.as_str()));
        assert_eq!(upd.body(), up.body());
        let any = service().update(&table(), &e, mode, IfMatch::Any).unwrap();
        assert_eq!(header(&any, "if-match"), Some("*"));
    }
}

#[test]
fn delete_and_get() {
    let pk = PartitionKey::new("").unwrap();
    let rk = RowKey::new("a+b").unwrap();
    let d = service().delete(&table(), &pk, &rk, IfMatch::Any).unwrap();
    assert_common(&d, MINIMAL);
    assert_eq!(d.method(), "DELETE");
    assert_eq!(d.uri(), "http://127.0.0.1:10002/devstoreaccount1/People(PartitionKey='',RowKey='a%2Bb')");
    assert_eq!(header(&d, "if-match"), Some("*"));
    let g = service().with_metadata(MetadataLevel::Full).get(&table(), &pk, &rk).unwrap();
    assert_common(&g, "application/json;odata=fullmetadata");
    assert_eq!(g.method(), "GET");
    assert_eq!(g.uri().path(), "/devstoreaccount1/People(PartitionKey='',RowKey='a%2Bb')");
    let bad = IfMatch::ETag(ETag::new("W/\"x\"\n"));
    let err = service().delete(&table(), &pk, &rk, bad).unwrap_err();
    assert_eq!(err.kind(), &RequestErrorKind::InvalidETag { etag: "W/\"x\"\n".into() });
}

#[test]
fn query_parameters_are_encoded() {
    let q = Query::new().filter(PARTITION_KEY.eq("a&b") & Filter::property("N").ge(5i64)).select(["N"]).top(3);
    let r = service().with_metadata(MetadataLevel::None).query(&table(), &q, None).unwrap();
    assert_common(&r, "application/json;odata=nometadata");
    assert_eq!(
        r.uri(),
        "http://127.0.0.1:10002/devstoreaccount1/People()?$filter=PartitionKey%20eq%20%27a%26b%27%20and%20N%20ge%205L&$select=PartitionKey%2CRowKey%2CN&$top=3"
    );
    let c = Continuation::new("1!8!cGsx", Some("1!12!cm93+/=".into()));
    let r = service().query(&table(), &Query::new(), Some(&c)).unwrap();
    assert_eq!(
        r.uri(),
        "http://127.0.0.1:10002/devstoreaccount1/People()?NextPartitionKey=1%218%21cGsx&NextRowKey=1%2112%21cm93%2B%2F%3D"
    );
    // Only the path is signed: the same signature with or without the query.
    let plain = service().query(&table(), &Query::new(), None).unwrap();
    assert_eq!(header(&r, "authorization"), header(&plain, "authorization"));
}

#[test]
fn tables() {
    let s = service();
    let c = s.create_table(&table()).unwrap();
    assert_common(&c, MINIMAL);
    assert_eq!((c.method().as_str(), c.uri().path()), ("POST", "/devstoreaccount1/Tables"));
    assert_eq!(c.body(), br#"{"TableName":"People"}"#);
    assert_eq!(header(&c, "prefer"), Some("return-no-content"));
    let d = s.delete_table(&table()).unwrap();
    assert_eq!((d.method().as_str(), d.uri().path()), ("DELETE", "/devstoreaccount1/Tables('People')"));
    let l = s.list_tables(&Query::new().top(2), Some(&TableContinuation::new("1!8!VGFi"))).unwrap();
    assert_eq!(l.uri(), "http://127.0.0.1:10002/devstoreaccount1/Tables?$top=2&NextTableName=1%218%21VGFi");
    let analytics = TableName::analytics("$MetricsCapacityBlob").unwrap();
    assert_eq!(
        s.create_table(&analytics).unwrap_err().to_string(),
        "invalid table name: `$MetricsCapacityBlob` is a Storage Analytics table, which cannot be created"
    );
}

#[test]
fn credentials() {
    let endpoint = Endpoint::azure("acme").unwrap();
    let sas = TableService::new(endpoint.clone(), Credential::Sas(SasToken::new("sv=2019-02-02&sig=x%3D").unwrap()));
    let r = sas.query(&table(), &Query::new().top(1), None).unwrap();
    assert_eq!(r.uri(), "https://acme.table.core.windows.net/People()?$top=1&sv=2019-02-02&sig=x%3D");
    assert_eq!(header(&r, "authorization"), None);
    let lite = TableService::new(endpoint, Credential::SharedKeyLite(AccountKey::development()));
    let r = lite.get(&table(), &PartitionKey::new("p").unwrap(), &RowKey::new("r").unwrap()).unwrap();
    assert!(header(&r, "authorization").unwrap().starts_with("SharedKeyLite acme:"));
}

#[test]
fn oversized_entities_are_refused_before_sending() {
    // 16 binaries of 48 KiB fit the size formula (about 787 KB) but not 1 MiB of JSON (base64 is 4/3).
    let mut e = entity("p", "r");
    for i in 0..16 {
        e.insert(format!("B{i}").parse().unwrap(), vec![0u8; 48 * 1024]).unwrap();
    }
    let Err(err) = service().insert(&table(), &e) else { panic!("an oversized body was accepted") };
    assert!(matches!(err.kind(), RequestErrorKind::Encode(_)), "{err}");
}

/// The refusals of Cosmos DB for Table's rules (`docs/rules.md` §13.1), each with the service the value was
/// for, and the acceptance of the same values by Azure Table Storage and Azurite.
mod cosmos_rules {
    use super::*;
    use crate::{KeyKind, RuleSet, RuleSetErrorKind};

    fn cosmos() -> TableService {
        service().with_service_kind(ServiceKind::CosmosDb)
    }

    fn refusal(result: Result<Request<Vec<u8>>, RequestError>) -> (RuleSetErrorKind, String, String) {
        let err = result.unwrap_err();
        let RequestErrorKind::ServiceRule { error, value } = err.kind() else { panic!("{err}") };
        assert_eq!(error.rules(), RuleSet::CosmosDb);
        (error.kind(), value.clone(), err.to_string())
    }

    fn too_long(key: KeyKind, utf8_len: usize) -> RuleSetErrorKind {
        let max = if key == KeyKind::Row { 255 } else { 1024 };
        RuleSetErrorKind::KeyTooLong { key, utf8_len, max }
    }

    /// Every builder that writes an entity, for one service.
    fn writes(s: &TableService, e: &impl WriteEntity) -> Vec<Result<Request<Vec<u8>>, RequestError>> {
        vec![
            s.insert(&table(), e),
            s.upsert(&table(), e, UpdateMode::Merge),
            s.upsert(&table(), e, UpdateMode::Replace),
            s.update(&table(), e, UpdateMode::Merge, IfMatch::Any),
            s.update(&table(), e, UpdateMode::Replace, IfMatch::Any),
        ]
    }

    /// Every builder addressed by keys, for one service.
    fn addressed(s: &TableService, pk: &str, rk: &str) -> Vec<Result<Request<Vec<u8>>, RequestError>> {
        let (pk, rk) = (PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
        vec![s.get(&table(), &pk, &rk), s.delete(&table(), &pk, &rk, IfMatch::Any)]
    }

    #[test]
    fn row_key_of_256_utf8_bytes() {
        // 128 two-byte characters: 128 UTF-16 code units, far under Storage's 512, but 256 bytes of UTF-8.
        let rk = "é".repeat(128);
        let e = entity("p", &rk);
        for result in writes(&cosmos(), &e).into_iter().chain(addressed(&cosmos(), "p", &rk)) {
            let (kind, value, message) = refusal(result);
            assert_eq!((kind, value.as_str()), (too_long(KeyKind::Row, 256), rk.as_str()));
            assert!(message.starts_with("invalid row key \"éé"), "{message}");
            assert!(
                message.ends_with(" for Cosmos DB for Table: 256 bytes of UTF-8, at most 255 allowed"),
                "{message}"
            );
        }
        // One byte less is taken.
        let rk = format!("{}a", "é".repeat(127));
        assert!(writes(&cosmos(), &entity("p", &rk)).into_iter().all(|r| r.is_ok()));
        assert!(addressed(&cosmos(), "p", &rk).into_iter().all(|r| r.is_ok()));
    }

    #[test]
    fn partition_key_of_1025_bytes() {
        // 342 UTF-16 code units (keys hold 512), 1,025 bytes of UTF-8.
        let pk = format!("{}é", "€".repeat(341));
        assert_eq!(pk.len(), 1025);
        let e = entity(&pk, "r");
        for result in writes(&cosmos(), &e).into_iter().chain(addressed(&cosmos(), &pk, "r")) {
            let (kind, value, message) = refusal(result);
            assert_eq!((kind, value), (too_long(KeyKind::Partition, 1025), pk.clone()));
            assert!(
                message.ends_with(" for Cosmos DB for Table: 1025 bytes of UTF-8, at most 1024 allowed"),
                "{message}"
            );
        }
        let pk = format!("{}a", "€".repeat(341));
        assert!(writes(&cosmos(), &entity(&pk, "r")).into_iter().all(|r| r.is_ok()));
        assert!(addressed(&cosmos(), &pk, "r").into_iter().all(|r| r.is_ok()));
    }

    #[test]
    fn reserved_property_names() {
        for (name, reserved) in
            [("ID", "ID"), ("id", "ID"), ("Rid", "rid"), ("ETag", "etag"), ("resourceID", "ResourceId")]
        {
            let e = entity("p", "r").with(name.parse().unwrap(), "v").unwrap();
            for result in writes(&cosmos(), &e) {
                let (kind, value, message) = refusal(result);
                assert_eq!((kind, value.as_str()), (RuleSetErrorKind::ReservedPropertyName { reserved }, name));
                assert_eq!(
                    message,
                    format!(
                        "invalid property name \"{name}\" for Cosmos DB for Table: matches the reserved name \
                         `{reserved}` (Cosmos DB for Table reserves ID, rid, etag and ResourceId, in any case)"
                    )
                );
            }
        }
    }

    #[test]
    fn storage_and_azurite_take_the_same_values() {
        let pk = format!("{}é", "€".repeat(341));
        let rk = "é".repeat(128);
        let e = Entity::new(PartitionKey::new(&pk).unwrap(), RowKey::new(&rk).unwrap())
            .with("ID".parse().unwrap(), 1)
            .unwrap()
            .with("ResourceId".parse().unwrap(), "x")
            .unwrap();
        let storage = TableService::new(Endpoint::azure("acct").unwrap(), Credential::Anonymous);
        assert_eq!(storage.service_kind(), ServiceKind::Storage);
        for s in [storage, service()] {
            assert!(writes(&s, &e).into_iter().chain(addressed(&s, &pk, &rk)).all(|r| r.is_ok()));
        }
    }

    #[cfg(feature = "derive")]
    #[derive(crate::TableEntity)]
    struct Item {
        #[table(partition_key)]
        pk: String,
        #[table(row_key)]
        rk: String,
        #[table(rename = "ResourceId")]
        resource: String,
    }

    #[cfg(feature = "derive")]
    #[test]
    fn derived_structs_are_checked_alike() {
        let item = Item { pk: "p".into(), rk: "r".into(), resource: "x".into() };
        for result in writes(&cosmos(), &item) {
            let (kind, value, _) = refusal(result);
            assert_eq!(
                (kind, value.as_str()),
                (RuleSetErrorKind::ReservedPropertyName { reserved: "ResourceId" }, "ResourceId")
            );
        }
        let long = Item { pk: "p".into(), rk: "€".repeat(86), resource: "x".into() };
        for result in writes(&cosmos(), &long) {
            assert_eq!(refusal(result).0, too_long(KeyKind::Row, 258));
        }
        assert!(writes(&service(), &item).into_iter().chain(writes(&service(), &long)).all(|r| r.is_ok()));
    }
}
