//! The `jsonl` format of exports, imports and piped query output: one entity per line, in the service's own JSON
//! (the wire format of `table_model::json`: `Prop@odata.type` annotations where JSON cannot show the type, Int64
//! as a string, DateTime with 7 fraction digits, Doubles that read back bit for bit with `NaN`, `Infinity`,
//! `-Infinity` and `-0.0`, Binary in base64), followed by the service's `Timestamp` and `odata.etag` when the
//! entity was read from the service. An import ignores those two: the service sets them on write.
//!
//! [`JsonlWriter`] and [`JsonlReader`] are the format's [`EntityWriter`] and [`EntityReader`]; the line functions
//! below them serve `query` too.

use super::compress::Output;
use super::{
    Compression, EntityReader, EntityWriter, Position, Record, Rejected, Sink, ToWrite, WrittenFile, WrittenKeys,
    MAX_RECORD_BYTES, SHOWN_BYTES,
};
use crate::error::TransferError;
use serde::Deserialize;
use std::io::{BufRead, Write as _};
use std::sync::Arc;
use table_model::json::{EncodedEntity, EncodedPage};
use table_model::{decode_entity, encode_entity, DateTime, DecodeError, EncodeError, Entity, PartitionKey, RowKey};

/// Writes entities as JSON lines into a [`Sink`], counting and hashing what it writes.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// use table_model_transfer::format::{jsonl::JsonlWriter, EntityWriter as _, Sink};
/// let mut out = Vec::new();
/// let mut writer = JsonlWriter::new(Sink::stream("test", &mut out));
/// writer.write(&Entity::new(PartitionKey::new("p")?, RowKey::new("r")?))?;
/// let written = Box::new(writer).finish()?;
/// assert_eq!((written.entities, written.bytes), (1, 34));
/// assert_eq!(out, b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct JsonlWriter<'a> {
    out: Output<'a>,
    keys: WrittenKeys,
    line: Vec<u8>,
}

impl<'a> JsonlWriter<'a> {
    /// A writer into `sink`, not compressed.
    pub fn new(sink: Sink<'a>) -> Self {
        Self::with_compression(sink, Compression::None)
    }

    /// A writer into `sink`, compressed with `compression` (each checkpoint ends a gzip member or zstd frame:
    /// [`Output`]).
    pub fn with_compression(sink: Sink<'a>, compression: Compression) -> Self {
        JsonlWriter { out: Output::new(sink, compression), keys: WrittenKeys::default(), line: Vec::new() }
    }
}

impl EntityWriter for JsonlWriter<'_> {
    fn write(&mut self, entity: &Entity) -> Result<(), TransferError> {
        self.line.clear();
        write_entity(entity, &mut self.line).map_err(|e| {
            TransferError::failed(format!("cannot write entity {}: {e}", crate::format::Keys::of(entity)))
        })?;
        self.out.write_all(&self.line).map_err(|e| self.out.error(e))?;
        self.keys.wrote(entity);
        Ok(())
    }

    fn write_encoded(&mut self, entity: &EncodedEntity<'_>) -> Result<(), TransferError> {
        self.line.clear();
        write_encoded(entity, &mut self.line);
        self.out.write_all(&self.line).map_err(|e| self.out.error(e))?;
        self.keys.wrote_keys(entity.partition_key, entity.row_key);
        Ok(())
    }

    fn bytes(&self) -> u64 {
        self.out.bytes()
    }

    fn checkpoint(&mut self) -> Result<Option<u64>, TransferError> {
        self.out.checkpoint().map(Some)
    }

    fn finish(mut self: Box<Self>) -> Result<WrittenFile, TransferError> {
        let (bytes, sha256) = self.out.finish()?;
        Ok(self.keys.into_file(bytes, sha256))
    }
}

