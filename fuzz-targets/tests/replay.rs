//! The fuzz targets on stable: every file of `fuzz/corpus/<target>/` (the seed corpus) and
//! `fuzz/regressions/<target>/` (past crashes) through its target's function, and bounded proptests of random
//! bytes and of mutated corpus inputs per target.
//!
//! The proptests run 64 cases per target by default, which takes seconds; set `FUZZ_CASES` for a longer
//! search (`FUZZ_CASES=20000 cargo test -p table-model-fuzz-targets --release --test replay`). A failure
//! prints the input; save it under `fuzz/regressions/<target>/` with the fix (see `fuzz/README.md`).

use proptest::prelude::*;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use table_model_fuzz_targets::{Target, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted by name; none when the folder does not exist.
fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = fs::read_dir(&dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> =
        entries.map(|e| e.expect("a readable folder").path()).filter(|p| p.is_file()).collect();
    files.sort();
    files.into_iter().map(|p| (p.clone(), fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))).collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> =
        entries.map(|e| e.expect("a readable folder").file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Runs one input, turning a panic into the file's name and the message.
fn run(target: Target, path: &Path, data: &[u8]) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| target(data))).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        format!("{}: {message}", path.display())
    })
}

#[test]
fn every_target_has_a_fuzz_binary_and_a_seed_corpus() {
    let manifest = fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    assert!(manifest.contains("cargo-fuzz = true") && manifest.contains("libfuzzer-sys"), "fuzz/Cargo.toml");
    let mut binaries = Vec::new();
    for (name, _) in TARGETS {
        let source = fs::read_to_string(fuzz_dir().join("fuzz_targets").join(format!("{name}.rs")))
            .unwrap_or_else(|e| panic!("fuzz/fuzz_targets/{name}.rs: {e}"));
        assert!(source.contains(&format!("table_model_fuzz_targets::{name}(")), "fuzz_targets/{name}.rs calls {name}");
        assert!(
            manifest.contains(&format!("name = \"{name}\"\npath = \"fuzz_targets/{name}.rs\"")),
            "fuzz/Cargo.toml has a [[bin]] for {name}"
        );
        assert!(inputs("corpus", name).len() >= 3, "fuzz/corpus/{name}/ has a handful of seeds");
        binaries.push(format!("{name}.rs"));
    }
    binaries.sort();
    // Nothing in the fuzz project that no target of this crate backs.
    assert_eq!(names_in(&fuzz_dir().join("fuzz_targets")), binaries);
    let mut targets: Vec<String> = TARGETS.iter().map(|(name, _)| name.to_string()).collect();
    targets.sort();
    for kind in ["corpus", "regressions"] {
        for folder in names_in(&fuzz_dir().join(kind)) {
            assert!(targets.contains(&folder), "fuzz/{kind}/{folder} names no target");
        }
    }
}

