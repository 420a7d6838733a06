//! A query page read straight into the bodies [`encode_entity`](super::encode_entity) writes for its entities,
//! without building an [`Entity`](crate::Entity): for a reader that writes entities in the wire format again
//! (`tablectl export` in JSON lines).
//!
//! [`EncodedPage::read`] takes only pages in the forms the service writes, and checks every entity as the decoder
//! does: each member is recognised (keys, `Timestamp`, `odata.etag`, a type annotation just before its property,
//! a property), each value is typed by the decoder's own function ([`typed_value`]) and written by the encoder's
//! own [`BodyWriter`], which checks the keys, the names, the repeats, the limits and the 252 properties again.
//! Only a string value is not decoded and encoded again: its JSON is copied when it already is the text the
//! encoder writes (`serde_json`'s escapes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00xx` in lowercase
//! for the other control characters; nothing else escaped), with its length counted from that text.
//!
//! Anything else (whitespace, another escape such as `\/` or `\u00e9`, a `null`, a nested value, an annotation
//! after its value or of another kind, `odata.*` members other than `odata.etag`, a key with an escape, a number
//! out of the common forms, any broken rule) makes [`read`](EncodedPage::read) return `false` and the caller
//! decodes the page with [`decode_query`](super::decode_query), which reads it, or refuses it with its error, as
//! always. So a page is never refused here, and a page read here has the entities and the bodies the decoder
//! and the encoder give: the property tests of this module check both against them.
//!
//! Layer: wire.

use super::decode::value::{timestamp, typed_value, JsonInt, Raw};
use super::encode::BodyWriter;
use crate::edm::datetime::DateTime;
use crate::edm::EdmType;
use std::borrow::Cow;
use std::ops::Range;

/// The entities of a query page as [`encode_entity`](super::encode_entity) writes them, with their keys and
/// server metadata: what [`read`](EncodedPage::read) made of the last page it took. Its buffers are kept from
/// page to page.
///
/// It takes only pages in the forms the service writes, and checks every entity as the decoder does: each
/// member is recognised (keys, `Timestamp`, `odata.etag`, a type annotation just before its property, a
/// property), each value is typed by the decoder's own function and written by the encoder's own
/// [`BodyWriter`](super::BodyWriter), which checks the keys, the names, the repeats, the limits and the 252
/// properties again. Only a string is not decoded and encoded again: its JSON is copied when it already is the
/// text the encoder writes (`serde_json`'s escapes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00xx` in
/// lowercase for the other control characters; nothing else escaped). Anything else (whitespace, another escape
/// such as `\/` or `\u00e9`, a `null`, a nested value, an annotation after its value, `odata.*` members other than
/// `odata.etag`, a key with an escape, any broken rule) is left to [`decode_query`](super::decode_query), which
/// reads the page, or refuses it with its error, as always.
///
/// ```
/// use table_model::json::{decode_query, encode_entity, EncodedPage};
/// let page = br#"{"odata.metadata":"https://a.table.core.windows.net/$metadata#T","value":[
/// {"odata.etag":"W/\"1\"","PartitionKey":"p","RowKey":"1","Timestamp":"2024-05-06T07:08:10.765Z","N":1,"Name":"Ada \"A\""}]}"#;
/// let page = page.iter().copied().filter(|&b| b != b'\n').collect::<Vec<u8>>();
/// let mut encoded = EncodedPage::new();
/// assert!(encoded.read(&page));
/// let entity = encoded.iter().next().unwrap();
/// let decoded = &decode_query(&page, None)?[0];
/// assert_eq!(entity.body, encode_entity(decoded)?.as_str());
/// assert_eq!((entity.partition_key, entity.row_key), ("p", "1"));
/// assert_eq!(entity.timestamp, decoded.timestamp());
/// assert_eq!(entity.etag_json, Some(r#""W/\"1\"""#));
/// // Whitespace is not a form the service writes: the page is left to the decoder.
/// assert!(!encoded.read(br#"{"value": []}"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct EncodedPage {
    /// The bodies and keys of the entities, one after the other.
    text: String,
    entities: Vec<Spans>,
    /// The buffer of the body being written.
    body: Vec<u8>,
    /// The `odata.*` names of the page object, for the repeat check.
    odata_names: Vec<Range<usize>>,
}

/// Where an entity's parts are in [`EncodedPage::text`].
#[derive(Debug, Clone)]
struct Spans {
    body: Range<usize>,
    entity_size: usize,
    partition_key: Range<usize>,
    row_key: Range<usize>,
    etag_json: Option<Range<usize>>,
    timestamp: Option<DateTime>,
}

/// One entity of an [`EncodedPage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncodedEntity<'a> {
    /// The `PartitionKey`, valid.
    pub partition_key: &'a str,
    /// The `RowKey`, valid.
    pub row_key: &'a str,
    /// The body [`encode_entity`](super::encode_entity) writes for the entity: the keys, then the properties.
    pub body: &'a str,
    /// The entity's size by the formula of `docs/rules.md` §4.2, in bytes, as
    /// [`EntityBody::entity_size`](super::EntityBody::entity_size) gives it for the body.
    pub entity_size: usize,
    /// The entity's `Timestamp`, when the page has it.
    pub timestamp: Option<DateTime>,
    /// The entity's `odata.etag` as a JSON string (quoted and escaped as `serde_json` writes it), when the page
    /// has it.
    pub etag_json: Option<&'a str>,
}

