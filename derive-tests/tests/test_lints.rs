//! The expansion must be warning-free under strict lints in the user's crate (thiserror's `test_lints.rs`):
//! `cargo clippy --all-targets -- -D warnings` checks this file with clippy's pedantic group on.
#![deny(
    missing_docs,
    unused_qualifications,
    unused_results,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
#![allow(clippy::missing_panics_doc, clippy::derive_partial_eq_without_eq)]

//! Derived types with every kind of field.

use table_model::{TableEntity, TableEnum, TableProperties};

/// An enum.
#[derive(TableEnum, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One.
    One,
    /// Two.
    Two,
}

/// A group.
#[derive(TableProperties, Debug, PartialEq, Eq)]
pub struct Group {
    /// A field.
    pub x: i32,
}

/// An entity.
#[derive(TableEntity, Debug, PartialEq)]
#[table(name = "Lints", rename_all = "PascalCase")]
pub struct Linted<T> {
    /// The partition key.
    #[table(partition_key)]
    pub pk: String,
    /// The row key.
    #[table(row_key, reverse_chronological)]
    pub at: table_model::DateTime,
    /// A generic value.
    pub value: T,
    /// An optional value.
    pub maybe: Option<String>,
    /// An enum.
    pub kind: Kind,
    /// A group.
    #[table(flatten)]
    pub group: Group,
    /// JSON.
    #[table(json)]
    pub list: Vec<u32>,
    /// A default.
    #[table(default)]
    pub later: i64,
    /// Widened.
    #[table(edm = "Double")]
    pub wide: i16,
    /// Timestamp.
    #[table(timestamp)]
    pub ts: Option<table_model::DateTime>,
    /// The `ETag`.
    #[table(etag)]
    pub etag: Option<table_model::ETag>,
    /// Skipped.
    #[table(skip)]
    pub cache: Vec<u8>,
}

/// Unique time keys, the tie-breaker from the properties.
#[derive(TableEntity, Debug, PartialEq, Eq)]
pub struct UniqueKeys<T> {
    /// The partition key.
    #[table(partition_key, unique)]
    pub day: table_model::DateTime,
    /// The row key.
    #[table(row_key, reverse_chronological, unique)]
    pub at: T,
    /// A value.
    pub value: i32,
}

/// A unique key with its tie-breaker in a field.
#[derive(TableEntity, Debug, PartialEq, Eq)]
pub struct WithTieBreaker {
    /// The partition key.
    #[table(partition_key)]
    pub pk: String,
    /// The row key.
    #[table(row_key, unique)]
    pub at: chrono::DateTime<chrono::Utc>,
    /// The tie-breaker.
    #[table(tie_breaker)]
    pub seq: u32,
}

/// Only keys.
#[derive(TableEntity)]
#[table(partition_key = "p", row_key = "r")]
pub struct OnlyKeys {}

#[test]
fn lints() {
    let v = Linted {
        pk: "p".into(),
        at: table_model::DateTime::UNIX_EPOCH,
        value: 1.5f64,
        maybe: None,
        kind: Kind::One,
        group: Group { x: 1 },
        list: vec![],
        later: 0,
        wide: 1,
        ts: None,
        etag: None,
        cache: vec![],
    };
    let e = v.to_entity().unwrap();
    assert_eq!(Linted::<f64>::from_entity(e).unwrap(), v);
    let u = UniqueKeys { day: table_model::DateTime::UNIX_EPOCH, at: table_model::DateTime::MAX, value: 3 };
    assert_eq!(UniqueKeys::<table_model::DateTime>::from_json(u.to_json().unwrap().as_bytes()).unwrap(), u);
    let w = WithTieBreaker { pk: "p".into(), at: table_model::DateTime::UNIX_EPOCH.to_chrono(), seq: 9 };
    assert_eq!(WithTieBreaker::from_entity(w.to_entity().unwrap()).unwrap(), w);
    let only = OnlyKeys {}.to_entity().unwrap();
    assert!(only.is_empty());
    assert!(OnlyKeys::from_entity(only).is_ok());
}
