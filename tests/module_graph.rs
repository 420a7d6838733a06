//! The modules of each library crate of the workspace import each other without a circle, and each imports only
//! its own layer or the layers below it, so that a crate reads bottom up ([`CRATES`] lists each crate's layers:
//! `table-model`'s rules, model, wire, requests, client).
//!
//! The tests read every file of a crate's `src/` and build the graph of which module names which:
//!
//! - A module is a file: `lib.rs` is the crate root, `foo.rs` is `foo`, and the files of the folder `foo/` are
//!   the submodules of `foo`. An inline `mod x { ... }` belongs to its file.
//! - A module uses another when its code names it: in a `use` (any visibility, under `#[cfg]` or not, at the
//!   top of the file or in a function) or in a path in the code (`crate::limits::ENTITY_MAX_BYTES`), through
//!   `crate::`, `super::`, `self::` or the name of a child module. Comments, string literals and
//!   `#[cfg(test)]` items are not read: a unit test may reach above its module (the tests of the batch
//!   builder read batch responses, which the response layer above reads).
//! - A path names the deepest module it goes through: `crate::response::Continuation` uses `response`, which
//!   re-exports it, since that is the file a reader opens. The crate root is the exception: it is the facade,
//!   so `crate::DateTime` uses the module that the root re-exports `DateTime` from.
//!
//! The rules:
//!
//! 1. No cycle among the children of any module: among the top-level modules (each with its submodules), and
//!    among the files of each folder (`key/*.rs`, each with its own submodules). A submodule may use its
//!    parent, and the parent its submodules: `key/int.rs` implements the `Key` trait of `key.rs`, which
//!    re-exports what `key/int.rs` defines.
//! 2. Each top-level module says its layer in one line of its header, `//! Layer: <layer>.`, one of
//!    its crate's layers ([`CRATES`]); its submodules are in its layer. A module uses only modules of its own layer
//!    or below.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// Each crate checked, with its layers bottom up and how many modules and uses it has at least (a check of the
/// reader: it found the crate, not next to nothing).
const CRATES: [(&str, &[&str], usize, usize); 9] = [
    // The rules both the runtime and the derive check names and keys with: the limits, UTF-8 helpers and how a
    // value is shown in a message, then the rules themselves.
    ("table-model-rules", &["base", "rules"], 8, 30),
    ("table-model", &["rules", "model", "wire", "requests", "client"], 40, 300),
    // The derive: the error collection and name cases, the parsed input, its checks, then the generated code.
    ("table-model-derive", &["base", "parse", "check", "expand"], 8, 30),
    // The transfer engine: what every layer uses, then files, then the service, then the operations.
    ("table-model-transfer", &["base", "files", "service", "operations"], 20, 80),
    // tablectl: the parts the commands use (errors, output, progress, endpoints, SQL's pieces), the arguments,
    // then the commands.
    ("table-model-cli", &["parts", "arguments", "commands"], 15, 30),
    // Arrow: the error, the EDM to Arrow mapping, entities as Arrow (a schema inferred from them, record
    // batches of them and back), then Parquet files of entities.
    ("table-model-arrow", &["base", "mapping", "entities", "files"], 5, 15),
    // The SQL provider: the translation of filters, the execution plans, the provider (`AzureTable`), then the
    // codec that carries the table and its plans to other machines.
    ("table-model-datafusion", &["parts", "plans", "provider", "codec"], 7, 15),
    // The fuzz targets' bodies, each on its own.
    ("fuzz-targets", &["targets"], 4, 10),
    // The tests' shared helpers: the Azurite endpoint, the fault proxy, loopback servers and entities, then the
    // fault suites' clients over the proxy.
    ("test-utils", &["base", "harness"], 4, 0),
];

/// The layers of `table-model`, the tests of the checker's own rules use.
const LAYERS: &[&str] = CRATES[1].1;

#[test]
fn no_cycle_between_modules() {
    for (name, _, modules, uses) in CRATES {
        let problems = workspace_crate(name, modules, uses).cycles();
        assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n\n"));
    }
}

#[test]
fn each_module_uses_its_own_layer_or_those_below() {
    for (name, layers, modules, uses) in CRATES {
        let problems = workspace_crate(name, modules, uses).layer_problems(layers);
        assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
    }
}