impl EncodedPage {
    /// An empty page.
    pub fn new() -> Self {
        EncodedPage::default()
    }

    /// Reads a query page (`{"odata.metadata": ..., "value": [...]}`), replacing the entities of the previous
    /// one. `true` when every entity was read: then [`decode_query`](super::decode_query) (without hints) reads
    /// the same entities from the page, and each entity's [`body`](EncodedEntity::body) is what
    /// [`encode_entity`](super::encode_entity) writes for it. `false` when the page is not all in the forms
    /// this reader takes (see [`EncodedPage`]): decode it.
    pub fn read(&mut self, page: &[u8]) -> bool {
        self.read_with(page, |this, c| this.read_page(c))
    }

    /// Reads one entity object (`{...}`, nothing before or after it: a line of JSON lines without its line end),
    /// replacing the entities of the previous read. `true` when it was read: then
    /// [`decode_entity`](super::decode_entity) reads the same entity from it, and its
    /// [`body`](EncodedEntity::body) is what [`encode_entity`](super::encode_entity) writes for it. `false` when
    /// the object is not in the forms this reader takes (see [`EncodedPage`]): decode it.
    ///
    /// ```
    /// use table_model::json::{decode_entity, encode_entity, EncodedPage};
    /// let line = br#"{"PartitionKey":"p","RowKey":"1","N@odata.type":"Edm.Int64","N":"7","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-06T07:08:10.765Z"}"#;
    /// let mut encoded = EncodedPage::new();
    /// assert!(encoded.read_one(line));
    /// let entity = encoded.get(0).unwrap();
    /// let decoded = decode_entity(line, None)?;
    /// assert_eq!(entity.body, encode_entity(&decoded)?.as_str());
    /// assert_eq!(entity.timestamp, decoded.timestamp());
    /// // A page is not one entity object, nor is an object with something after it.
    /// assert!(!encoded.read_one(br#"{"value":[]}"#));
    /// assert!(!encoded.read_one(br#"{"PartitionKey":"p","RowKey":"1"} "#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_one(&mut self, object: &[u8]) -> bool {
        self.read_with(object, |this, c| {
            this.read_entity(c)?;
            (c.at == c.text.len()).then_some(())
        })
    }

    /// Reads `json` with `read`, replacing what was read before; no entity is kept unless all of it was read.
    fn read_with(&mut self, json: &[u8], read: impl FnOnce(&mut Self, &mut Cursor<'_>) -> Option<()>) -> bool {
        self.text.clear();
        self.entities.clear();
        self.odata_names.clear();
        // UTF-8 is checked once, as the decoder does: every slice below is then a `str`.
        let Ok(json) = std::str::from_utf8(json) else { return false };
        // The bodies, keys and tags take about the JSON's length (less its annotations and punctuation): room
        // for them at once, where growing would copy them again and again.
        self.text.reserve(json.len());
        let read = read(self, &mut Cursor { text: json, at: 0 }).is_some();
        if !read {
            self.entities.clear();
        }
        read
    }

    /// The number of entities read.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether the page had no entity (or was not read).
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The entity at `index`.
    pub fn get(&self, index: usize) -> Option<EncodedEntity<'_>> {
        self.entities.get(index).map(|spans| self.entity(spans))
    }

    /// Keeps the first `len` entities (all of them, when there are fewer): a page cut where a range of keys
    /// ends.
    ///
    /// ```
    /// use table_model::json::EncodedPage;
    /// let mut page = EncodedPage::new();
    /// assert!(page.read(br#"{"value":[{"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2"}]}"#));
    /// page.truncate(1);
    /// assert_eq!(page.iter().map(|e| e.row_key).collect::<Vec<_>>(), ["1"]);
    /// ```
    pub fn truncate(&mut self, len: usize) {
        self.entities.truncate(len);
    }

    /// The entities, in the page's order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = EncodedEntity<'_>> + DoubleEndedIterator + '_ {
        self.entities.iter().map(|spans| self.entity(spans))
    }

    fn entity(&self, spans: &Spans) -> EncodedEntity<'_> {
        let text = self.text.as_str();
        EncodedEntity {
            partition_key: &text[spans.partition_key.clone()],
            row_key: &text[spans.row_key.clone()],
            body: &text[spans.body.clone()],
            entity_size: spans.entity_size,
            timestamp: spans.timestamp,
            etag_json: spans.etag_json.clone().map(|r| &text[r]),
        }
    }

    /// The page object: `odata.*` members (each once, a string) and `value` (once), nothing after it.
    fn read_page(&mut self, c: &mut Cursor<'_>) -> Option<()> {
        c.eat(b'{')?;
        let mut value = false;
        if c.peek()? != b'}' {
            loop {
                let name = c.string()?;
                c.eat(b':')?;
                if name.text == "value" && !name.escaped {
                    if std::mem::replace(&mut value, true) {
                        return None;
                    }
                    self.read_entities(c)?;
                } else if name.text.starts_with("odata.") && !name.escaped {
                    let seen = &self.odata_names;
                    if seen.iter().any(|r| &c.text[r.clone()] == name.text) {
                        return None;
                    }
                    self.odata_names.push(name.range);
                    c.string()?;
                } else {
                    return None;
                }
                if !c.comma_or(b'}')? {
                    break;
                }
            }
        } else {
            c.at += 1;
        }
        (value && c.at == c.text.len()).then_some(())
    }

    /// The `value` array.
    fn read_entities(&mut self, c: &mut Cursor<'_>) -> Option<()> {
        c.eat(b'[')?;
        if c.peek()? == b']' {
            c.at += 1;
            return Some(());
        }
        loop {
            self.read_entity(c)?;
            if !c.comma_or(b']')? {
                return Some(());
            }
        }
    }

    /// One entity object, encoded into `text`.
    fn read_entity(&mut self, c: &mut Cursor<'_>) -> Option<()> {
        c.eat(b'{')?;
        let mut system = System::default();
        let mut writer: Option<BodyWriter> = None;
        // A type annotation just read, which the next member must be the property of.
        let mut pending: Option<(&str, EdmType)> = None;
        let mut members = c.peek()? != b'}';
        if !members {
            c.at += 1;
        }
        while members {
            let name = c.string()?;
            c.eat(b':')?;
            if name.escaped {
                return None;
            }
            let name = name.text;
            match name {
                "PartitionKey" | "RowKey" => {
                    let value = c.string()?;
                    let slot = if name == "PartitionKey" { &mut system.partition_key } else { &mut system.row_key };
                    if value.escaped || slot.is_some() || writer.is_some() || pending.is_some() {
                        return None;
                    }
                    *slot = Some(value.text);
                }
                "Timestamp" => {
                    let value = c.string()?;
                    if value.escaped || system.timestamp.is_some() || pending.is_some() {
                        return None;
                    }
                    system.timestamp = Some(timestamp(Raw::Str(Cow::Borrowed(value.text))).ok()??);
                }
                "odata.etag" => {
                    let value = c.string()?;
                    if system.etag_json.is_some() || pending.is_some() {
                        return None;
                    }
                    system.etag_json = Some(value.json);
                }
                "Timestamp@odata.type" => {
                    let value = c.string()?;
                    if value.text != "Edm.DateTime" || value.escaped || system.timestamp_annotated || pending.is_some()
                    {
                        return None;
                    }
                    system.timestamp_annotated = true;
                }
                _ if name.starts_with("odata.") => return None,
                _ => {
                    if let Some(target) = name.strip_suffix("@odata.type") {
                        let value = c.string()?;
                        if pending.is_some() || value.escaped || matches!(target, "PartitionKey" | "RowKey") {
                            return None;
                        }
                        pending = Some((target, EdmType::from_name(value.text)?));
                    } else {
                        if name.contains('@') {
                            return None;
                        }
                        let annotation = match pending.take() {
                            Some((target, edm_type)) if target == name => Some(edm_type),
                            Some(_) => return None,
                            None => None,
                        };
                        let w = match &mut writer {
                            Some(w) => w,
                            None => writer.insert(system.writer(std::mem::take(&mut self.body))?),
                        };
                        property(c, w, name, annotation)?;
                    }
                }
            }
            members = c.comma_or(b'}')?;
        }
        if pending.is_some() {
            return None;
        }
        let writer = match writer {
            Some(w) => w,
            None => system.writer(std::mem::take(&mut self.body))?,
        };
        let body = writer.finish().ok()?;
        let entity_size = body.entity_size();
        let body = body.into_bytes();
        // The writer writes UTF-8 only: the keys and names of a `str`, values escaped by `serde_json`.
        let spans = Spans {
            body: push(&mut self.text, std::str::from_utf8(&body).ok()?),
            entity_size,
            partition_key: push(&mut self.text, system.partition_key?),
            row_key: push(&mut self.text, system.row_key?),
            etag_json: system.etag_json.map(|json| push(&mut self.text, json)),
            timestamp: system.timestamp,
        };
        self.body = body;
        self.entities.push(spans);
        Some(())
    }
}