/// Reads JSON lines into records, one per non-blank line, numbered from 1; a line that is not an entity (invalid
/// JSON or UTF-8, a broken rule, a last line cut short, a line over [`MAX_RECORD_BYTES`]) is a [`Rejected`]
/// record, and reading goes on.
pub struct JsonlReader {
    source: Arc<str>,
    reader: Box<dyn BufRead + Send>,
    line: u64,
    bytes: u64,
    buf: Vec<u8>,
    /// Whether each line is read for its keys only ([`read_keys_line`]).
    keys_only: bool,
    /// Whether `buf` holds the whole line of the record returned last.
    whole: bool,
    /// The line read as the wire format's JSON, by [`next_to_write`](EntityReader::next_to_write).
    encoded: EncodedPage,
}

impl std::fmt::Debug for JsonlReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlReader").field("source", &self.source).field("line", &self.line).finish_non_exhaustive()
    }
}

impl JsonlReader {
    /// A reader of `reader`, named `source` in positions and errors (a path, or `-` for stdin).
    ///
    /// ```
    /// use table_model_transfer::format::{jsonl::JsonlReader, EntityReader as _};
    /// let input: &[u8] = b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n\n{oops\n";
    /// let mut reader = JsonlReader::new("in.jsonl", Box::new(input));
    /// let first = reader.next_record()?.unwrap();
    /// assert_eq!((first.position.line, first.entity.is_ok()), (1, true));
    /// assert_eq!(reader.line(), Some(&b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n"[..]));
    /// let second = reader.next_record()?.unwrap();
    /// assert_eq!(second.position.line, 3);
    /// assert!(second.entity.unwrap_err().rule.starts_with("invalid JSON"));
    /// assert_eq!(reader.line(), Some(&b"{oops\n"[..]));
    /// assert!(reader.next_record()?.is_none());
    /// assert_eq!(reader.line(), None);
    /// # Ok::<(), table_model_transfer::error::TransferError>(())
    /// ```
    pub fn new(source: impl Into<Arc<str>>, reader: Box<dyn BufRead + Send>) -> Self {
        JsonlReader {
            source: source.into(),
            reader,
            line: 0,
            bytes: 0,
            buf: Vec::new(),
            keys_only: false,
            whole: false,
            encoded: EncodedPage::new(),
        }
    }

    /// The same reader, each record an entity of its line's keys only ([`read_keys_line`]): for a merge of key
    /// sets, which needs nothing else and reads files it wrote itself.
    pub(crate) fn keys_only(mut self) -> Self {
        self.keys_only = true;
        self
    }
}

impl JsonlReader {
    /// Reads the next line into `buf`: its position, its length, and whether it is over [`MAX_RECORD_BYTES`] (only
    /// its first bytes kept); `None` at the end.
    fn read_next_line(&mut self) -> Result<Option<(Position, u64, bool)>, TransferError> {
        let (n, over) = super::read_line_bounded(&mut *self.reader, &mut self.buf, MAX_RECORD_BYTES).map_err(|e| {
            TransferError::failed(format!("cannot read `{}` after line {}: {e}", self.source, self.line))
        })?;
        self.whole = n > 0 && !over;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        self.bytes += n;
        Ok(Some((Position { source: self.source.clone(), line: self.line }, n, over)))
    }
}

impl EntityReader for JsonlReader {
    fn next_record(&mut self) -> Result<Option<Record>, TransferError> {
        while let Some((position, n, over)) = self.read_next_line()? {
            if over {
                return Ok(Some(Record { position, entity: Err(line_too_long(n, &self.buf)) }));
            }
            let read = if self.keys_only { read_keys_line(&self.buf) } else { read_line(&self.buf) };
            let Some(entity) = read else { continue };
            return Ok(Some(Record { position, entity }));
        }
        Ok(None)
    }