/// A cycle is reported with its modules in order, and where each of them names the next.
#[test]
fn a_cycle_is_spelled_out() {
    let krate = read_crate(&[
        ("lib.rs", "mod a;\nmod b;\npub use b::Thing;\n"),
        ("a.rs", "//! A.\n//! Layer: model.\n\nuse crate::Thing;\n"),
        ("b.rs", "//! B.\n//! Layer: model.\n\npub struct Thing;\n\nfn f() {\n    crate::a::g();\n}\n"),
    ]);
    assert_eq!(
        krate.cycles(),
        ["a cycle among the top-level modules: a -> b -> a\n  (modules in this circle: a, b)\n  a -> b: src/a.rs:4 \
          crate::Thing\n  b -> a: src/b.rs:7 crate::a::g"]
    );
    // Within a folder: siblings may not use each other in a circle; a child and its parent may.
    let krate = read_crate(&[
        ("lib.rs", "mod low;\n"),
        ("low.rs", "//! Low.\n//! Layer: model.\nmod x;\nmod y;\nuse x::X;\npub struct Z;\n"),
        ("low/x.rs", "use super::y::Y;\nuse super::Z;\npub struct X;\n"),
        ("low/y.rs", "pub struct Y;\nfn f() -> super::x::X { todo!() }\n"),
    ]);
    assert_eq!(
        krate.cycles(),
        ["a cycle among the submodules of `low`: low::x -> low::y -> low::x\n  (modules in this circle: low::x, \
          low::y)\n  low::x -> low::y: src/low/x.rs:1 super::y::Y\n  low::y -> low::x: src/low/y.rs:2 super::x::X"]
    );
}

/// What is read and what is not: comments, literals and `#[cfg(test)]` items are not code, use trees are
/// flattened, and a module under two `#[cfg]`s is one module.
#[test]
fn only_code_is_read() {
    let krate = read_crate(&[
        ("lib.rs", "mod high;\nmod low;\n#[cfg(feature = \"x\")]\nmod other;\n#[cfg(not(feature = \"x\"))]\nmod other {\n    pub(crate) mod part;\n}\n"),
        ("high.rs", "//! High.\n//! Layer: wire.\nuse crate::{low::{self, Low as _}, other::part::Part};\n"),
        (
            "low.rs",
            "//! Low, not `crate::high::A`.\n//! Layer: model.\n// crate::high::B\n/* crate::high::C /* nested */ \
             crate::high::D */\nconst S: &str = \"crate::high::E \\\" crate::high::F\";\nconst R: &str = \
             r#\"crate::high::G \" crate::high::H\"#;\nconst Q: char = '\"';\nconst P: char = '\\'';\nfn f<'a>(x: \
             &'a str) -> &'a str { x }\npub struct Low;\n#[cfg(test)]\nmod tests {\n    use crate::high::I;\n}\n\
             #[cfg(test)]\nfn g() { crate::high::J(); }\n",
        ),
        ("other.rs", "//! Other.\n//! Layer: model.\npub(crate) mod part;\n"),
        ("other/part.rs", "pub struct Part;\n"),
    ]);
    let edges: Vec<_> =
        krate.edges.iter().map(|e| format!("{} -> {}: {}", show(&e.from), show(&e.to), e.site)).collect();
    assert_eq!(
        edges,
        [
            "high -> low: src/high.rs:3 crate::low",
            "high -> low: src/high.rs:3 crate::low::Low",
            "high -> other::part: \
          src/high.rs:3 crate::other::part::Part"
        ]
    );
    assert!(krate.layer_problems(LAYERS).is_empty(), "{:?}", krate.layer_problems(LAYERS));
    // A use of a layer above is refused.
    let krate = read_crate(&[
        ("lib.rs", "mod high;\nmod low;\n"),
        ("high.rs", "//! High.\n//!\n//! Layer: wire.\npub fn up() {}\n"),
        ("low.rs", "//! Low.\n//!\n//! Layer: model.\nfn f() { super::high::up() }\n"),
    ]);
    assert_eq!(
        krate.layer_problems(LAYERS),
        ["`low` (model) uses `high` (wire), a layer above: src/low.rs:4 super::high::up"]
    );
}

