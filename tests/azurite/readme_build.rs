//! The build script of the root package: copies the code of the README's "Use it" section out of README.md into
//! `$OUT_DIR/readme_use_it.rs`, which the Azurite suite runs (`tests/azurite/readme.rs`). The README stays the
//! only copy of that code, so what a newcomer pastes is what the tests run.

use std::path::Path;

const SECTION: &str = "## Use it";

fn main() {
    println!("cargo:rerun-if-changed=README.md");
    let readme = std::fs::read_to_string("README.md").expect("README.md at the workspace root");
    let code = use_it_code(&readme)
        .unwrap_or_else(|| panic!("README.md: no ```rust block under `{SECTION}` (tests/azurite/readme.rs runs it)"));
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("readme_use_it.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

/// The lines of the first ```rust block of the section, without its fences.
fn use_it_code(readme: &str) -> Option<String> {
    let mut lines = readme.lines().skip_while(|line| *line != SECTION).skip(1);
    lines.by_ref().take_while(|line| !line.starts_with("## ")).find(|line| line.starts_with("```rust"))?;
    let mut code = String::new();
    for line in lines {
        if line.starts_with("```") {
            return Some(code);
        }
        code.push_str(line);
        code.push('\n');
    }
    None
}
