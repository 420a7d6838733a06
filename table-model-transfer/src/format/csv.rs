//! The `csv` format: Azure Storage Explorer's typed CSV, both ways (`docs/tablectl.md`, "Formats", "csv").
//!
//! The header is `PartitionKey,RowKey,Timestamp`, then for each property its column and, right after it, a
//! `<Prop>@type` column; each row types each of its own values there (`Edm.Int64`, ...), so a column may hold
//! different types in different rows and nothing is ever typed by guessing. The columns are the union of the
//! properties of every entity written, in the order they were first seen.
//!
//! Reading takes the type cells with or without the `Edm.` prefix, in any case; an empty value with an empty
//! type is an absent property; an empty value typed `String` is the empty string (and typed `Binary`, no bytes);
//! an empty value of another type is an absent property (Storage Explorer writes a type for a property an entity
//! lacks); a value in a column without a `@type` column is a String. A UTF-8 byte order mark is skipped; records
//! end with `\r\n`, `\n` or `\r`; fields are quoted as RFC 4180 says (commas, quotes, CR and LF inside quotes).
//!
//! The writer cannot know the union of the columns before the last entity, and does not hold the entities in
//! memory: it spools each row into a temporary file beside the output, then writes the header and the rows at
//! [`EntityWriter::finish`]. So its [`EntityWriter::checkpoint`] returns `None` (a resumed export writes the file
//! again), and its [`EntityWriter::bytes`] are the bytes spooled until then.
//!
//! An export does not decode its pages into entities for this writer: [`CsvRows`] reads each page straight into
//! the fields of its rows (the decoder's typed values rendered by the same [`cell`]s), and the writer puts each
//! property's fields in its column ([`EntityWriter::write_csv_row`]); the file is the one the decoded entities
//! make, byte for byte.
//!
//! [`EntityWriter::finish`]: super::EntityWriter::finish
//! [`EntityWriter::write_csv_row`]: super::EntityWriter::write_csv_row
//! [`EntityWriter::checkpoint`]: super::EntityWriter::checkpoint
//! [`EntityWriter::bytes`]: super::EntityWriter::bytes

// The cells (a field, a value's text and back), the rows of entities, the writer and the reader, each in a file;
// what both the writer and the reader know of the columns is here.
mod cell;
mod read;
mod rows;
mod write;

pub use cell::{cell, push_field, push_value, read_cell, type_of_cell};
pub use read::CsvReader;
pub use rows::{CsvRow, CsvRows};
pub use write::CsvWriter;

/// The most columns a header may have: 16,384, Excel's own limit (an entity has at most 252 properties; a file
/// holds the union of its entities'). A longer header is refused before anything is allocated per column.
pub const MAX_COLUMNS: usize = 16_384;

/// The columns before the properties'.
const KEY_COLUMNS: [&str; 3] = ["PartitionKey", "RowKey", "Timestamp"];

/// The suffix of a type column's name.
const TYPE_SUFFIX: &str = "@type";