/// A crate of the workspace as its files are, checked to have more than `modules` modules and `uses` uses.
fn workspace_crate(name: &str, modules: usize, uses: usize) -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(name).join("src");
    let mut files = BTreeMap::new();
    read_dir(&src, &src, &mut files);
    // A binary's root (`main.rs`, `bin/*.rs`) is not a module of the library.
    files.remove("main.rs");
    files.retain(|path, _| !path.starts_with("bin/"));
    let krate = Crate::read(&files, &package_name(name).replace('-', "_")).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(krate.modules.len() > modules, "{name}: only {} modules found", krate.modules.len());
    assert!(krate.edges.len() > uses, "{name}: only {} uses found", krate.edges.len());
    krate
}

/// The name of the package in the directory `dir` (`test-utils` holds `table-model-test-utils`), from its manifest.
fn package_name(dir: &str) -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let line = manifest.lines().find(|l| l.starts_with("name = \"")).unwrap_or_else(|| panic!("{dir}: no name"));
    line.trim_start_matches("name = \"").trim_end_matches('"').to_owned()
}

fn read_crate(files: &[(&str, &str)]) -> Crate {
    Crate::read(&files.iter().map(|(f, s)| (f.to_string(), s.to_string())).collect(), "table_model").unwrap()
}

fn read_dir(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            read_dir(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.strip_prefix(root).unwrap().to_str().unwrap().replace('\\', "/");
            files.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// A module path from the crate root: `["key", "int"]`; empty for the root.
type ModPath = Vec<String>;

fn show(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_owned()
    } else {
        path.join("::")
    }
}

/// A use of one module by another, and where it is.
#[derive(Clone, Debug)]
struct Edge {
    from: ModPath,
    to: ModPath,
    /// `src/edm.rs:5 crate::limits::STRING_MAX_UTF16`.
    site: String,
}

#[derive(Debug)]
struct Module {
    file: String,
    /// The child modules, file-backed or inline, by name.
    children: BTreeMap<String, ModPath>,
    /// The module of the file: the module itself, or for an inline module the one of its file.
    file_module: ModPath,
}

struct Crate {
    /// The crate's own name in paths (`table_model`, which `extern crate self as table_model;` makes a path
    /// to the root); the same name in another crate is that crate, not a module of this one.
    name: String,
    modules: BTreeMap<ModPath, Module>,
    edges: Vec<Edge>,
    /// The `//! Layer:` word of each top-level module (`None` when there is no such line).
    layers: BTreeMap<String, Option<String>>,
}

/// A token of code: an identifier (`crate`, `$crate`), `::`, or one other character; and its line.
#[derive(Clone, Debug)]
struct Token {
    text: String,
    line: usize,
}

/// A path that code names, from the (inline) module it is named in.
struct Use {
    scope: ModPath,
    path: Vec<String>,
    /// The name a `use` binds (the last segment, or its alias); `None` for a path in code and a glob.
    bound: Option<String>,
    line: usize,
}

impl Crate {
    /// Reads the crate named `name` in paths from its files (path relative to `src/` -> source), from `lib.rs`
    /// down.
    fn read(files: &BTreeMap<String, String>, name: &str) -> Result<Crate, String> {
        let mut krate =
            Crate { name: name.to_owned(), modules: BTreeMap::new(), edges: Vec::new(), layers: BTreeMap::new() };
        // Each file read: its module, its name and its code.
        let mut read: Vec<(ModPath, String, Vec<Token>)> = Vec::new();
        let mut test_files = BTreeSet::new();
        let mut declared = BTreeSet::new();
        let mut queue = VecDeque::from([(ModPath::new(), "lib.rs".to_owned())]);
        while let Some((path, file)) = queue.pop_front() {
            let source = files.get(&file).ok_or_else(|| format!("module `{}`: no file src/{file}", show(&path)))?;
            let (tokens, decls) = declarations(&tokenize(&strip(source)), &path);
            let path_attributes = path_attributes(source);
            // The folder of the file's submodules.
            let dir = if file == "lib.rs" || file.ends_with("/mod.rs") {
                file.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"))
            } else {
                format!("{}/", file.trim_end_matches(".rs"))
            };
            let module = Module { file: file.clone(), children: BTreeMap::new(), file_module: path.clone() };
            krate.modules.insert(path.clone(), module);
            // A module declared twice, under `#[cfg]`s that exclude each other, is read the first time, and
            // the submodules of the second declaration are not.
            let mut duplicates: Vec<ModPath> = Vec::new();
            for decl in decls {
                if duplicates.iter().any(|d| decl.path.starts_with(d)) {
                    continue;
                }
                if !declared.insert(decl.path.clone()) {
                    duplicates.push(decl.path);
                    continue;
                }
                if decl.inline {
                    let module = Module { file: file.clone(), children: BTreeMap::new(), file_module: path.clone() };
                    krate.modules.insert(decl.path.clone(), module);
                } else {
                    // In an inline module, the folder is that of the inline modules it is in.
                    let dir = decl.path[path.len()..decl.path.len() - 1].iter().fold(dir.clone(), |d, m| d + m + "/");
                    let child_file = match path_attributes.get(&decl.name) {
                        Some(p) => format!("{dir}{p}"),
                        None if files.contains_key(&format!("{dir}{}.rs", decl.name)) => {
                            format!("{dir}{}.rs", decl.name)
                        }
                        None => format!("{dir}{}/mod.rs", decl.name),
                    };
                    if decl.test_only {
                        test_files.insert(child_file);
                        continue;
                    }
                    queue.push_back((decl.path.clone(), child_file));
                }
                let parent = &decl.path[..decl.path.len() - 1];
                krate.modules.get_mut(parent).unwrap().children.insert(decl.name, decl.path);
            }
            if path.len() == 1 {
                krate.layers.insert(path[0].clone(), layer_line(source));
            }
            read.push((path, file, tokens));
        }
        let unread: Vec<_> =
            files.keys().filter(|f| !test_files.contains(*f) && !read.iter().any(|(_, file, _)| file == *f)).collect();
        if !unread.is_empty() {
            return Err(format!("files that no `mod` declares: {unread:?}"));
        }

        // What `crate::Name` stands for: the module of each name the root's `use` items bind.
        let mut reexports = BTreeMap::new();
        for u in uses(&read[0].2, &[], name) {
            if let (Some(target), Some(name)) = (krate.resolve(&u.scope, &u.path, &BTreeMap::new()), u.bound) {
                reexports.insert(name, target);
            }
        }
        for (path, file, tokens) in &read {
            for u in uses(tokens, path, name) {
                if let Some(target) = krate.resolve(&u.scope, &u.path, &reexports) {
                    let to = krate.modules[&target].file_module.clone();
                    if *path != to && !to.is_empty() {
                        let site = format!("src/{file}:{} {}", u.line, u.path.join("::"));
                        krate.edges.push(Edge { from: path.clone(), to, site });
                    }
                }
            }
        }
        Ok(krate)
    }

    /// The module a path names from the module `scope`; `None` for a path outside the crate (another crate,
    /// or a local name).
    fn resolve(&self, scope: &[String], path: &[String], reexports: &BTreeMap<String, ModPath>) -> Option<ModPath> {
        let (mut module, rest) = match path.first()?.as_str() {
            "crate" | "$crate" => (ModPath::new(), &path[1..]),
            name if name == self.name => (ModPath::new(), &path[1..]),
            "self" => (scope.to_vec(), &path[1..]),
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                (scope[..scope.len().checked_sub(supers)?].to_vec(), &path[supers..])
            }
            name if self.modules[scope].children.contains_key(name) => (scope.to_vec(), path),
            _ => return None,
        };
        for segment in rest {
            match self.modules[&module].children.get(segment) {
                Some(child) => module = child.clone(),
                None if module.is_empty() => return reexports.get(segment).cloned(),
                None => break,
            }
        }
        Some(module)
    }

    /// Every cycle among the children of a module, spelled out.
    fn cycles(&self) -> Vec<String> {
        let mut found = Vec::new();
        for parent in self.modules.keys() {
            // The uses between two children of `parent`, or their submodules, as uses between those children.
            let child_of =
                |m: &ModPath| (m.len() > parent.len() && m.starts_with(parent)).then(|| m[..=parent.len()].to_vec());
            let mut graph: BTreeMap<ModPath, BTreeMap<ModPath, Vec<&Edge>>> = BTreeMap::new();
            for edge in &self.edges {
                if let (Some(a), Some(b)) = (child_of(&edge.from), child_of(&edge.to))
                    && a != b
                {
                    graph.entry(a).or_default().entry(b).or_default().push(edge);
                }
            }
            let among = match parent.is_empty() {
                true => "the top-level modules".to_owned(),
                false => format!("the submodules of `{}`", show(parent)),
            };
            for component in strongly_connected(&graph) {
                let cycle = shortest_cycle(&graph, &component);
                let mut text = format!(
                    "a cycle among {among}: {}\n  (modules in this circle: {})",
                    cycle.iter().chain(cycle.first()).map(|m| show(m)).collect::<Vec<_>>().join(" -> "),
                    component.iter().map(|m| show(m)).collect::<Vec<_>>().join(", ")
                );
                for (from, targets) in graph.iter().filter(|(from, _)| component.contains(*from)) {
                    for (to, edges) in targets.iter().filter(|(to, _)| component.contains(*to)) {
                        let more = match edges.len() {
                            1 => String::new(),
                            n => format!(" (and {} more)", n - 1),
                        };
                        text.push_str(&format!("\n  {} -> {}: {}{more}", show(from), show(to), edges[0].site));
                    }
                }
                found.push(text);
            }
        }
        found
    }

    /// Top-level modules without a known `Layer:` line, and uses of a layer above.
    fn layer_problems(&self, layers: &[&str]) -> Vec<String> {
        let mut problems = Vec::new();
        let mut rank = BTreeMap::new();
        for (module, layer) in &self.layers {
            match layer.as_deref().and_then(|l| layers.iter().position(|k| *k == l)) {
                Some(r) => {
                    rank.insert(module.clone(), r);
                }
                None => problems.push(format!(
                    "module `{module}` (src/{}): its header has no line `//! Layer: <layer>.` with a layer of {layers:?} \
                     (found {layer:?})",
                    self.modules[&vec![module.clone()]].file
                )),
            }
        }
        for edge in self.edges.iter().filter(|e| !e.from.is_empty()) {
            if let (Some(&from), Some(&to)) = (rank.get(&edge.from[0]), rank.get(&edge.to[0]))
                && to > from
            {
                problems.push(format!(
                    "`{}` ({}) uses `{}` ({}), a layer above: {}",
                    show(&edge.from),
                    layers[from],
                    show(&edge.to),
                    layers[to],
                    edge.site
                ));
            }
        }
        problems
    }
}