/// Appends `s` to `text`; where it is.
fn push(text: &mut String, s: &str) -> Range<usize> {
    let start = text.len();
    text.push_str(s);
    start..text.len()
}

/// The system members of the entity being read.
#[derive(Default)]
struct System<'a> {
    partition_key: Option<&'a str>,
    row_key: Option<&'a str>,
    timestamp: Option<DateTime>,
    timestamp_annotated: bool,
    etag_json: Option<&'a str>,
}

impl System<'_> {
    /// The body's writer, once both keys were read (they come before the properties).
    fn writer(&self, buf: Vec<u8>) -> Option<BodyWriter> {
        Some(BodyWriter::with_buffer(buf, self.partition_key?, self.row_key?))
    }
}

/// Reads a property's value and writes it.
fn property(c: &mut Cursor<'_>, w: &mut BodyWriter, name: &str, annotation: Option<EdmType>) -> Option<()> {
    let raw = match c.peek()? {
        b'"' => {
            let value = c.string()?;
            if matches!(annotation, None | Some(EdmType::String)) {
                w.property_str_json(name, value.json.as_bytes(), value.utf16_len);
                return Some(());
            }
            if value.escaped {
                return None;
            }
            Raw::Str(Cow::Borrowed(value.text))
        }
        b't' => {
            c.literal("true")?;
            Raw::Bool(true)
        }
        b'f' => {
            c.literal("false")?;
            Raw::Bool(false)
        }
        b'-' | b'0'..=b'9' => c.number()?,
        _ => return None,
    };
    let value = typed_value(raw, annotation, None).ok()?;
    w.property(name, &value);
    Some(())
}

/// A JSON string as read: its text (unescaped only when it has no escape), its JSON (with the quotes).
struct Str<'a> {
    /// The text between the quotes, as written.
    text: &'a str,
    /// The string as written, with its quotes.
    json: &'a str,
    /// Where `text` is in the page.
    range: Range<usize>,
    /// Whether `text` has escapes (all of them as `serde_json` writes them).
    escaped: bool,
    /// The UTF-16 length of the string the JSON stands for.
    utf16_len: usize,
}

