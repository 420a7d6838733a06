//! `#[table(unique)]` time keys: keys of one tick that differ, sort by instant, stay the same for a struct value
//! and read back; and `#[table(tie_breaker)]`.

use table_model::json::{decode_entity, encode_entity};
use table_model::key::{self, SortableKey};
use table_model::{DateTime, Entity, KeyEncoding, KeySource, PartitionKey, RowKey, TableEntity, WriteEntity};

/// A log line, newest first; the tie-breaker comes from the properties.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Event {
    #[table(partition_key)]
    source: String,
    #[table(row_key, reverse_chronological, unique)]
    at: chrono::DateTime<chrono::Utc>,
    message: String,
    level: Option<i32>,
}

/// Oldest first, `table_model::DateTime`.
#[derive(TableEntity, Debug, Clone, PartialEq)]
struct Reading {
    #[table(partition_key)]
    sensor: String,
    #[table(row_key, unique)]
    at: DateTime,
    value: f64,
}

/// A unique partition key, and a tie-breaker kept in a field.
#[derive(TableEntity, Debug, Clone, PartialEq)]
struct Job {
    #[table(partition_key, unique)]
    queued: DateTime,
    #[table(row_key)]
    name: String,
    #[table(tie_breaker)]
    seq: u32,
}

/// Newest first, the tie-breaker in a field.
#[derive(TableEntity, Debug, Clone, PartialEq)]
struct Audit {
    #[table(tie_breaker)]
    seq: u32,
    #[table(partition_key)]
    user: String,
    #[table(row_key, reverse_chronological, unique)]
    at: DateTime,
    action: String,
}

fn tick(ticks: i64) -> DateTime {
    DateTime::from_ticks(ticks).unwrap()
}

/// 2024-01-01T00:00:00Z in .NET ticks.
const T0: i64 = 638_396_640_000_000_000;

fn event(ticks: i64, message: &str) -> Event {
    Event { source: "api".into(), at: tick(ticks).to_chrono(), message: message.into(), level: Some(3) }
}

fn row_key(value: &impl TableEntity) -> RowKey {
    value.to_entity().unwrap().row_key().clone()
}

#[test]
fn events_of_one_tick_get_different_keys() {
    let (a, b) = (event(T0, "started"), event(T0, "stopped"));
    let (ka, kb) = (row_key(&a), row_key(&b));
    assert_ne!(ka, kb);
    assert_eq!(ka.len(), 30);
    // Both hold the instant; only the tie-breaker differs.
    let ((ta, _), (tb, _)) =
        (key::parse_reverse_chronological_unique(&ka).unwrap(), key::parse_reverse_chronological_unique(&kb).unwrap());
    assert_eq!((ta, tb), (tick(T0), tick(T0)));
    let ticks = key::reverse_chronological::<RowKey, _>(tick(T0));
    assert!(ka.starts_with(&format!("{ticks}-")) && kb.starts_with(&format!("{ticks}-")), "{ka} {kb}");
    // Many events in one tick: all distinct.
    let keys: std::collections::HashSet<RowKey> = (0..2000).map(|i| row_key(&event(T0, &format!("e{i}")))).collect();
    assert_eq!(keys.len(), 2000);
}

#[test]
fn reverse_keys_sort_newest_first() {
    let events: Vec<Event> = [
        (T0, "a"),
        (T0 + 1, "b"),
        (T0 + 1, "c"),
        (T0 - 1, "d"),
        (T0 + 10_000_000, "e"),
        (DateTime::MAX.ticks(), "f"),
        (DateTime::MIN.ticks(), "g"),
    ]
    .iter()
    .map(|(t, m)| event(*t, m))
    .collect();
    let mut keyed: Vec<(RowKey, chrono::DateTime<chrono::Utc>)> = events.iter().map(|e| (row_key(e), e.at)).collect();
    keyed.sort();
    let instants: Vec<_> = keyed.iter().map(|(_, at)| *at).collect();
    let mut newest_first = instants.clone();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(instants, newest_first);
    assert!(keyed.windows(2).all(|w| w[0].0 < w[1].0), "keys are distinct: {keyed:?}");
}