/// The word after `//! Layer: ` in a file's header (its first `//!` lines, and the inner attributes among them
/// that make doc lines, such as `#![cfg_attr(feature = "derive", doc = "```")]`); more than one such line is an
/// error.
fn layer_line(source: &str) -> Option<String> {
    let mut found = source
        .lines()
        .take_while(|l| l.starts_with("//!") || l.starts_with("#!["))
        .filter_map(|l| l.strip_prefix("//! Layer: "))
        .map(|l| l.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("").to_owned());
    let first = found.next();
    match found.next() {
        Some(_) => Some("(more than one Layer line)".to_owned()),
        None => first,
    }
}

/// Blanks comments and string and character literals (their text becomes spaces, their line breaks stay), so
/// that nothing in them reads as code.
fn strip(source: &str) -> String {
    let c: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, s: &[char]| out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let start = i;
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            blank(&mut out, &c[start..i]);
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            blank(&mut out, &c[start..i]);
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(c.len());
            blank(&mut out, &c[start..i]);
        } else if c[i] == '\'' {
            // A character literal ('x', '\'', '\u{1F600}'), or a lifetime or label ('a), which stays.
            if c.get(i + 1) == Some(&'\\') {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i = (i + 1).min(c.len());
                blank(&mut out, &c[start..i]);
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
                blank(&mut out, &c[start..i]);
            } else {
                out.push('\'');
                i += 1;
            }
        } else if is_ident(c[i]) {
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // A raw string: r"..", r#".."#, br#".."#, cr"..".
            let hashes = c[i..].iter().take_while(|&&ch| ch == '#').count();
            if matches!(word.as_str(), "r" | "br" | "cr") && c.get(i + hashes) == Some(&'"') {
                i += hashes + 1;
                let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                while i < c.len() && !c[i..].starts_with(&close) {
                    i += 1;
                }
                i = (i + close.len()).min(c.len());
                blank(&mut out, &c[start..i]);
            } else {
                out.push_str(&word);
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn tokenize(code: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut line = 1;
    let c: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' || (ch == '$' && c.get(i + 1).is_some_and(|n| n.is_alphabetic())) {
            let start = i;
            i += 1;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            tokens.push(Token { text: c[start..i].iter().collect(), line });
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            tokens.push(Token { text: "::".to_owned(), line });
            i += 2;
        } else {
            tokens.push(Token { text: ch.to_string(), line });
            i += 1;
        }
    }
    tokens
}

