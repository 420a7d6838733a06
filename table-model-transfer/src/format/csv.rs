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
//! [`EntityWriter::finish`]: super::EntityWriter::finish
//! [`EntityWriter::checkpoint`]: super::EntityWriter::checkpoint
//! [`EntityWriter::bytes`]: super::EntityWriter::bytes

// The cells (a field, a value's text and back), the writer and the reader, each in a file; what both the
// writer and the reader know of the columns is here.
mod cell;
mod read;
mod write;

pub use cell::{cell, push_field, read_cell, type_of_cell};
pub use read::CsvReader;
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
mod tests {
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