    /// A line in the forms the service writes (`tablectl export`'s lines are) is copied into its body as
    /// [`EncodedPage::read_one`](table_model::json::EncodedPage::read_one) reads it, checked but not decoded;
    /// any other line is read as [`next_record`](EntityReader::next_record) reads it: decoded, or refused
    /// with the decoder's error.
    fn next_to_write(&mut self) -> Result<Option<Record<ToWrite>>, TransferError> {
        while let Some((position, n, over)) = self.read_next_line()? {
            if over {
                return Ok(Some(Record { position, entity: Err(line_too_long(n, &self.buf)) }));
            }
            if self.encoded.read_one(trim_line_end(&self.buf))
                && let Some(entity) = self.encoded.get(0)
            {
                return Ok(Some(Record { position, entity: Ok(ToWrite::Encoded(entity.into())) }));
            }
            let Some(entity) = read_line(&self.buf) else { continue };
            return Ok(Some(Record { position, entity: entity.map(ToWrite::decoded) }));
        }
        Ok(None)
    }

    fn bytes_read(&self) -> u64 {
        self.bytes
    }

    fn line(&self) -> Option<&[u8]> {
        self.whole.then_some(self.buf.as_slice())
    }
}

/// Appends an entity's line, with its `\n`, to `out`.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// let entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?).with("N".parse()?, 5_i64)?;
/// let mut line = Vec::new();
/// table_model_transfer::format::jsonl::write_entity(&entity, &mut line)?;
/// assert_eq!(line, b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"N@odata.type\":\"Edm.Int64\",\"N\":\"5\"}\n");
/// assert_eq!(table_model_transfer::format::jsonl::read_entity(&line)?, entity);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`EncodeError`] when the entity's JSON would be over the service's 1 MiB.
pub fn write_entity(entity: &Entity, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let body = encode_entity(entity)?;
    start_line(body.as_bytes(), entity.timestamp(), out);
    if let Some(etag) = entity.etag() {
        out.extend_from_slice(b",\"odata.etag\":");
        serde_json::to_writer(&mut *out, etag.as_str()).expect("writing to a Vec cannot fail");
    }
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// Appends the line of an entity read with [`EncodedPage`], with its `\n`, to
/// `out`: what [`write_entity`] writes for the entity decoded from the same page, byte for byte (its body is
/// [`encode_entity`]'s and its ETag's JSON `serde_json`'s).
///
/// ```
/// use table_model::json::EncodedPage;
/// use table_model_transfer::format::jsonl::{write_encoded, write_entity};
/// let page = br#"{"value":[{"odata.etag":"W/\"1\"","PartitionKey":"p","RowKey":"r","Timestamp":"2024-05-06T07:08:10Z","N":1}]}"#;
/// let mut encoded = EncodedPage::new();
/// assert!(encoded.read(page));
/// let (mut fast, mut slow) = (Vec::new(), Vec::new());
/// write_encoded(&encoded.get(0).unwrap(), &mut fast);
/// write_entity(&table_model::decode_query(page, None)?[0], &mut slow)?;
/// assert_eq!(fast, slow);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_encoded(entity: &EncodedEntity<'_>, out: &mut Vec<u8>) {
    start_line(entity.body.as_bytes(), entity.timestamp, out);
    if let Some(etag) = entity.etag_json {
        out.extend_from_slice(b",\"odata.etag\":");
        out.extend_from_slice(etag.as_bytes());
    }
    out.extend_from_slice(b"}\n");
}

/// Appends an entity's body without its closing brace, then its `Timestamp` when it has one: a line up to its
/// `odata.etag`.
fn start_line(body: &[u8], timestamp: Option<DateTime>, out: &mut Vec<u8>) {
    // The body is one JSON object; the server's members go before its closing brace.
    out.extend_from_slice(&body[..body.len() - 1]);
    if let Some(timestamp) = timestamp {
        out.extend_from_slice(b",\"Timestamp@odata.type\":\"Edm.DateTime\",\"Timestamp\":\"");
        // Display writes the wire form straight into the line; a `Vec` takes every write.
        let _ = write!(out, "{timestamp}");
        out.push(b'"');
    }
}

