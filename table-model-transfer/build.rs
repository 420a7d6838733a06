//! Compiles the suite against Azurite (`tests/operations/`) into the library's own test binary where the suite is
//! there: in the workspace. The published package carries no tests; its `cargo test` runs the unit tests alone.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(workspace_suite)");
    println!("cargo::rerun-if-changed=build.rs");
    if std::path::Path::new("tests/operations/main.rs").exists() {
        println!("cargo::rustc-cfg=workspace_suite");
    }
}