#[test]
fn chronological_keys_sort_oldest_first() {
    let readings: Vec<Reading> = [T0 + 5, T0, T0, T0 - 3, T0 + 5]
        .iter()
        .enumerate()
        .map(|(i, t)| Reading { sensor: "s1".into(), at: tick(*t), value: i as f64 })
        .collect();
    let mut keys: Vec<RowKey> = readings.iter().map(row_key).collect();
    keys.sort();
    let instants: Vec<i64> = keys.iter().map(|k| key::parse_chronological_unique(k).unwrap().0.ticks()).collect();
    assert_eq!(instants, [T0 - 3, T0, T0, T0 + 5, T0 + 5]);
    keys.dedup();
    assert_eq!(keys.len(), 5);
    assert!(keys[0].starts_with(&tick(T0 - 3).to_key_string()));
}

#[test]
fn the_key_of_a_struct_value_is_stable() {
    let e = event(T0, "started");
    let key = row_key(&e);
    // to_entity, to_json and the request encoding agree, call after call.
    assert_eq!(row_key(&e), key);
    assert_eq!(e.clone().encode().unwrap().row_key(), key.as_str());
    assert_eq!(e.to_json().unwrap(), encode_entity(&e.to_entity().unwrap()).unwrap());
    // Read back and written again: the same key, so get, update and delete by the struct reach the entity.
    let read = Event::from_entity(e.to_entity().unwrap()).unwrap();
    assert_eq!(read, e);
    assert_eq!(row_key(&read), key);
    let read = Event::from_json(e.to_json().unwrap().as_bytes()).unwrap();
    assert_eq!(read, e);
    assert_eq!(read.encode().unwrap().row_key(), key.as_str());
    // The key is a function of the stored value: fixed across processes and builds (keys are stored). A change
    // here breaks every key written before it.
    assert_eq!(key.as_str(), PINNED_EVENT_KEY);
    // Equal values share the key; another property, another key.
    assert_eq!(row_key(&event(T0, "started")), key);
    assert_ne!(row_key(&Event { level: None, ..e.clone() }), key);
}

/// The RowKey of `event(T0, "started")`: the tie-breaker is the hash of `,"Message":"started","Level":3`,
/// 4250290129, stored newest first as `4294967295 - 4250290129`.
const PINNED_EVENT_KEY: &str = "2516982335999999999-0044677166";

#[test]
fn round_trips() {
    let e =
        Event { source: "a \"quoted\" é😀 'source'".into(), level: None, ..event(T0 + 1234, "é \"quoted\" \\ ") };
    let entity = e.to_entity().unwrap();
    assert_eq!(entity.partition_key(), "a \"quoted\" é😀 'source'");
    assert_eq!(e.to_json().unwrap(), encode_entity(&entity).unwrap());
    assert_eq!(Event::from_entity(entity.clone()).unwrap(), e);
    assert_eq!(Event::from_json(encode_entity(&entity).unwrap().as_bytes()).unwrap(), e);
    assert_eq!(Event::from_json(e.to_json().unwrap().as_bytes()).unwrap(), e);
    let decoded = decode_entity(e.to_json().unwrap().as_bytes(), None).unwrap();
    assert_eq!(decoded, entity);

    let r = Reading { sensor: "s".into(), at: DateTime::MAX, value: f64::NAN };
    let back = Reading::from_json(r.to_json().unwrap().as_bytes()).unwrap();
    assert_eq!((back.at, back.value.is_nan()), (DateTime::MAX, true));
    assert_eq!(row_key(&back), row_key(&r));
    assert_eq!(Reading::from_entity(r.to_entity().unwrap()).unwrap().at, DateTime::MAX);
}