/// A `mod` declaration.
#[derive(Debug)]
struct Decl {
    name: String,
    path: ModPath,
    /// `mod x { ... }`, part of its file.
    inline: bool,
    /// `#[cfg(test)] mod x;`: a file that is not read.
    test_only: bool,
}

/// The tokens without the `#[cfg(test)]` items, and the `mod` declarations of the file and of its inline
/// modules.
fn declarations(tokens: &[Token], file_module: &[String]) -> (Vec<Token>, Vec<Decl>) {
    let text = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    // The index after the brackets opened at `i`.
    let close = |mut i: usize| {
        let mut depth = 0i32;
        while i < tokens.len() {
            match text(i) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                _ => {}
            }
            i += 1;
            if depth == 0 {
                break;
            }
        }
        i
    };
    let mut kept = Vec::new();
    let mut decls = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let cfg_test = ["#", "[", "cfg", "(", "test", ")", "]"].iter().enumerate().all(|(k, t)| text(i + k) == *t);
        if !cfg_test {
            kept.push(tokens[i].clone());
            i += 1;
            continue;
        }
        // The attribute, any further attributes, then the item: to its `;`, or to the end of its body (a `use`
        // tree's braces are not a body).
        i += 7;
        while text(i) == "#" {
            i = close(i + 1);
        }
        let is_use = text(i) == "use" || (text(i) == "pub" && (text(i + 1) == "use" || text(i + 4) == "use"));
        let mut j = i;
        loop {
            match text(j) {
                "" => break,
                ";" => {
                    j += 1;
                    break;
                }
                "{" if !is_use => {
                    j = close(j);
                    break;
                }
                "(" | "[" | "{" => j = close(j),
                _ => j += 1,
            }
        }
        if let Some(m) = (i..j).find(|&k| text(k) == "mod" && text(k + 2) == ";") {
            let mut path = file_module.to_vec();
            path.push(text(m + 1).to_owned());
            decls.push(Decl { name: text(m + 1).to_owned(), path, inline: false, test_only: true });
        }
        i = j;
    }
    let kt = |i: usize| kept.get(i).map_or("", |t| t.text.as_str());
    // The inline modules around the current token, with the depth of braces each is at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    for i in 0..kept.len() {
        match kt(i) {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            "mod" if kt(i + 2) == ";" || kt(i + 2) == "{" => {
                let name = kt(i + 1).to_owned();
                let mut path = file_module.to_vec();
                path.extend(inline.iter().map(|(n, _)| n.clone()));
                path.push(name.clone());
                let is_inline = kt(i + 2) == "{";
                decls.push(Decl { name: name.clone(), path, inline: is_inline, test_only: false });
                if is_inline {
                    inline.push((name, depth));
                }
            }
            _ => {}
        }
    }
    (kept, decls)
}