/// The position in the page.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// `,` (`true`: more follows) or `close` (`false`).
    fn comma_or(&mut self, close: u8) -> Option<bool> {
        let b = self.peek()?;
        self.at += 1;
        match b {
            b',' => Some(true),
            _ if b == close => Some(false),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let end = self.at + word.len();
        (self.text.as_bytes().get(self.at..end)? == word.as_bytes()).then(|| self.at = end)
    }

    /// A string whose escapes are all as `serde_json` writes them; `None` for any other escape, and for what
    /// JSON refuses in a string (a control character, a string not closed).
    fn string(&mut self) -> Option<Str<'a>> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        if bytes.get(start) != Some(&b'"') {
            return None;
        }
        let mut i = start + 1;
        // The bytes the escapes take beyond the one UTF-16 unit each stands for.
        let mut escape_extra = 0;
        let mut ascii = true;
        loop {
            let (run, high) = plain_run(&bytes[i..]);
            i += run;
            ascii &= !high;
            match *bytes.get(i)? {
                b'"' => break,
                b'\\' => {
                    let len = escape_len(bytes.get(i + 1..)?)?;
                    escape_extra += len - 1;
                    i += len;
                }
                // A control character, which JSON refuses in a string.
                _ => return None,
            }
        }
        self.at = i + 1;
        let text = &self.text[start + 1..i];
        Some(Str {
            text,
            json: &self.text[start..=i],
            range: start + 1..i,
            escaped: escape_extra > 0,
            // ASCII text has a UTF-16 unit per byte.
            utf16_len: if ascii { text.len() } else { table_model_rules::utf16_len(text.as_bytes()) } - escape_extra,
        })
    }

    /// A number in JSON's grammar, as `serde_json` hands it over: an integer of up to 18 digits (no `-0`, which
    /// it reads as a float), or a number with a fraction or an exponent, parsed by `serde_json` itself.
    fn number(&mut self) -> Option<Raw<'a>> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start + usize::from(bytes[start] == b'-');
        let digits = |i: &mut usize| {
            let from = *i;
            while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - from
        };
        let int_start = i;
        let int_digits = digits(&mut i);
        if int_digits == 0 || (int_digits > 1 && bytes[int_start] == b'0') {
            return None;
        }
        let mut float = false;
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            float = true;
            if digits(&mut i) == 0 {
                return None;
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            float = true;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                return None;
            }
        }
        self.at = i;
        let text = &self.text[start..i];
        if float {
            return serde_json::from_str::<f64>(text).ok().map(Raw::Float);
        }
        if int_digits > 18 || text == "-0" {
            return None;
        }
        let value: i64 = text.parse().ok()?;
        Some(Raw::Int(if value < 0 { JsonInt::Negative(value) } else { JsonInt::Positive(value as u64) }))
    }
}

/// How many bytes `bytes` starts with that a JSON string holds as they are (none is `"`, `\\` or a control
/// character), and whether any of them is not ASCII. Eight bytes at a time (the classic tests for a zero byte
/// and a byte below a bound, on a `u64` read little-endian, whose lowest flagged byte is the first such byte),
/// the last few one by one.
fn plain_run(bytes: &[u8]) -> (usize, bool) {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    // The high bit of each byte of `x` below `n` (for `n` up to 128) is set in the result. A byte above one so
    // flagged may be flagged too (the subtraction's borrow), but never a byte below it: the lowest flag is exact.
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGHS;
    let mut seen = 0u64;
    let mut i = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = u64::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]]);
        let special = below(word, 0x20) | below(word ^ QUOTES, 1) | below(word ^ BACKSLASHES, 1);
        if special != 0 {
            // The bytes before the first special one, the lowest first.
            let run = special.trailing_zeros() / 8;
            seen |= word & ((1u64 << (run * 8)) - 1);
            return (i + run as usize, seen & HIGHS != 0);
        }
        seen |= word;
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b < 0x20 || b == b'"' || b == b'\\' {
            break;
        }
        seen |= u64::from(b);
        i += 1;
    }
    (i, seen & HIGHS != 0)
}

