//! The README's "Use it" code, as README.md holds it (the root package's build script copies it out, see
//! `readme_build.rs`), run against the emulator: it reads `AZURE_STORAGE_CONNECTION_STRING`, which
//! `scripts/azurite.sh` sets beside `TABLE_MODEL_AZURITE_ENDPOINT`.

include!(concat!(env!("OUT_DIR"), "/readme_use_it.rs"));

#[test]
fn readme_code_runs_against_azurite() {
    let Some(endpoint) = crate::support::endpoint() else { return };
    let connection = std::env::var("AZURE_STORAGE_CONNECTION_STRING")
        .expect("scripts/azurite.sh sets AZURE_STORAGE_CONNECTION_STRING beside TABLE_MODEL_AZURITE_ENDPOINT");
    // The same emulator as the rest of the suite.
    assert!(connection.contains(&format!("TableEndpoint={endpoint};")), "{connection}");
    // `#[tokio::main]` made the README's `main` a plain function that runs its own runtime.
    main().expect("the README's code runs against Azurite");
}
