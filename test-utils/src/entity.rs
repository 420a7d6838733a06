//! The benchmarks' entity: 12 properties of every EDM type (three strings, one with escapes; Int32, Int64, two
//! Doubles, Boolean, Guid, DateTime, 32 bytes of Binary), and the responses a loopback server answers with
//! (minimal metadata, each entity with its `odata.etag` and `Timestamp`, ~700 bytes of JSON an entity). The
//! export and scan benchmarks read it; the client benchmark of `table-model` has its own copy with an ETag field
//! (a dev-dependency of `table-model` on this crate's `entity` would turn on its own `derive` feature for every
//! build of its tests, `--no-default-features` included).
//!
//! Layer: base.

use table_model::TableEntity;

/// The account of the recorded responses' `odata.metadata`.
pub const ACCOUNT: &str = "devstoreaccount1";
/// The table of the recorded responses' `odata.metadata`.
pub const TABLE: &str = "Customers";
/// The ETag of every recorded entity, as the service writes it.
pub const ETAG: &str = "W/\"datetime'2024-05-06T07%3A08%3A10.7654321Z'\"";
/// The `Timestamp` of every recorded entity.
pub const TIMESTAMP: &str = "2024-05-06T07:08:10.7654321Z";
/// Entities in a full page, the most the service returns at once.
pub const PAGE: usize = 1000;

/// The entity: every EDM type.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
#[allow(missing_docs)]
pub struct Customer {
    #[table(partition_key)]
    pub tenant: String,
    #[table(row_key)]
    pub id_key: String,
    pub name: String,
    pub email: String,
    pub age: i32,
    pub visits: i64,
    pub score: f64,
    pub balance: f64,
    pub active: bool,
    pub id: uuid::Uuid,
    pub created: chrono::DateTime<chrono::Utc>,
    pub avatar: Vec<u8>,
    pub notes: String,
    pub rating: i32,
}

impl Customer {
    /// The recorded entity with these keys.
    pub fn sample(partition: &str, row: &str) -> Customer {
        Customer {
            tenant: partition.into(),
            id_key: row.into(),
            name: "Ada Lovelace".into(),
            email: "ada@example.com".into(),
            age: 36,
            visits: 1_234_567_890_123,
            score: 98.6,
            balance: -1234.5,
            active: true,
            id: uuid::Uuid::from_u128(0xc9da6455_213d_42c9_9a79_3e9149a57833),
            created: chrono::DateTime::from_timestamp(1_714_979_289, 123_456_700).expect("in range"),
            avatar: (0u8..32).collect(),
            notes: "Prefers \"analytical engine\" over difference engine; follow up in Q3 about the notes on Bernoulli numbers."
                .into(),
            rating: 5,
        }
    }

    /// The recorded entity number `row` of the page: PartitionKey `tenant-0042`, RowKey
    /// `2518977465384567432-<row, six digits>`.
    pub fn row(row: usize) -> Customer {
        Customer::sample("tenant-0042", &format!("2518977465384567432-{row:06}"))
    }

    /// The entity as a minimal-metadata response carries it: the project's encoder's body with `odata.etag`
    /// and `Timestamp` first.
    ///
    /// # Panics
    /// When the entity cannot be encoded (its keys are not valid keys).
    pub fn recorded(&self) -> Vec<u8> {
        let body = self.to_json().expect("a valid entity").into_bytes();
        let escaped_etag = ETAG.replace('"', "\\\"");
        let mut out = format!(r#"{{"odata.etag":"{escaped_etag}","Timestamp":"{TIMESTAMP}","#).into_bytes();
        out.extend_from_slice(&body[1..]);
        out
    }
}

/// The `odata.metadata` of a query of [`TABLE`] on a server at `port`.
pub fn metadata(port: u16) -> String {
    format!("http://127.0.0.1:{port}/{ACCOUNT}/$metadata#{TABLE}")
}

/// The body of a query's response on a server at `port`: the entities [`recorded`](Customer::recorded).
pub fn page<'a>(port: u16, entities: impl IntoIterator<Item = &'a Customer>) -> Vec<u8> {
    let mut page = format!(r#"{{"odata.metadata":"{}","value":["#, metadata(port)).into_bytes();
    for (i, entity) in entities.into_iter().enumerate() {
        if i > 0 {
            page.push(b',');
        }
        page.extend_from_slice(&entity.recorded());
    }
    page.extend_from_slice(b"]}");
    page
}