/// The length of the escape `escape` starts with (after its `\`), counting the `\`, when it is one that
/// `serde_json` writes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, or `\u00xx` (lowercase) for another control
/// character.
fn escape_len(escape: &[u8]) -> Option<usize> {
    match *escape.first()? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let hex = escape.get(1..5)?;
            let lower_hex = |b: u8| match b {
                b'0'..=b'9' => Some(b - b'0'),
                b'a'..=b'f' => Some(b - b'a' + 10),
                _ => None,
            };
            let code = (lower_hex(hex[2])? << 4) | lower_hex(hex[3])?;
            let short = matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
            (hex[..2] == *b"00" && code < 0x20 && !short).then_some(6)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edm::datetime::DateTime;
    use crate::json::{decode_entity, decode_query, encode_entity};
    use crate::{ETag, Entity};
    use proptest::prelude::*;
    use uuid::Uuid;

    /// A value of an entity, as the test writes it into a page.
    #[derive(Debug, Clone)]
    enum Value {
        String(String),
        Int32(i32),
        Int64(i64),
        Double(f64),
        Boolean(bool),
        Guid(u128),
        /// Ticks, and how many fraction digits to write (at least as many as the ticks need).
        DateTime(i64, usize),
        Binary(Vec<u8>),
    }

    /// How the test writes a page: the forms the service writes, and others the decoder reads too.
    #[derive(Debug, Clone)]
    struct Style {
        /// `odata.etag` and `Timestamp` first (the service), or last (`tablectl`'s lines).
        system_first: bool,
        /// `Timestamp` with its annotation.
        timestamp_annotated: bool,
        /// Annotations on String, Int32 and Boolean too (full metadata's), else only where JSON needs them.
        annotate_all: bool,
        /// An annotation after its value instead of before.
        annotation_after: bool,
        /// Strings escaped as the service may escape them: `\/`, and `\u` for non-ASCII.
        service_escapes: bool,
        /// Integral doubles as JSON integers.
        integral_doubles: bool,
        /// The keys after the properties.
        keys_last: bool,
    }

    impl Style {
        /// The forms [`EncodedPage`] must take: what the service writes at minimal metadata.
        fn is_service(&self) -> bool {
            !self.annotate_all
                && !self.annotation_after
                && !self.service_escapes
                && !self.integral_doubles
                && !self.keys_last
        }
    }

    /// A JSON string as `serde_json` writes it, or with the service's other escapes.
    fn json_str(s: &str, service_escapes: bool) -> String {
        let canonical = serde_json::to_string(s).unwrap();
        if !service_escapes {
            return canonical;
        }
        let mut out = String::new();
        for ch in canonical.chars() {
            match ch {
                '/' => out.push_str("\\/"),
                c if !c.is_ascii() => {
                    for unit in c.encode_utf16(&mut [0; 2]) {
                        out.push_str(&format!("\\u{unit:04X}"));
                    }
                }
                c => out.push(c),
            }
        }
        out
    }

    fn datetime_text(ticks: i64, digits: usize) -> String {
        let full = DateTime::from_ticks(ticks).unwrap().to_string();
        // `yyyy-mm-ddThh:mm:ss.fffffffZ`: keep `digits` of the 7 (the ticks need at most that many).
        let (head, fraction) = full[..full.len() - 1].split_once('.').unwrap();
        if digits == 0 {
            format!("{head}Z")
        } else {
            format!("{head}.{}Z", &fraction[..digits])
        }
    }

    /// The member(s) of one property: its annotation (if written) and its value, in the style's order.
    fn property_json(name: &str, value: &Value, style: &Style) -> String {
        let (edm, json) = match value {
            Value::String(s) => ("Edm.String", json_str(s, style.service_escapes)),
            Value::Int32(v) => ("Edm.Int32", v.to_string()),
            Value::Int64(v) => ("Edm.Int64", format!("\"{v}\"")),
            Value::Double(v) if v.is_nan() => ("Edm.Double", "\"NaN\"".to_owned()),
            Value::Double(v) if v.is_infinite() => {
                ("Edm.Double", if *v > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" }.to_owned())
            }
            Value::Double(v) if style.integral_doubles && v.fract() == 0.0 && v.abs() < 1e15 && *v != 0.0 => {
                ("Edm.Double", format!("{}", *v as i64))
            }
            Value::Double(v) => ("Edm.Double", serde_json::to_string(v).unwrap()),
            Value::Boolean(v) => ("Edm.Boolean", v.to_string()),
            Value::Guid(v) => ("Edm.Guid", format!("\"{}\"", Uuid::from_u128(*v).hyphenated())),
            Value::DateTime(ticks, digits) => ("Edm.DateTime", format!("\"{}\"", datetime_text(*ticks, *digits))),
            Value::Binary(b) => {
                use base64::Engine as _;
                ("Edm.Binary", format!("\"{}\"", base64::engine::general_purpose::STANDARD.encode(b)))
            }
        };
        let annotated = style.annotate_all || !matches!(value, Value::String(_) | Value::Int32(_) | Value::Boolean(_));
        let value = format!("\"{name}\":{json}");
        if !annotated {
            return value;
        }
        let annotation = format!("\"{name}@odata.type\":\"{edm}\"");
        if style.annotation_after {
            format!("{value},{annotation}")
        } else {
            format!("{annotation},{value}")
        }
    }

    /// One entity object.
    fn entity_json(
        keys: (&str, &str),
        properties: &[(String, Value)],
        system: (Option<(i64, usize)>, Option<&str>),
        style: &Style,
    ) -> String {
        let mut members = Vec::new();
        let keys = [
            format!("\"PartitionKey\":{}", json_str(keys.0, style.service_escapes)),
            format!("\"RowKey\":{}", json_str(keys.1, style.service_escapes)),
        ];
        let mut system_members = Vec::new();
        if let Some(etag) = system.1 {
            system_members.push(format!("\"odata.etag\":{}", json_str(etag, style.service_escapes)));
        }
        if let Some((ticks, digits)) = system.0 {
            if style.timestamp_annotated {
                system_members.push("\"Timestamp@odata.type\":\"Edm.DateTime\"".to_owned());
            }
            system_members.push(format!("\"Timestamp\":\"{}\"", datetime_text(ticks, digits)));
        }
        let props: Vec<String> = properties.iter().map(|(n, v)| property_json(n, v, style)).collect();
        if style.system_first {
            members.extend(system_members.iter().cloned());
        }
        if !style.keys_last {
            members.extend(keys.iter().cloned());
        }
        members.extend(props);
        if style.keys_last {
            members.extend(keys.iter().cloned());
        }
        if !style.system_first {
            members.extend(system_members);
        }
        format!("{{{}}}", members.join(","))
    }

    fn page_json(entities: &[String]) -> Vec<u8> {
        format!(
            "{{\"odata.metadata\":\"https://a.table.core.windows.net/$metadata#T\",\"value\":[{}]}}",
            entities.join(",")
        )
        .into_bytes()
    }

    /// Text of every kind: ASCII, the characters JSON escapes, `/`, DEL, non-ASCII and astral characters.
    fn text(max: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                4 => proptest::char::range('a', 'z'),
                1 => proptest::sample::select(vec!['"', '\\', '/', '\n', '\t', '\r', '\u{8}', '\u{c}', '\0', '\u{1f}', '\u{7f}', ' ']),
                1 => proptest::sample::select(vec!['é', 'ß', '日', '\u{2028}', '\u{fffd}', '😀', '\u{10ffff}']),
                1 => any::<char>(),
            ],
            0..max,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    /// Keys: mostly valid, some with the characters keys may not have.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            12 => "[a-zA-Z0-9 _.é日-]{0,12}",
            1 => text(8),
        ]
    }

    /// Property names: mostly valid and distinct, some invalid, some repeated.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            40 => "[A-Z][a-z0-9]{0,3}",
            1 => proptest::sample::select(vec![
                "", "1a", "a-b", "a@b", "odata.x", "Timestamp", "PartitionKey", "é", "_x", "a@odata.type",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            proptest::sample::select(vec![
                0.0,
                -0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::MIN_POSITIVE,
                f64::from_bits(1),
                -f64::from_bits(1),
                f64::MAX,
                f64::MIN,
                f64::EPSILON,
                0.1,
                1e15,
                1e16,
                1e300,
                5.0,
                -1234.5,
                9007199254740993.0,
            ]),
            (-1_000_000i64..1_000_000).prop_map(|v| v as f64),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let ticks = DateTime::MIN.ticks()..=DateTime::MAX.ticks();
        prop_oneof![
            3 => text(24).prop_map(Value::String),
            1 => any::<i32>().prop_map(Value::Int32),
            1 => prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), Just(0)].prop_map(Value::Int64),
            2 => double().prop_map(Value::Double),
            1 => any::<bool>().prop_map(Value::Boolean),
            1 => any::<u128>().prop_map(Value::Guid),
            1 => (ticks, 0..=7usize).prop_map(|(t, d)| datetime(t, d)),
            1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Binary),
        ]
    }

    /// A DateTime of `ticks` cut to what `digits` fraction digits can write.
    fn datetime(ticks: i64, digits: usize) -> Value {
        let unit = 10i64.pow(7 - digits as u32);
        let cut = ticks - ticks.rem_euclid(unit);
        Value::DateTime(cut.max(DateTime::MIN.ticks()), digits)
    }

    fn style() -> impl Strategy<Value = Style> {
        (any::<[bool; 7]>(), 0..3u8).prop_map(|(b, service)| {
            // Half the pages in the service's own forms.
            let s = service > 0;
            Style {
                system_first: b[0] || s,
                timestamp_annotated: b[1],
                annotate_all: b[2] && !s,
                annotation_after: b[3] && !s,
                service_escapes: b[4] && !s,
                integral_doubles: b[5] && !s,
                keys_last: b[6] && !s,
            }
        })
    }

    type EntitySpec = ((String, String), Vec<(String, Value)>, (Option<(i64, usize)>, Option<String>));

    fn entity_spec() -> impl Strategy<Value = EntitySpec> {
        let ticks = DateTime::MIN.ticks()..=DateTime::MAX.ticks();
        (
            (key(), key()),
            proptest::collection::vec((name(), value()), 0..10),
            (
                proptest::option::of((ticks, 0..=7usize).prop_map(|(t, d)| match datetime(t, d) {
                    Value::DateTime(t, d) => (t, d),
                    _ => unreachable!(),
                })),
                proptest::option::of(prop_oneof![
                    Just("W/\"datetime'2024-05-06T07%3A08%3A10.7654321Z'\"".to_owned()),
                    text(12)
                ]),
            ),
        )
    }

    fn page_of(specs: &[EntitySpec], style: &Style) -> Vec<u8> {
        let entities: Vec<String> = specs
            .iter()
            .map(|(keys, props, (ts, etag))| entity_json((&keys.0, &keys.1), props, (*ts, etag.as_deref()), style))
            .collect();
        page_json(&entities)
    }

    /// An entity as the decoder reads it, and its body as the encoder writes it (or why it does not).
    type Slow = (Entity, Result<String, String>);

    /// What `decode_query` and `encode_entity` give for a page: each entity, its body (or why it has none).
    fn slow(page: &[u8]) -> Result<Vec<Slow>, String> {
        let entities = decode_query(page, None).map_err(|e| e.to_string())?;
        Ok(entities
            .into_iter()
            .map(|e| {
                let body = encode_entity(&e).map(|b| b.as_str().to_owned()).map_err(|e| e.to_string());
                (e, body)
            })
            .collect())
    }

    /// Checks a page read by [`EncodedPage`] against the decoder and the encoder: same entities, same bodies.
    /// Returns whether it was read.
    fn check(page: &[u8]) -> Result<bool, TestCaseError> {
        let mut encoded = EncodedPage::new();
        let read = encoded.read(page);
        let slow = slow(page);
        if !read {
            prop_assert!(encoded.is_empty());
            return Ok(false);
        }
        let Ok(slow) = slow else {
            return Err(TestCaseError::fail(format!("read a page the decoder refuses: {:?}", slow.err())));
        };
        prop_assert_eq!(encoded.len(), slow.len());
        for (fast, (entity, body)) in encoded.iter().zip(&slow) {
            let Ok(body) = body else {
                return Err(TestCaseError::fail(format!("read an entity the encoder refuses: {body:?}")));
            };
            prop_assert_eq!(fast.body, body.as_str());
            prop_assert_eq!(fast.partition_key, entity.partition_key().as_str());
            prop_assert_eq!(fast.row_key, entity.row_key().as_str());
            prop_assert_eq!(fast.timestamp, entity.timestamp());
            let etag = entity.etag().map(|e| serde_json::to_string(ETag::as_str(e)).unwrap());
            prop_assert_eq!(fast.etag_json, etag.as_deref());
        }
        Ok(true)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Pages of entities of every EDM type, in the service's forms and others: a page read is read as the
        /// decoder and the encoder read and write it; one in the service's forms, with entities the encoder
        /// writes as the service wrote them, is read.
        #[test]
        fn a_page_read_has_the_decoders_entities_and_the_encoders_bodies(
            specs in proptest::collection::vec(entity_spec(), 0..5),
            style in style(),
        ) {
            let page = page_of(&specs, &style);
            let read = check(&page)?;
            if style.is_service() && let Ok(slow) = slow(&page) {
                // Keys that need no escape, and entities the encoder writes: the service's forms are read.
                let plain = |k: &str| serde_json::to_string(k).unwrap() == format!("\"{k}\"");
                // (A property named `odata.*` is control information the decoder skips: not the service's.)
                let simple = specs.iter().all(|((pk, rk), props, _)| {
                    plain(pk) && plain(rk) && props.iter().all(|(name, _)| !name.starts_with("odata."))
                });
                if simple && slow.iter().all(|(_, body)| body.is_ok()) {
                    prop_assert!(read, "not read: {}", String::from_utf8_lossy(&page));
                }
            }
        }

        /// Any edit of a page (a byte replaced, removed or inserted, a cut): read only as the decoder reads it.
        #[test]
        fn an_edited_page_is_read_as_the_decoder_reads_it_or_left_to_it(
            specs in proptest::collection::vec(entity_spec(), 1..3),
            style in style(),
            edits in proptest::collection::vec((any::<prop::sample::Index>(), 0..4u8, proptest::sample::select(
                b"\"\\{}[],:.-+eE0123456789aznulltrue@ \x00\x1f\x7f\xc3\xa9\xff".to_vec())), 1..4),
        ) {
            let mut page = page_of(&specs, &style);
            for (at, kind, byte) in edits {
                let i = at.index(page.len());
                match kind {
                    0 => page[i] = byte,
                    1 => { page.remove(i); }
                    2 => page.insert(i, byte),
                    _ => page.truncate(i),
                }
                if page.is_empty() {
                    break;
                }
            }
            check(&page)?;
        }

        /// Members spliced from other entities into an entity (repeated keys, names and annotations, annotations
        /// away from their value, `null`s, nested values): read only as the decoder reads it.
        #[test]
        fn spliced_members_are_read_as_the_decoder_reads_them_or_left_to_it(
            spec in entity_spec(),
            style in style(),
            splice in proptest::collection::vec((any::<prop::sample::Index>(), proptest::sample::select(vec![
                "\"PartitionKey\":\"p\"", "\"RowKey\":\"r\"", "\"Timestamp\":\"2024-01-01T00:00:00Z\"",
                "\"odata.etag\":\"x\"", "\"A\":1", "\"A@odata.type\":\"Edm.Int64\"", "\"A\":null", "\"A\":{}",
                "\"A\":[1]", "\"B@odata.type\":\"Edm.Double\"", "\"odata.id\":\"x\"", "\"A@x\":1",
                "\"Timestamp@odata.type\":\"Edm.DateTime\"", "\"Timestamp@odata.type\":\"Edm.String\"",
                "\"A@odata.type\":\"Edm.Unknown\"", "\"A\":\"x\"", "\"A\":123456789012", "\"A\":-0",
            ])), 1..4),
        ) {
            let mut json = page_of(std::slice::from_ref(&spec), &style);
            for (at, member) in splice {
                // Only after an entity's `{` or a `,`, so that the page stays JSON, mostly.
                let places: Vec<usize> = json.iter().enumerate().skip(40)
                    .filter(|&(_, &b)| b == b',' || b == b'{').map(|(i, _)| i + 1).collect();
                if let Some(&i) = places.get(at.index(places.len().max(1))) {
                    let separator = if json.get(i) == Some(&b'}') { "" } else { "," };
                    let insert = format!("{member}{separator}");
                    json.splice(i..i, insert.bytes());
                }
            }
            check(&json)?;
        }

        /// One entity object alone (a line of `tablectl export`, whose system members come last), edited or
        /// not: read as the decoder reads it and the encoder writes it, or left to them; one in the service's
        /// forms, which the encoder writes as it is written, is read.
        #[test]
        fn an_entity_object_alone_is_read_as_the_decoder_reads_it_or_left_to_it(
            ((keys, properties, system), style) in (entity_spec(), style()),
            edits in proptest::collection::vec((any::<prop::sample::Index>(), 0..5u8, proptest::sample::select(
                b"\"\\{}[],:.-+eE0123456789aznulltrue@ \x00\x1f\x7f\xc3\xa9\xff".to_vec())), 0..3),
        ) {
            let system = (system.0, system.1.as_deref());
            let mut object = entity_json((&keys.0, &keys.1), &properties, system, &style).into_bytes();
            let edited = !edits.is_empty();
            for (at, kind, byte) in edits {
                if object.is_empty() {
                    break;
                }
                let i = at.index(object.len());
                match kind {
                    0 => object[i] = byte,
                    1 => { object.remove(i); }
                    2 => object.insert(i, byte),
                    3 => object.truncate(i),
                    _ => object.push(byte),
                }
            }
            let mut encoded = EncodedPage::new();
            let read = encoded.read_one(&object);
            let slow = decode_entity(&object, None)
                .map_err(|e| e.to_string())
                .and_then(|e| encode_entity(&e).map(|b| (b.as_str().to_owned(), e)).map_err(|e| e.to_string()));
            match (read, slow) {
                (true, Ok((body, entity))) => {
                    prop_assert_eq!(encoded.len(), 1);
                    let fast = encoded.get(0).unwrap();
                    prop_assert_eq!(fast.body, body.as_str());
                    prop_assert_eq!(fast.entity_size, encode_entity(&entity).unwrap().entity_size());
                    prop_assert_eq!((fast.partition_key, fast.row_key), (entity.partition_key().as_str(), entity.row_key().as_str()));
                    prop_assert_eq!(fast.timestamp, entity.timestamp());
                }
                (true, Err(e)) => return Err(TestCaseError::fail(format!("read what the decoder or encoder refuses: {e}"))),
                (false, slow) => {
                    prop_assert!(encoded.is_empty());
                    let plain = |k: &str| serde_json::to_string(k).unwrap() == format!("\"{k}\"");
                    let simple = plain(&keys.0) && plain(&keys.1) && properties.iter().all(|(n, _)| !n.starts_with("odata."));
                    prop_assert!(edited || !style.is_service() || !simple || slow.is_err(),
                        "not read: {}", String::from_utf8_lossy(&object));
                }
            }
        }
    }

    #[test]
    fn what_the_encoder_refuses_is_left_to_it() {
        let props = |n: usize, value: &str| -> String { (0..n).map(|i| format!(",\"P{i}\":\"{value}\"")).collect() };
        let page = |props: String| page_json(&[format!("{{\"PartitionKey\":\"p\",\"RowKey\":\"r\"{props}}}")]);
        let mut encoded = EncodedPage::new();
        // 252 properties are read, 253 are refused by the decoder.
        assert!(encoded.read(&page(props(252, "x"))));
        assert!(!encoded.read(&page(props(253, "x"))));
        assert!(decode_query(&page(props(253, "x")), None).is_err());
        // Over 1 MiB by the size formula.
        let big = page(props(20, &"x".repeat(32_000)));
        assert!(!encoded.read(&big));
        assert!(decode_query(&big, None).is_err());
        // A string over its 32,768 UTF-16 units, with escapes counted as one unit each.
        let long = page(props(1, &"\\n".repeat(32_769)));
        assert!(!encoded.read(&long) && decode_query(&long, None).is_err());
        let at_limit = page(props(1, &"\\n".repeat(32_768)));
        assert!(encoded.read(&at_limit) && decode_query(&at_limit, None).is_ok());
    }

    #[test]
    fn plain_run_matches_its_definition() {
        let definition = |bytes: &[u8]| {
            let run = bytes.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\').unwrap_or(bytes.len());
            (run, !bytes[..run].is_ascii())
        };
        for text in ["", "a", "é", "日本", "😀", "a\u{10ffff}b", "ab\"cdefghij", "abcdefgh\\", "abcdefghijklmnop\n"]
        {
            assert_eq!(plain_run(text.as_bytes()), definition(text.as_bytes()), "{text:?}");
        }
        for at in 0..20 {
            for special in [b'"', b'\\', 0, 0x1f, 0x20, 0x7f, 0x80, 0xff] {
                let mut bytes = vec![b'x'; 20];
                bytes[at] = special;
                assert_eq!(plain_run(&bytes), definition(&bytes), "{special} at {at}");
                bytes[19 - at] = b'"';
                assert_eq!(plain_run(&bytes), definition(&bytes), "{special} at {at}, a quote at {}", 19 - at);
            }
        }
    }

    #[test]
    fn the_benchmark_page_is_read() {
        let mut page = b"{\"odata.metadata\":\"http://127.0.0.1:1/a/$metadata#T\",\"value\":[".to_vec();
        page.extend_from_slice(
            br#"{"odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A10.7654321Z'\"","Timestamp":"2024-05-06T07:08:10.7654321Z","PartitionKey":"tenant-0042","RowKey":"1","Name":"Ada","Age":36,"Visits@odata.type":"Edm.Int64","Visits":"1234567890123","Score@odata.type":"Edm.Double","Score":98.6,"Active":true,"Id@odata.type":"Edm.Guid","Id":"c9da6455-213d-42c9-9a79-3e9149a57833","Created@odata.type":"Edm.DateTime","Created":"2024-05-06T07:08:09.1234567Z","Avatar@odata.type":"Edm.Binary","Avatar":"AAECAw==","Notes":"Prefers \"analytical engine\""}"#,
        );
        page.extend_from_slice(b"]}");
        let mut encoded = EncodedPage::new();
        assert!(encoded.read(&page));
        let entity = &decode_query(&page, None).unwrap()[0];
        assert_eq!(encoded.get(0).unwrap().body, encode_entity(entity).unwrap().as_str());
    }
}