/// The `#[path = "..."]` of each `mod` declaration that has one, by module name.
fn path_attributes(source: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut pending = None;
    for line in source.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            pending = rest.split('"').next().map(str::to_owned);
        } else if line.starts_with("#[") {
            continue;
        } else if let Some(p) = pending.take()
            && let Some(name) = line.split("mod ").nth(1).and_then(|r| r.strip_suffix(';'))
        {
            found.insert(name.trim().to_owned(), p);
        }
    }
    found
}

/// Every path the code of a file names (`krate`: the crate's own name, as a path's first segment).
fn uses(tokens: &[Token], file_module: &[String], krate: &str) -> Vec<Use> {
    let text = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    let mut out = Vec::new();
    // The inline modules around the current token, with the depth of braces each is at.
    let mut scope: Vec<(ModPath, usize)> = vec![(file_module.to_vec(), 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let here = scope.last().unwrap().0.clone();
        match text(i) {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if scope.len() > 1 && scope.last().unwrap().1 == depth {
                    scope.pop();
                }
            }
            "mod" if text(i + 2) == "{" => {
                let mut inner = here.clone();
                inner.push(text(i + 1).to_owned());
                scope.push((inner, depth));
            }
            // `use<'a>` is precise capturing, not an import.
            "use" if text(i + 1) != "<" => {
                let line = tokens[i].line;
                let mut trees = Vec::new();
                i += 1;
                use_tree(tokens, &mut i, Vec::new(), &mut trees);
                for (path, bound) in trees {
                    out.push(Use { scope: here.clone(), path, bound, line });
                }
                continue;
            }
            first
                if (matches!(first, "crate" | "$crate" | "super" | "self") || first == krate)
                    && text(i + 1) == "::"
                    && i.checked_sub(1).map_or("", text) != "::" =>
            {
                let line = tokens[i].line;
                let mut path = vec![text(i).to_owned()];
                i += 1;
                while text(i) == "::" && text(i + 1).starts_with(|c: char| c.is_alphabetic() || c == '_') {
                    path.push(text(i + 1).to_owned());
                    i += 2;
                }
                out.push(Use { scope: here, path, bound: None, line });
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads a use tree at `*i`, pushing each path with the name it binds (the last segment, an alias, or `None`
/// for a glob; `{self, ..}` binds the prefix's last segment); leaves `*i` after the tree.
fn use_tree(tokens: &[Token], i: &mut usize, mut prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let text = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    if text(*i) == "::" {
        *i += 1;
    }
    loop {
        match text(*i) {
            "{" => {
                *i += 1;
                while !matches!(text(*i), "}" | "") {
                    use_tree(tokens, i, prefix.clone(), out);
                    if text(*i) == "," {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            "*" => {
                *i += 1;
                out.push((prefix, None));
                return;
            }
            "" | ";" | "," | "}" => return,
            "self" if !prefix.is_empty() => {
                *i += 1;
                let bound = prefix.last().cloned();
                out.push((prefix, bound));
                return;
            }
            segment => {
                prefix.push(segment.to_owned());
                *i += 1;
                if text(*i) == "::" {
                    *i += 1;
                    continue;
                }
                let mut bound = Some(segment.to_owned());
                if text(*i) == "as" {
                    bound = Some(text(*i + 1).to_owned()).filter(|b| b != "_");
                    *i += 2;
                }
                out.push((prefix, bound));
                return;
            }
        }
    }
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn strongly_connected<T>(graph: &BTreeMap<ModPath, BTreeMap<ModPath, T>>) -> Vec<BTreeSet<ModPath>> {
    struct State<'a, T> {
        graph: &'a BTreeMap<ModPath, BTreeMap<ModPath, T>>,
        index: BTreeMap<ModPath, usize>,
        low: BTreeMap<ModPath, usize>,
        stack: Vec<ModPath>,
        on_stack: BTreeSet<ModPath>,
        found: Vec<BTreeSet<ModPath>>,
    }
    fn visit<T>(s: &mut State<'_, T>, v: &ModPath) {
        let n = s.index.len();
        s.index.insert(v.clone(), n);
        s.low.insert(v.clone(), n);
        s.stack.push(v.clone());
        s.on_stack.insert(v.clone());
        let targets: Vec<ModPath> = s.graph.get(v).map(|t| t.keys().cloned().collect()).unwrap_or_default();
        for w in &targets {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v.clone(), low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(&w);
                let done = &w == v;
                component.insert(w);
                if done {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

/// A shortest cycle through the first module of a strongly connected component, within it.
fn shortest_cycle<T>(graph: &BTreeMap<ModPath, BTreeMap<ModPath, T>>, component: &BTreeSet<ModPath>) -> Vec<ModPath> {
    let start = component.first().unwrap().clone();
    let mut previous: BTreeMap<ModPath, ModPath> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
    while let Some(v) = queue.pop_front() {
        for w in graph.get(&v).into_iter().flat_map(|t| t.keys()).filter(|w| component.contains(*w)) {
            if *w == start {
                let mut cycle = vec![v.clone()];
                while let Some(p) = previous.get(cycle.last().unwrap()) {
                    cycle.push(p.clone());
                }
                cycle.reverse();
                return cycle;
            }
            if !previous.contains_key(w) {
                previous.insert(w.clone(), v.clone());
                queue.push_back(w.clone());
            }
        }
    }
    unreachable!("a strongly connected component has a cycle through each of its modules")
}