#[test]
fn a_tie_breaker_field_gives_the_tie_breaker() {
    let a = Audit { seq: 7, user: "u1".into(), at: tick(T0), action: "login".into() };
    let entity = a.to_entity().unwrap();
    assert_eq!(*entity.row_key(), key::reverse_chronological_unique::<RowKey, _>(tick(T0), 7));
    assert_eq!(entity.value("seq"), None); // not a property
    assert_eq!(Audit::from_entity(entity.clone()).unwrap(), a);
    assert_eq!(Audit::from_json(a.to_json().unwrap().as_bytes()).unwrap(), a);
    assert_eq!(a.to_json().unwrap(), encode_entity(&entity).unwrap());
    // Equal properties, different tie-breakers: different keys; the later sequence number first.
    let b = Audit { seq: 8, ..a.clone() };
    assert!(row_key(&b) < row_key(&a));
    // A changed property keeps the key: the field holds the tie-breaker.
    assert_eq!(row_key(&Audit { action: "logout".into(), ..a.clone() }), row_key(&a));
    // From the process-wide counter: never the same twice in a process.
    let audits: Vec<Audit> = (0..1000).map(|_| Audit { seq: key::next_tie_breaker(), ..a.clone() }).collect();
    let keys: std::collections::HashSet<RowKey> = audits.iter().map(row_key).collect();
    assert_eq!(keys.len(), 1000);
}

#[test]
fn a_unique_partition_key() {
    let j = Job { queued: tick(T0), name: "build".into(), seq: 42 };
    let entity = j.to_entity().unwrap();
    assert_eq!(*entity.partition_key(), key::chronological_unique::<PartitionKey, _>(tick(T0), 42));
    assert_eq!(entity.row_key(), "build");
    assert_eq!(Job::from_entity(entity).unwrap(), j);
    assert_eq!(Job::from_json(j.to_json().unwrap().as_bytes()).unwrap(), j);
    assert_eq!(j.encode().unwrap().partition_key(), "0638396640000000000-0000000042");
}

#[test]
fn the_schema_names_the_encoding() {
    let field = |source| match source {
        KeySource::Field { field, encoding } => (field, encoding),
        other => panic!("{other:?}"),
    };
    assert_eq!(field(Event::SCHEMA.row_key().source()), ("at", KeyEncoding::ReverseChronologicalUnique));
    assert_eq!(field(Reading::SCHEMA.row_key().source()), ("at", KeyEncoding::ChronologicalUnique));
    assert_eq!(field(Job::SCHEMA.partition_key().source()), ("queued", KeyEncoding::ChronologicalUnique));
    assert_eq!(Audit::SCHEMA.select(), "PartitionKey,RowKey,action");
}

#[test]
fn keys_in_another_form_are_errors_naming_the_key() {
    // A plain reverse-chronological key (written before `unique` was added) is not a unique one.
    let plain = Entity::new(PartitionKey::new("api").unwrap(), key::reverse_chronological(tick(T0)))
        .with("Message".parse().unwrap(), "x")
        .unwrap();
    let err = Event::from_entity(plain.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "property `RowKey`: invalid unique reverse-chronological key `2516982335999999999`: must be 30 characters, \
         found 19"
    );
    let err = Event::from_json(encode_entity(&plain).unwrap().as_bytes()).unwrap_err();
    assert!(err.to_string().contains("property `RowKey`: invalid unique reverse-chronological key"), "{err}");
    let bad_tie = Entity::new(PartitionKey::empty(), RowKey::new("build").unwrap());
    let err = Job::from_entity(bad_tie).unwrap_err();
    assert!(err.to_string().starts_with("property `PartitionKey`: invalid unique chronological key ``"), "{err}");
    // An instant the service cannot store.
    let early = Event { at: chrono::DateTime::from_timestamp(-20_000_000_000, 0).unwrap(), ..event(T0, "x") };
    let err = early.to_entity().unwrap_err();
    assert!(err.to_string().starts_with("property `RowKey`: "), "{err}");
    let err = early.to_json().unwrap_err();
    assert!(err.to_string().starts_with("property `RowKey`: "), "{err}");
}

/// Generic over the instant type.
#[derive(TableEntity, Debug, Clone, PartialEq)]
struct Stamped<T> {
    #[table(partition_key)]
    p: String,
    #[table(row_key, unique)]
    at: T,
}

#[test]
fn generic_instants() {
    let s = Stamped { p: "p".into(), at: tick(T0) };
    assert_eq!(Stamped::<DateTime>::from_entity(s.to_entity().unwrap()).unwrap(), s);
    let c = Stamped { p: "p".into(), at: tick(T0).to_chrono() };
    assert_eq!(row_key(&c), row_key(&s));
}