#[test]
fn corpus_and_regressions_replay() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, target) in TARGETS {
        for kind in ["corpus", "regressions"] {
            for (path, data) in inputs(kind, name) {
                count += 1;
                if let Err(failure) = run(*target, &path, &data) {
                    failures.push(failure);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {count} inputs failed:\n{}", failures.len(), failures.join("\n"));
    assert!(count >= 3 * TARGETS.len());
}

fn cases() -> u32 {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

/// Bytes that mean something to the parsers, inserted by the mutator.
const TOKENS: &[&str] = &[
    "\"",
    "'",
    "''",
    ":",
    ",",
    "{",
    "}",
    "[",
    "]",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "-0",
    "1e400",
    "18446744073709551616",
    "\"odata.etag\":\"W/\\\"1\\\"\",",
    "\"odata.metadata\":\"m\",",
    "@odata.type",
    "\"Edm.Int64\"",
    "\"Edm.Double\"",
    "\"Edm.DateTime\"",
    "\"Edm.Binary\"",
    "\"Edm.Guid\"",
    "\"NaN\"",
    "\"PartitionKey\":\"p\",",
    "\"RowKey\":\"r\",",
    "\"value\":[",
    "\r\n",
    "\r\n\r\n",
    "--",
    "HTTP/1.1 ",
    "999:",
    "0:",
    "boundary=",
    "multipart/mixed; ",
    ";",
    "=",
    "AccountName=",
    "AccountKey=",
    "TableEndpoint=",
    "SharedAccessSignature=",
    "UseDevelopmentStorage=true",
    "EndpointSuffix=",
    "https://",
    "http://",
    "[::1]",
    "@",
    "#",
    "?",
    "%",
    "%2",
    "~",
    "~2F",
    " ",
    "\0",
    "-",
    ".",
    "T",
    "Z",
    "+23:59",
    "0000000000",
    "9999",
    "\u{FFFF}",
    "\u{10FFFF}",
    "é",
    " and ",
    " or ",
    "not (",
    " eq ",
    "datetime'",
    "guid'",
    "X'",
    "42L",
];

/// A few edits of an input: byte changes, insertions of tokens or random bytes, deletions and copies.
fn mutate(mut data: Vec<u8>, edits: &[(u8, usize, usize, Vec<u8>)]) -> Vec<u8> {
    for (op, at, len, bytes) in edits {
        let at = if data.is_empty() { 0 } else { at % (data.len() + 1) };
        match op % 6 {
            0 if at < data.len() => data[at] = bytes.first().copied().unwrap_or(0),
            1 => {
                let token = TOKENS[len % TOKENS.len()].as_bytes();
                data.splice(at..at, token.iter().copied());
            }
            2 => {
                data.splice(at..at, bytes.iter().copied());
            }
            3 => {
                let end = (at + len % 16).min(data.len());
                data.drain(at..end);
            }
            4 => {
                let end = (at + len % 64).min(data.len());
                let copy = data[at..end].to_vec();
                let to = len % (data.len() + 1);
                data.splice(to..to, copy);
            }
            _ => {
                let end = (at + len % 64).min(data.len());
                let copy = data[at..end].repeat(1 + len % 8);
                data.splice(end..end, copy);
            }
        }
    }
    data
}

fn corpus_and_regressions(name: &str) -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = inputs("corpus", name).into_iter().map(|(_, d)| d).collect();
    all.extend(inputs("regressions", name).into_iter().map(|(_, d)| d));
    all
}

fn edits() -> impl Strategy<Value = Vec<(u8, usize, usize, Vec<u8>)>> {
    prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), prop::collection::vec(any::<u8>(), 0..8)), 1..6)
}

macro_rules! fuzz_proptests {
    ($($name:ident),* $(,)?) => {
        mod random_bytes {
            use super::*;
            $(
                proptest! {
                    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]
                    #[test]
                    fn $name(data in prop::collection::vec(any::<u8>(), 0..256)) {
                        table_model_fuzz_targets::$name(&data);
                    }
                }
            )*
        }

        mod mutated_corpus {
            use super::*;
            $(
                proptest! {
                    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]
                    #[test]
                    fn $name(pick in any::<usize>(), edits in edits()) {
                        let seeds = corpus_and_regressions(stringify!($name));
                        prop_assume!(!seeds.is_empty());
                        let data = mutate(seeds[pick % seeds.len()].clone(), &edits);
                        table_model_fuzz_targets::$name(&data);
                    }
                }
            )*
        }
    };
}

fuzz_proptests!(
    entity_json,
    query_json,
    typed_entity_json,
    typed_query_json,
    batch_response,
    error_response,
    table_listing,
    access_policies,
    service_properties,
    service_stats,
    connection_string,
    endpoint,
    sas_token,
    datetime,
    time_key,
    integer_key,
    composite_key,
    continuation,
    filter_literal,
    filter_parse,
);

#[test]
fn the_proptests_cover_every_target() {
    let source = include_str!("replay.rs");
    let list = source.split("\nfuzz_proptests!(\n").nth(1).expect("the invocation");
    let list = &list[..list.find(')').expect("its end")];
    let covered: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let targets: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(covered, targets);
}