/// The reject of a line of `bytes` bytes, over [`MAX_RECORD_BYTES`], given its first bytes (at most
/// [`SHOWN_BYTES`] of them are shown).
///
/// ```
/// use table_model_transfer::format::jsonl::line_too_long;
/// let rejected = line_too_long(10_000_000, &[b'x'; 2000]);
/// assert!(rejected.rule.starts_with("the line has 10000000 bytes, over the 8388608 a line may have"));
/// assert_eq!(rejected.text.len(), 1024);
/// ```
pub fn line_too_long(bytes: u64, head: &[u8]) -> Rejected {
    Rejected {
        partition_key: None,
        row_key: None,
        property: None,
        rule: format!(
            "the line has {bytes} bytes, over the {MAX_RECORD_BYTES} a line may have (an entity is at most 1 MiB); \
             its first {SHOWN_BYTES} bytes are shown"
        ),
        text: String::from_utf8_lossy(&head[..head.len().min(SHOWN_BYTES)]).into_owned(),
    }
}

/// Reads one line of a file as [`JsonlReader`] does: `None` for a blank line, else the entity or why the line is
/// not one (for `validate`, which reads lines on several threads).
///
/// ```
/// use table_model_transfer::format::jsonl::read_line;
/// assert!(read_line(b" \r\n").is_none());
/// let rejected = read_line(br#"{"PartitionKey":"a#b","RowKey":"1"}"#).unwrap().unwrap_err();
/// assert_eq!((rejected.partition_key.as_deref(), rejected.property.as_deref()), (Some("a#b"), Some("PartitionKey")));
/// ```
pub fn read_line(line: &[u8]) -> Option<Result<Entity, Rejected>> {
    if line.trim_ascii().is_empty() {
        return None;
    }
    Some(read_entity(line).map_err(|e| {
        let (partition_key, row_key) = raw_keys(line);
        Rejected {
            partition_key,
            row_key,
            property: e.property().map(str::to_owned),
            rule: e.to_string(),
            text: String::from_utf8_lossy(trim_line_end(line)).into_owned(),
        }
    }))
}

/// Reads the keys of one line into an entity of them alone, skipping its other members unchecked (five times
/// as fast as [`read_line`] on the benchmarks' entities): `None` for a blank line, a [`Rejected`] for a line
/// that is not a JSON object with both keys as valid strings.
pub(crate) fn read_keys_line(line: &[u8]) -> Option<Result<Entity, Rejected>> {
    #[derive(Deserialize)]
    struct Keys {
        #[serde(rename = "PartitionKey")]
        partition_key: String,
        #[serde(rename = "RowKey")]
        row_key: String,
    }
    if line.trim_ascii().is_empty() {
        return None;
    }
    let read = leading_keys(line).map(Ok).unwrap_or_else(|| {
        serde_json::from_slice::<Keys>(trim_line_end(line))
            .map(|k| (k.partition_key, k.row_key))
            .map_err(|e| e.to_string())
    });
    let keys = read.and_then(|(partition_key, row_key)| {
        let partition_key = PartitionKey::new(partition_key).map_err(|e| e.to_string())?;
        let row_key = RowKey::new(row_key).map_err(|e| e.to_string())?;
        Ok(Entity::new(partition_key, row_key))
    });
    Some(keys.map_err(|rule| {
        let (partition_key, row_key) = raw_keys(line);
        Rejected {
            partition_key,
            row_key,
            property: None,
            rule,
            text: String::from_utf8_lossy(trim_line_end(line)).into_owned(),
        }
    }))
}

/// The keys of a line that starts with them, as this module's writer writes every line
/// (`{"PartitionKey":"…","RowKey":"…"`), without reading the rest; `None` for a line that does not.
fn leading_keys(line: &[u8]) -> Option<(String, String)> {
    let rest = line.strip_prefix(b"{\"PartitionKey\":")?;
    let (partition_key, rest) = json_string(rest)?;
    let rest = rest.strip_prefix(b",\"RowKey\":")?;
    let (row_key, _) = json_string(rest)?;
    Some((partition_key, row_key))
}

