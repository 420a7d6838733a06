//! Large non-ASCII strings round-trip exactly: Azurite decodes each network chunk of a request body on its
//! own, so a character split between two chunks arrives as U+FFFD; the SDK writes non-ASCII characters as
//! `\u` escapes to Azurite (`docs/rules.md` §5.6), which no chunk boundary can split.
//!
//! Each entity holds a string of exactly 32,768 UTF-16 code units (the largest the service stores) of 2-, 3- and
//! 4-byte characters, after an ASCII prefix whose length differs from entity to entity, so that the chunk
//! boundaries of the 24 bodies fall at different offsets inside the characters. A garbled character shows as
//! a different string read back, or as `400 PropertyValueTooLarge` (two U+FFFD for one character).

use crate::support::azurite;
use table_model::limits::STRING_MAX_UTF16;
use table_model::{Entity, PartitionKey, RowKey, TableEntity};

/// How many entities are written one by one, each with another prefix length.
const ENTITIES: usize = 24;

/// A string of exactly [`STRING_MAX_UTF16`] code units: `prefix` ASCII letters, then a repeating mix of
/// characters of 2, 3 and 4 bytes of UTF-8 (the last one a surrogate pair, two code units), shifted by `seed`.
pub fn text(prefix: usize, seed: usize) -> String {
    const MIX: [char; 7] = ['é', '中', '😀', 'ß', '€', '𝄞', 'ж'];
    let mut s = "a".repeat(prefix);
    let mut units = prefix;
    let mut i = seed;
    while units < STRING_MAX_UTF16 {
        let mut c = MIX[i % MIX.len()];
        if units + c.len_utf16() > STRING_MAX_UTF16 {
            c = 'ü';
        }
        s.push(c);
        units += c.len_utf16();
        i += 1;
    }
    assert_eq!(s.encode_utf16().count(), STRING_MAX_UTF16);
    s
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(partition_key = "derived")]
struct Note {
    #[table(row_key)]
    row: String,
    #[table(rename = "Texte")]
    text: String,
    #[table(rename = "Název")]
    title: String,
}

#[tokio::test]
async fn large_non_ascii_strings_round_trip_exactly() {
    let azurite = azurite!();
    let table = azurite.table("NonAscii").await;
    // Half derived structs, half dynamic entities; each with its own prefix length and mix.
    for n in 0..ENTITIES {
        let row = format!("{n:02}");
        let body = text(n * 7 % 61, n);
        if n % 2 == 0 {
            let note = Note { row: row.clone(), text: body, title: format!("čeština {n} 😀") };
            table.insert(&note, None).await.unwrap_or_else(|e| panic!("entity {n}: {e}"));
            let read: Note = table
                .get(&PartitionKey::new("derived").unwrap(), &RowKey::new(row).unwrap(), None)
                .await
                .unwrap_or_else(|e| panic!("entity {n}: {e}"));
            assert!(read == note, "entity {n}: the derived struct read back differs");
        } else {
            let pk = PartitionKey::new("dynamic ü").unwrap();
            let entity = Entity::new(pk.clone(), RowKey::new(format!("{row} ж")).unwrap())
                .with("Texte".parse().unwrap(), body.clone())
                .unwrap()
                .with("Zählung".parse().unwrap(), n as i64)
                .unwrap();
            table.insert(&entity, None).await.unwrap_or_else(|e| panic!("entity {n}: {e}"));
            let read: Entity =
                table.get(&pk, entity.row_key(), None).await.unwrap_or_else(|e| panic!("entity {n}: {e}"));
            assert!(read.get::<String>("Texte").unwrap() == body, "entity {n}: the string read back differs");
            assert_eq!(read.get::<i64>("Zählung").unwrap(), n as i64);
        }
    }
}

#[tokio::test]
async fn a_batch_of_large_non_ascii_strings_round_trips_exactly() {
    let azurite = azurite!();
    let table = azurite.table("NonAsciiBatch").await;
    // Eight entities of about 200 KB each as escaped JSON: one body of 1.6 MB, many network chunks.
    let notes: Vec<Note> =
        (0..8).map(|n| Note { row: format!("b{n}"), text: text(n * 13 % 31, n + 3), title: format!("ε{n}") }).collect();
    let mut batch = table.batch(PartitionKey::new("derived").unwrap());
    for note in &notes {
        batch.insert(note).unwrap();
    }
    table.submit_transaction(&batch, None).await.unwrap_or_else(|e| panic!("{e}"));
    for note in &notes {
        let read: Note = table
            .get(&PartitionKey::new("derived").unwrap(), &RowKey::new(note.row.clone()).unwrap(), None)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", note.row));
        assert!(read == *note, "{}: the derived struct read back differs", note.row);
    }
}
