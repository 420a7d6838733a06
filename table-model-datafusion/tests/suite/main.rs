//! The provider's suites against Azurite, in one test binary: each links DataFusion (and one Ballista), so one
//! binary instead of four keeps `target/` about 750 MB smaller.
//!
//! Each suite is skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that
//! fails; run with `bash scripts/azurite.sh run cargo test -p table-model-datafusion`.

#[path = "../../../tests/common/azurite_endpoint.rs"]
mod azurite_endpoint;

mod azurite;
mod ballista;
mod hostile;
mod writes;