/// The JSON string at the start of `bytes` and what follows it; `None` when none is there.
fn json_string(bytes: &[u8]) -> Option<(String, &[u8])> {
    let body = bytes.strip_prefix(b"\"")?;
    let mut escaped = false;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\\' => {
                escaped = true;
                i += 1;
            }
            b'"' => break,
            _ => {}
        }
        i += 1;
    }
    let (literal, rest) = (bytes.get(..i + 2)?, &bytes[(i + 2).min(bytes.len())..]);
    if literal.last() != Some(&b'"') || literal.len() < 2 {
        return None;
    }
    let text = if escaped {
        serde_json::from_slice(literal).ok()?
    } else {
        let text = std::str::from_utf8(&literal[1..literal.len() - 1]).ok()?;
        // A control character is not JSON unescaped: the full reading says so.
        if text.bytes().any(|b| b < 0x20) {
            return None;
        }
        text.to_owned()
    };
    Some((text, rest))
}

/// Reads one line (with or without its line ending) into an entity, with Storage's rules (`docs/rules.md` §1 to
/// §8); its `Timestamp` and `odata.etag`, if any, are kept as the entity's server metadata.
///
/// # Errors
/// [`DecodeError`]: invalid JSON, or a broken rule, naming the property.
pub fn read_entity(line: &[u8]) -> Result<Entity, DecodeError> {
    decode_entity(trim_line_end(line), None)
}