/// The record terminator written (RFC 4180's).
const TERMINATOR: &[u8] = b"\r\n";

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::TransferError;
    use crate::format::{Compression, EntityReader as _, EntityWriter as _, Record, Sink, MAX_RECORD_BYTES};
    use std::io;
    use table_model::{DateTime, ETag, EdmBinary, EdmString, EdmValue, Entity, PartitionKey, RowKey};

    fn read(input: &[u8]) -> Result<Vec<Record>, TransferError> {
        let mut reader = CsvReader::new("t.csv", Box::new(io::Cursor::new(input.to_vec())));
        let mut records = Vec::new();
        while let Some(record) = reader.next_record()? {
            records.push(record);
        }
        Ok(records)
    }

    fn write(entities: &[Entity]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut writer = CsvWriter::new(Sink::stream("test", &mut out), Compression::None).unwrap();
        for entity in entities {
            writer.write(entity).unwrap();
        }
        Box::new(writer).finish().unwrap();
        out
    }

    fn entity(p: &str, r: &str) -> Entity {
        Entity::new(PartitionKey::new(p).unwrap(), RowKey::new(r).unwrap())
    }

    #[test]
    fn every_edm_value_round_trips_bit_for_bit() {
        let values = [
            EdmValue::Double(-0.0),
            EdmValue::Double(0.0),
            EdmValue::Double(f64::NAN),
            EdmValue::Double(f64::INFINITY),
            EdmValue::Double(f64::NEG_INFINITY),
            EdmValue::Double(f64::from_bits(1)),
            EdmValue::Double(f64::MAX),
            EdmValue::Double(f64::MIN_POSITIVE),
            EdmValue::Double(0.1),
            EdmValue::Double(1.0),
            EdmValue::Double(1e300),
            EdmValue::Int64(i64::MIN),
            EdmValue::Int64(i64::MAX),
            EdmValue::Int32(i32::MIN),
            EdmValue::Int32(i32::MAX),
            EdmValue::DateTime("1601-01-01T00:00:00.0000000Z".parse().unwrap()),
            EdmValue::DateTime("9999-12-31T23:59:59.9999999Z".parse().unwrap()),
            EdmValue::Binary(EdmBinary::new((0..65_536).map(|i| (i % 251) as u8).collect::<Vec<_>>()).unwrap()),
            EdmValue::Binary(EdmBinary::default()),
            EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap()),
            EdmValue::Boolean(false),
            EdmValue::Boolean(true),
            EdmValue::String(EdmString::new("").unwrap()),
            EdmValue::String(EdmString::new(" é 世界 🎉 \"q\", \r\n\r\n\n\r\u{7f}\u{0} ").unwrap()),
            EdmValue::String(EdmString::new("日".repeat(32_768)).unwrap()),
        ];
        let mut first = entity("ünï, \"p\"", "日本, \"r\"");
        for (i, value) in values.iter().enumerate() {
            first.insert(format!("P{i}").parse().unwrap(), value.clone()).unwrap();
        }
        let at: DateTime = "2024-01-02T03:04:05.1234567Z".parse().unwrap();
        // The ETag has no column (Storage Explorer's shape has none); an import never sends it anyway.
        first.set_server_metadata(Some(at), Some(ETag::new("W/\"x\"")));
        // A second entity: other types in the same columns, a property absent, a new one.
        let second = entity("", "")
            .with("P0".parse().unwrap(), "text in a Double column")
            .unwrap()
            .with("P3".parse().unwrap(), 7_i32)
            .unwrap()
            .with("Later".parse().unwrap(), "")
            .unwrap();
        let file = write(&[first.clone(), second.clone()]);
        let records = read(&file).unwrap();
        assert_eq!(records.len(), 2);
        let back: Vec<Entity> = records.into_iter().map(|r| r.entity.unwrap()).collect();
        assert_eq!(back[0].etag(), None);
        first.set_server_metadata(Some(at), None);
        // Not assert_eq: a failure would print 64 KiB strings.
        assert!(back[0] == first, "the first entity differs");
        assert_eq!(back[0].timestamp(), Some(at));
        assert!(back[0].get::<f64>("P0").unwrap().is_sign_negative());
        assert!(back[1] == second, "{:?}", back[1]);
        assert_eq!(back[1].len(), 3, "absent properties stay absent");
        assert_eq!(back[1].value("Later").and_then(EdmValue::as_str), Some(""), "an empty string survives");
    }

    #[test]
    fn storage_explorer_shapes_read() {
        // Both spellings of the types, a BOM, CRLF, a quoted newline, and a type written for an empty cell.
        let input = "\u{feff}PartitionKey,RowKey,Timestamp,Age,Age@type,Big,Big@type,Name,Name@type,Note\r\n\
                     p,1,2024-01-02T03:04:05.1234567Z,42,Int32,9223372036854775807,Edm.Int64,\"a\r\nb, \"\"c\"\"\",String,n\r\n\
                     \r\n\
                     p,2,,,Int32,,,,,\r\n\
                     p,3,,1.0,edm.double,-1,int64,,String,\r\n";
        let records = read(input.as_bytes()).unwrap();
        let lines: Vec<u64> = records.iter().map(|r| r.position.line).collect();
        assert_eq!(lines, [2, 5, 6], "a record's first line, blank lines counted");
        let e: Vec<Entity> = records.into_iter().map(|r| r.entity.unwrap()).collect();
        assert_eq!(e[0].get::<i32>("Age").unwrap(), 42);
        assert_eq!(e[0].value("Big"), Some(&EdmValue::Int64(i64::MAX)));
        assert_eq!(e[0].get::<String>("Name").unwrap(), "a\r\nb, \"c\"");
        assert_eq!(e[0].get::<String>("Note").unwrap(), "n", "a column without a type is a String");
        assert_eq!(e[1].len(), 0, "an empty Int32 cell is an absent property");
        assert_eq!(e[2].value("Age"), Some(&EdmValue::Double(1.0)), "typed by its cell, never guessed");
        assert_eq!(e[2].value("Big"), Some(&EdmValue::Int64(-1)));
        assert_eq!(e[2].get::<String>("Name").unwrap(), "", "an empty String typed String");
        assert_eq!(e[2].len(), 3);
    }

    #[test]
    fn bad_records_are_rejected_with_their_line_and_reading_goes_on() {
        let mut input = b"PartitionKey,RowKey,N,N@type\n".to_vec();
        input.extend_from_slice(b"p,1,x,Int64\n"); // 2: not an Int64
        input.extend_from_slice(b"p,2,1\n"); // 3: too few fields
        input.extend_from_slice(b"p,3,\xff,String\n"); // 4: not UTF-8
        input.extend_from_slice(b"p,4,1,Edm.Geography\n"); // 5: unknown type
        input.extend_from_slice(b"a#b,5,,\n"); // 6: a broken key rule
        input.extend_from_slice(b"p,6,\"");
        input.extend_from_slice(&vec![b'x'; MAX_RECORD_BYTES + 10]);
        input.extend_from_slice(b"\",String\n"); // 7: over the record bound
        input.extend_from_slice(b"p,8,8,Int32\n"); // 8: fine
        input.extend_from_slice(b"p,9,\"cut"); // 9: the file ends inside quotes
        let records = read(&input).unwrap();
        let summary: Vec<(u64, Option<&str>, Option<&str>)> = records
            .iter()
            .map(|r| match &r.entity {
                Ok(_) => (r.position.line, None, None),
                Err(e) => (r.position.line, e.property.as_deref(), Some(e.rule.as_str())),
            })
            .collect();
        assert_eq!(summary[0], (2, Some("N"), Some("`x` is not an Edm.Int64")));
        assert_eq!(summary[1], (3, None, Some("the record has 3 fields, the header 4 columns")));
        assert_eq!((summary[2].0, summary[2].1), (4, Some("N")));
        assert!(summary[2].2.unwrap().starts_with("column 3 is not UTF-8"), "{:?}", summary[2]);
        assert!(summary[3].2.unwrap().starts_with("unknown type `Edm.Geography` in column `N@type`"));
        assert_eq!((summary[4].0, summary[4].1), (6, Some("PartitionKey")));
        assert_eq!(summary[5].0, 7);
        assert!(summary[5].2.unwrap().contains("over the 8388608 a record may have"), "{:?}", summary[5]);
        assert_eq!(summary[6], (8, None, None));
        assert_eq!(summary[7].0, 9);
        assert!(summary[7].2.unwrap().starts_with("the file ends inside a quoted field"), "{:?}", summary[7]);
        assert_eq!(records.len(), 8);
        let Err(rejected) = &records[0].entity else { panic!() };
        assert_eq!((rejected.partition_key.as_deref(), rejected.row_key.as_deref()), (Some("p"), Some("1")));
        assert_eq!(rejected.text, "p,1,x,Int64");
    }

    #[test]
    fn a_header_of_millions_of_columns_is_refused_with_its_line() {
        let mut input = b"\n".to_vec();
        input.extend_from_slice(&b"a,".repeat(10_000_000));
        input.extend_from_slice(b"\n");
        let err = read(&input).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "invalid csv header in `t.csv` line 2: over 16384 columns (an entity has at most 252 properties)"
        );
        for (header, message) in [
            ("PartitionKey,Name", "the header has no `RowKey` column"),
            ("PartitionKey,RowKey,A,A", "the column `A` is there twice"),
            ("PartitionKey,RowKey,B@type", "the type column `B@type` has no column `B`"),
        ] {
            let err = read(format!("{header}\n").as_bytes()).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid csv header in `t.csv` line 1: {message}"));
        }
        assert!(read(b"PartitionKey,RowKey,has space\n").unwrap_err().to_string().contains("column `has space`: "));
        assert!(read(b"").unwrap().is_empty(), "an empty file has no records");
    }

    #[test]
    fn a_header_written_and_padded_for_columns_seen_later() {
        let a = entity("p", "1").with("A".parse().unwrap(), 1_i32).unwrap();
        let b = entity("p", "2").with("B".parse().unwrap(), true).unwrap();
        let file = String::from_utf8(write(&[a, b])).unwrap();
        assert_eq!(
            file,
            "PartitionKey,RowKey,Timestamp,A,A@type,B,B@type\r\np,1,,1,Edm.Int32,,\r\np,2,,,,true,Edm.Boolean\r\n"
        );
    }

    #[test]
    fn the_spool_file_is_removed() {
        let dir = std::env::temp_dir().join(format!("tablectl-csv-spool-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let mut writer = CsvWriter::new(Sink::create(&path, false).unwrap(), Compression::Gzip).unwrap();
        writer.write(&entity("p", "1")).unwrap();
        assert_eq!(writer.checkpoint().unwrap(), None);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "the file and its spool");
        Box::new(writer).finish().unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let writer = CsvWriter::new(Sink::create(&dir.join("u.csv"), false).unwrap(), Compression::None).unwrap();
        drop(writer);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "a dropped writer leaves its file, not its spool");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What the writer wrote before it took rows: the union of the columns in the order first seen, each
    /// entity's cells in them, written from decoded entities. The oracle of the property test below.
    fn reference(entities: &[Entity]) -> Vec<u8> {
        let mut columns: Vec<String> = Vec::new();
        let mut rows = Vec::new();
        for entity in entities {
            let mut cells: Vec<Option<&EdmValue>> = vec![None; columns.len()];
            for (name, value) in entity.iter() {
                let column = match columns.iter().position(|c| c == name.as_str()) {
                    Some(column) => column,
                    None => {
                        columns.push(name.to_string());
                        cells.push(None);
                        columns.len() - 1
                    }
                };
                cells[column] = Some(value);
            }
            let mut row = Vec::new();
            push_field(&mut row, entity.partition_key().as_str());
            row.push(b',');
            push_field(&mut row, entity.row_key().as_str());
            row.push(b',');
            push_field(&mut row, &entity.timestamp().map(|t| t.to_string()).unwrap_or_default());
            for value in &cells {
                row.push(b',');
                let mut text = String::new();
                if let Some(value) = value {
                    cell(value, &mut text);
                }
                push_field(&mut row, &text);
                row.push(b',');
                row.extend_from_slice(value.map_or("", |v| v.edm_type().as_str()).as_bytes());
            }
            rows.push((row, cells.len()));
        }
        let mut file = KEY_COLUMNS.join(",").into_bytes();
        for column in &columns {
            file.push(b',');
            push_field(&mut file, column);
            file.push(b',');
            push_field(&mut file, &format!("{column}{TYPE_SUFFIX}"));
        }
        file.extend_from_slice(TERMINATOR);
        for (row, known) in rows {
            file.extend_from_slice(&row);
            file.extend_from_slice(&b",,".repeat(columns.len() - known));
            file.extend_from_slice(TERMINATOR);
        }
        file
    }

    /// A page read into rows ([`CsvRows::read_page`]) writes the file its decoded entities write, byte for byte,
    /// and the same summary; both are the file of the [`reference`] writer.
    fn check_page(page: &[u8]) {
        let decoded = table_model::decode_query(page, None).unwrap();
        let mut rows = CsvRows::new();
        rows.read_page(page).unwrap();
        assert_eq!(rows.len(), decoded.len());
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        let mut fast_writer = CsvWriter::new(Sink::stream("fast", &mut fast), Compression::None).unwrap();
        let mut slow_writer = CsvWriter::new(Sink::stream("slow", &mut slow), Compression::None).unwrap();
        for (row, entity) in rows.iter().zip(&decoded) {
            assert_eq!(
                (row.partition_key(), row.row_key()),
                (entity.partition_key().as_str(), entity.row_key().as_str())
            );
            fast_writer.write_csv_row(&row).unwrap();
            slow_writer.write(entity).unwrap();
        }
        assert_eq!(fast_writer.bytes(), slow_writer.bytes());
        let (fast_file, slow_file) = (Box::new(fast_writer).finish().unwrap(), Box::new(slow_writer).finish().unwrap());
        assert_eq!(fast_file, slow_file);
        assert!(fast == slow, "{}\n---\n{}", String::from_utf8_lossy(&fast), String::from_utf8_lossy(&slow));
        let expected = reference(&decoded);
        assert!(fast == expected, "{}\n---\n{}", String::from_utf8_lossy(&fast), String::from_utf8_lossy(&expected));
    }

    #[test]
    fn rows_of_a_page_in_every_form_the_decoder_reads() {
        // Annotations before and after their values, nulls, whitespace, escapes the encoder does not write, a
        // Timestamp annotated, nometadata's strings, an entity with no property.
        let page = r#"{"odata.metadata":"m","value":[
            {"odata.etag":"W/\"1\"","PartitionKey":"p, \"q\"","RowKey":"1","Timestamp":"2024-05-06T07:08:10.765Z",
             "L":"12","L@odata.type":"Edm.Int64","N":null,"S":"a\/b \u00e9\r\n","D@odata.type":"Edm.Double","D":"NaN",
             "G@odata.type":"Edm.Guid","G":"C9DA6455-213D-42C9-9A79-3E9149A57833","X@odata.type":"Edm.Binary","X":""},
            {"PartitionKey":"p","RowKey":"2","Timestamp@odata.type":"Edm.DateTime",
             "Timestamp":"9999-12-31T23:59:59.9999999Z"},
            { "PartitionKey" : "p" , "RowKey" : "3" , "D" : 1e300 , "S" : 5 , "B" : true }
        ]}"#;
        check_page(page.as_bytes());
    }

    /// Pages the decoder refuses (a typed value that does not read, a missing key, a cut body): a page reader
    /// without `Entity`s must refuse them with the decoder's own error.
    pub(crate) const REFUSED_PAGES: [&[u8]; 3] = [
        br#"{"value":[{"PartitionKey":"p","RowKey":"1","N@odata.type":"Edm.Int32","N":"x"}]}"#,
        br#"{"value":[{"RowKey":"1"}]}"#,
        br#"{"value":[{"PartitionKey":"p","RowKey":"1"}"#,
    ];

    /// A page of one entity of `n` string properties of 32 KiB: over the 1 MiB an entity may have at 17 (the
    /// decoder refuses it when it builds the entity), under it at 15.
    pub(crate) fn page_of_32k_strings(n: usize) -> String {
        let big = "x".repeat(32 * 1024);
        let properties: Vec<String> = (0..n).map(|i| format!(r#""P{i}":"{big}""#)).collect();
        format!(r#"{{"value":[{{"PartitionKey":"p","RowKey":"1",{}}}]}}"#, properties.join(","))
    }

    #[test]
    fn a_page_the_decoder_refuses_is_refused() {
        let mut rows = CsvRows::new();
        for page in REFUSED_PAGES {
            let expected = table_model::decode_query(page, None).unwrap_err();
            assert_eq!(rows.read_page(page).unwrap_err(), expected);
        }
        let over = page_of_32k_strings(17);
        assert!(table_model::decode_query(over.as_bytes(), None).is_err());
        assert!(rows.read_page(over.as_bytes()).is_err());
        let under = page_of_32k_strings(15);
        rows.read_page(under.as_bytes()).unwrap();
        check_page(under.as_bytes());
    }

    pub(crate) mod generated {
        use super::*;
        use proptest::prelude::*;
        use table_model::{DateTime, EdmBinary, EdmString, EdmValue, Entity, PropertyName};

        fn string() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z ,\"\r\n]{0,20}",
                any::<String>(),
                "\\PC{0,40}",
                Just(String::new()),
                "[\u{0}-\u{1f}\u{7f}]{1,5}",
            ]
        }

        fn value() -> impl Strategy<Value = EdmValue> {
            prop_oneof![
                any::<u64>().prop_map(|bits| EdmValue::Double(f64::from_bits(bits))),
                prop_oneof![Just(0.0), Just(-0.0), Just(f64::NAN), Just(f64::INFINITY), Just(1e16), Just(1e-5)]
                    .prop_map(EdmValue::Double),
                any::<f64>().prop_map(EdmValue::Double),
                any::<i32>().prop_map(EdmValue::Int32),
                any::<i64>().prop_map(EdmValue::Int64),
                any::<bool>().prop_map(EdmValue::Boolean),
                any::<u128>().prop_map(|g| EdmValue::Guid(uuid::Uuid::from_u128(g))),
                // 1601 to 9999, the service's years.
                (504_911_232_000_000_000_i64..3_155_378_975_999_999_999)
                    .prop_filter_map("in range", |t| DateTime::from_ticks(t).ok().map(EdmValue::DateTime)),
                proptest::collection::vec(any::<u8>(), 0..40)
                    .prop_map(|b| EdmValue::Binary(EdmBinary::new(b).unwrap())),
                string().prop_filter_map("a valid string", |s| EdmString::new(s).ok().map(EdmValue::String)),
            ]
        }

        /// Names from a small set (so that entities share columns, in other orders) and a few of their own.
        fn name() -> impl Strategy<Value = PropertyName> {
            prop_oneof![
                (0_u8..8).prop_map(|i| format!("P{i}")),
                "[A-Za-z_][A-Za-z0-9_]{0,12}",
                Just("Ünï_日本".to_owned()),
            ]
            .prop_filter_map("a property name", |n| n.parse().ok())
        }

        pub(crate) fn entity() -> impl Strategy<Value = (Entity, bool, bool)> {
            // Wide entities (up to the 252 properties an entity may have) one time in eight: each is 20 narrow
            // ones' work, and the suite runs unoptimised.
            let properties = prop_oneof![
                7 => proptest::collection::vec((name(), value()), 0..12),
                1 => proptest::collection::vec(
                    ((0_u16..400).prop_map(|i| format!("W{i}").parse().unwrap()), value()),
                    200..260
                ),
            ];
            (string(), string(), properties, any::<bool>(), any::<bool>(), any::<Option<i64>>()).prop_filter_map(
                "a valid entity",
                |(p, r, properties, etag, nulls, timestamp)| {
                    let mut entity = Entity::new(p.parse().ok()?, r.parse().ok()?);
                    for (name, value) in properties {
                        if entity.len() < 252 && entity.value(name.as_str()).is_none() {
                            entity.insert(name, value).ok()?;
                        }
                    }
                    let timestamp =
                        timestamp.and_then(|t| DateTime::from_ticks(t.rem_euclid(3_155_378_975_999_999_999)).ok());
                    entity.set_server_metadata(timestamp, None);
                    Some((entity, etag, nulls))
                },
            )
        }

        /// The page of these entities as the service writes it: each entity's body, with an `odata.etag`, a
        /// `Timestamp` and `null` properties (which no entity has) in front when asked.
        pub(crate) fn page(entities: &[(Entity, bool, bool)]) -> Vec<u8> {
            let mut page = br#"{"odata.metadata":"m","value":["#.to_vec();
            for (i, (entity, etag, nulls)) in entities.iter().enumerate() {
                if i > 0 {
                    page.push(b',');
                }
                page.push(b'{');
                if *etag {
                    page.extend_from_slice(br#""odata.etag":"W/\"datetime'2024'\"","#);
                }
                if let Some(t) = entity.timestamp() {
                    page.extend_from_slice(format!(r#""Timestamp":"{t}","#).as_bytes());
                }
                if *nulls {
                    page.extend_from_slice(br#""P0":null,"Zz":null,"#);
                }
                let mut body = entity.clone();
                if *nulls {
                    body.remove("P0");
                    body.remove("Zz");
                }
                page.extend_from_slice(&table_model::encode_entity(&body).unwrap().as_bytes()[1..]);
            }
            page.extend_from_slice(b"]}");
            page
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

            #[test]
            fn rows_are_the_decoded_entities_rows(entities in proptest::collection::vec(entity(), 0..10)) {
                check_page(&page(&entities));
            }
        }
    }

    /// Any bytes give records or an error, never a panic: random inputs over the bytes that matter to the
    /// parser and the types.
    #[test]
    fn arbitrary_bytes_never_panic() {
        const BYTES: &[u8] = b",\"\r\n@aN1-.:TZ\xff\xef\xbb\xbf";
        const HEADERS: [&[u8]; 3] =
            [b"PartitionKey,RowKey,A,A@type,B\n", b"PartitionKey,RowKey,Timestamp,A,A@type\r\n", b""];
        let mut state = 0x1234_5678_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let z = (state ^ (state >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb) as usize
        };
        for case in 0..3_000 {
            let mut input = HEADERS[case % 3].to_vec();
            for _ in 0..next() % 200 {
                input.push(BYTES[next() % BYTES.len()]);
                if next() % 10 == 0 {
                    input.extend_from_slice([&b"Edm.Int64"[..], b"Double", b"String", b"NaN", b"-0.0"][next() % 5]);
                }
            }
            let _ = read(&input);
        }
    }
}