/// The line without its `\n` or `\r\n`.
pub fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The keys of a line as written, whether or not they are valid, for the report of a line that does not decode:
/// `None` for a key that is missing or not a JSON string (or for both, when the line is not a JSON object).
///
/// ```
/// use table_model_transfer::format::jsonl::raw_keys;
/// assert_eq!(raw_keys(br#"{"PartitionKey":"a#b","RowKey":7}"#), (Some("a#b".to_owned()), None));
/// assert_eq!(raw_keys(b"{not json"), (None, None));
/// ```
pub fn raw_keys(line: &[u8]) -> (Option<String>, Option<String>) {
    #[derive(Deserialize)]
    struct Keys {
        #[serde(rename = "PartitionKey", default)]
        partition_key: Option<serde_json::Value>,
        #[serde(rename = "RowKey", default)]
        row_key: Option<serde_json::Value>,
    }
    let string = |v: Option<serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => Some(s),
        _ => None,
    };
    match serde_json::from_slice::<Keys>(trim_line_end(line)) {
        Ok(keys) => (string(keys.partition_key), string(keys.row_key)),
        Err(_) => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_from_the_start_of_a_line_or_from_anywhere_in_it() {
        use crate::format::Keys;
        let keys = |line: &str| read_keys_line(line.as_bytes()).map(|r| r.map(|e| Keys::of(&e).to_string()));
        let expected =
            Some(Ok(Keys::of(&Entity::new(PartitionKey::new("p\"1").unwrap(), RowKey::new("é").unwrap())).to_string()));
        // As the writer puts them (escapes read by serde_json), and elsewhere in the object.
        assert_eq!(keys("{\"PartitionKey\":\"p\\\"1\",\"RowKey\":\"é\",\"N\":1}\n"), expected);
        assert_eq!(keys("{\"N\":[1,{}],\"RowKey\":\"\\u00e9\",\"PartitionKey\":\"p\\\"1\"}"), expected);
        assert_eq!(keys("  \n"), None);
        // Not an entity's keys: rejected with the rule.
        for bad in
            ["{\"PartitionKey\":\"p\"}", "{\"PartitionKey\":\"a/b\",\"RowKey\":\"r\"}", "[1]", "{\"PartitionKey\":\"p"]
        {
            let rejected = read_keys_line(bad.as_bytes()).unwrap().unwrap_err();
            assert!(!rejected.rule.is_empty(), "{bad}");
        }
        // The fast path and the full reading agree on every line the writer writes.
        let mut entity = Entity::new(PartitionKey::new("a\"b\u{1F600}").unwrap(), RowKey::new("é\u{FF5E}x").unwrap());
        entity.insert("PartitionKeyish".parse().unwrap(), "v").unwrap();
        let mut line = Vec::new();
        write_entity(&entity, &mut line).unwrap();
        assert!(leading_keys(&line).is_some());
        let fast = read_keys_line(&line).unwrap().unwrap();
        assert_eq!((fast.partition_key(), fast.row_key()), (entity.partition_key(), entity.row_key()));
    }
    use table_model::{DateTime, ETag, PartitionKey, RowKey};

    #[test]
    fn server_metadata_is_written_and_read_back() {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        let at: DateTime = "2024-01-02T03:04:05.1234567Z".parse().unwrap();
        entity.set_server_metadata(Some(at), Some(ETag::new("W/\"datetime'2024'\"")));
        let mut line = Vec::new();
        write_entity(&entity, &mut line).unwrap();
        assert_eq!(
            String::from_utf8(line.clone()).unwrap(),
            "{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"Timestamp@odata.type\":\"Edm.DateTime\",\
             \"Timestamp\":\"2024-01-02T03:04:05.1234567Z\",\"odata.etag\":\"W/\\\"datetime'2024'\\\"\"}\n"
        );
        let back = read_entity(&line).unwrap();
        assert_eq!(back.timestamp(), Some(at));
        assert_eq!(back.etag().map(ETag::as_str), Some("W/\"datetime'2024'\""));
    }

    #[test]
    fn every_edm_type_reads_back_bit_for_bit() {
        use table_model::{EdmBinary, EdmValue};
        let values = [
            EdmValue::Double(-0.0),
            EdmValue::Double(f64::NAN),
            EdmValue::Double(f64::INFINITY),
            EdmValue::Double(f64::NEG_INFINITY),
            EdmValue::Double(f64::from_bits(1)),
            EdmValue::Double(f64::MAX),
            EdmValue::Double(0.1),
            EdmValue::Int64(i64::MIN),
            EdmValue::Int64(i64::MAX),
            EdmValue::Int32(i32::MIN),
            EdmValue::DateTime("1601-01-01T00:00:00.0000000Z".parse().unwrap()),
            EdmValue::DateTime("9999-12-31T23:59:59.9999999Z".parse().unwrap()),
            EdmValue::Binary(EdmBinary::new((0..65_536).map(|i| (i % 251) as u8).collect::<Vec<_>>()).unwrap()),
            EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap()),
            EdmValue::Boolean(false),
            EdmValue::String(table_model::EdmString::new("").unwrap()),
            EdmValue::String(table_model::EdmString::new("é 世界 🎉 \"\n\u{7f}").unwrap()),
        ];
        let mut entity = Entity::new(PartitionKey::new("ünï").unwrap(), RowKey::new("日本").unwrap());
        for (i, value) in values.iter().enumerate() {
            entity.insert(format!("P{i}").parse().unwrap(), value.clone()).unwrap();
        }
        let mut line = Vec::new();
        write_entity(&entity, &mut line).unwrap();
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
        let back = read_entity(&line).unwrap();
        assert_eq!(back, entity);
        assert!(back.get::<f64>("P0").unwrap().is_sign_negative(), "-0.0 keeps its sign");
    }

    /// A page copied into lines ([`write_encoded`]) gives the lines of its decoded entities ([`write_entity`]),
    /// byte for byte, through the writer too (same file, same hash, same first and last keys).
    #[test]
    fn copied_lines_are_the_decoded_entities_lines() {
        use crate::format::EntityWriter as _;
        use table_model::json::EncodedPage;
        let entities = [
            r#"{"odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A10.7654321Z'\"","Timestamp":"2024-05-06T07:08:10.7654321Z","PartitionKey":"ünï","RowKey":"日本 1","S":"é 世界 🎉 \"q\" \\ \n\u001f","I":-2147483648,"L@odata.type":"Edm.Int64","L":"-9223372036854775808","D@odata.type":"Edm.Double","D":-0.0,"N@odata.type":"Edm.Double","N":"NaN","E@odata.type":"Edm.Double","E":5e-324,"B":false,"G@odata.type":"Edm.Guid","G":"C9DA6455-213D-42C9-9A79-3E9149A57833","T@odata.type":"Edm.DateTime","T":"1601-01-01T00:00:00Z","X@odata.type":"Edm.Binary","X":"AAECAw=="}"#,
            r#"{"PartitionKey":"p","RowKey":"2","Timestamp@odata.type":"Edm.DateTime","Timestamp":"9999-12-31T23:59:59.9999999Z","S@odata.type":"Edm.String","S":""}"#,
            r#"{"odata.etag":"W/\"2\"","PartitionKey":"p","RowKey":"3"}"#,
        ];
        let page = format!("{{\"odata.metadata\":\"m\",\"value\":[{}]}}", entities.join(","));
        let mut encoded = EncodedPage::new();
        assert!(encoded.read(page.as_bytes()), "the page is in the forms EncodedPage takes");
        let decoded = table_model::decode_query(page.as_bytes(), None).unwrap();
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        let mut fast_writer = JsonlWriter::new(Sink::stream("fast", &mut fast));
        let mut slow_writer = JsonlWriter::new(Sink::stream("slow", &mut slow));
        for (copied, entity) in encoded.iter().zip(&decoded) {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            write_encoded(&copied, &mut a);
            write_entity(entity, &mut b).unwrap();
            assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
            fast_writer.write_encoded(&copied).unwrap();
            slow_writer.write(entity).unwrap();
        }
        let (fast_file, slow_file) = (Box::new(fast_writer).finish().unwrap(), Box::new(slow_writer).finish().unwrap());
        assert_eq!(fast_file, slow_file);
        assert_eq!(fast, slow);
        assert_eq!(fast_file.entities, 3);
    }

    #[test]
    fn crlf_is_a_line_end() {
        let entity = read_entity(b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\r\n").unwrap();
        assert_eq!(entity.row_key().as_str(), "r");
    }

    #[test]
    fn hostile_lines_are_rejected_with_their_line_and_reading_goes_on() {
        let mut input = b"{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\n".to_vec();
        input.extend_from_slice(&vec![b'x'; 10 << 20]); // 2: 10 MB
        input.extend_from_slice(b"\n{\"PartitionKey\":\"p\",\"RowKey\":\"\xff\"}\n"); // 3: not UTF-8
        input.extend_from_slice(b"{\"PartitionKey\":\"p\",\"RowKey\":\"4\"}\n");
        input.extend_from_slice(b"{\"PartitionKey\":\"p\",\"Ro"); // 5: cut short
        let mut reader = JsonlReader::new("in.jsonl", Box::new(std::io::Cursor::new(input)));
        let mut records = Vec::new();
        while let Some(record) = reader.next_record().unwrap() {
            records.push((record.position.line, record.entity));
        }
        let lines: Vec<u64> = records.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5]);
        assert!(records[0].1.is_ok() && records[3].1.is_ok());
        let rejected = |i: usize| records[i].1.as_ref().unwrap_err();
        assert_eq!(
            rejected(1).rule,
            "the line has 10485761 bytes, over the 8388608 a line may have (an entity is at most 1 MiB); its first \
             1024 bytes are shown"
        );
        assert_eq!(rejected(1).text, "x".repeat(1024));
        assert_eq!(rejected(2).rule, "invalid JSON at line 1 column 31: invalid unicode code point");
        assert!(rejected(4).rule.starts_with("invalid JSON"), "{}", rejected(4).rule);
        assert_eq!(reader.bytes_read(), (10 << 20) + 1 + 3 * 34 + 23);
    }

    /// Read to be written, a line in the forms the service writes is its body, copied; any other line is read
    /// as `next_record` reads it (decoded, or rejected with the same rule); the server's members are dropped
    /// either way.
    #[test]
    fn lines_to_write_are_copied_where_the_service_wrote_them_and_decoded_otherwise() {
        let lines: [&[u8]; 6] = [
            // `tablectl export`'s line, with the server's members last.
            br#"{"PartitionKey":"p","RowKey":"1","N@odata.type":"Edm.Int64","N":"5","S":"a\"b","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-06T07:08:10.765Z","odata.etag":"W/\"x\""}"#,
            // An escape the encoder does not write, and whitespace: decoded.
            br#"{"PartitionKey":"p","RowKey":"2","S":"a\/b"}"#,
            br#"{ "PartitionKey": "p", "RowKey": "3" }"#,
            b"   ",
            br#"{"PartitionKey":"p","RowKey":"5","N@odata.type":"Edm.Int64","N":"x"}"#,
            b"{oops",
        ];
        let input = lines.join(&b"\r\n"[..]);
        let mut slow = JsonlReader::new("in.jsonl", Box::new(std::io::Cursor::new(input.clone())));
        let mut fast = JsonlReader::new("in.jsonl", Box::new(std::io::Cursor::new(input)));
        let mut kinds = Vec::new();
        while let Some(record) = slow.next_record().unwrap() {
            let to_write = fast.next_to_write().unwrap().unwrap();
            assert_eq!(to_write.position, record.position);
            match (record.entity, to_write.entity) {
                (Ok(mut entity), Ok(to_write)) => {
                    entity.set_server_metadata(None, None);
                    assert_eq!(to_write.to_entity().unwrap().as_ref(), &entity);
                    assert_eq!(
                        table_model::WriteEntity::encode(&to_write).unwrap(),
                        table_model::WriteEntity::encode(&entity).unwrap()
                    );
                    kinds.push(if matches!(to_write, ToWrite::Encoded(_)) { "copied" } else { "decoded" });
                }
                (Err(slow), Err(fast)) => {
                    assert_eq!(fast, slow);
                    kinds.push("rejected");
                }
                (slow, fast) => panic!("line {}: {slow:?} read to write as {fast:?}", record.position.line),
            }
        }
        assert!(fast.next_to_write().unwrap().is_none());
        assert_eq!(kinds, ["copied", "decoded", "decoded", "rejected", "rejected"]);
        assert_eq!(fast.bytes_read(), slow.bytes_read());
    }

    /// An export killed after a checkpoint and resumed from it: the file has each entity once, in each
    /// compression.
    #[test]
    fn a_compressed_file_resumed_at_a_checkpoint_has_each_entity_once() {
        use crate::format::{open_reader, Compression, EntityWriter as _};
        let entity = |i: u32| Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(format!("{i:03}")).unwrap());
        for compression in [Compression::None, Compression::Gzip, Compression::Zstd] {
            let dir =
                std::env::temp_dir().join(format!("tablectl-jsonl-resume-{compression:?}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("t.jsonl{}", compression.suffix()));
            let mut writer = JsonlWriter::with_compression(Sink::create(&path, false).unwrap(), compression);
            for i in 0..100 {
                writer.write(&entity(i)).unwrap();
            }
            let cut = writer.checkpoint().unwrap().unwrap();
            for i in 100..150 {
                writer.write(&entity(i)).unwrap();
            }
            drop(writer); // killed: entities 100 to 149 were written after the checkpoint
            let mut writer = JsonlWriter::with_compression(Sink::resume(&path, cut).unwrap(), compression);
            for i in 100..200 {
                writer.write(&entity(i)).unwrap();
            }
            Box::new(writer).finish().unwrap();
            let mut reader = open_reader(&path, None).unwrap();
            let mut keys = Vec::new();
            while let Some(record) = reader.next_record().unwrap() {
                keys.push(record.entity.unwrap().row_key().to_string());
            }
            let expected: Vec<String> = (0..200).map(|i| format!("{i:03}")).collect();
            assert_eq!(keys, expected, "{compression:?}");
            assert_eq!(reader.bytes_read(), std::fs::metadata(&path).unwrap().len(), "{compression:?}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
