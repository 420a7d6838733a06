//! Whether a suite of Azurite tests runs, the one rule every crate's Azurite tests share: the emulator's URL is
//! in `TABLE_MODEL_AZURITE_ENDPOINT` (`scripts/azurite.sh` sets it); without it the tests are skipped with one
//! notice per run, unless `CI` is set, where they must run and fail.
//!
//! Layer: base.

use std::io::Write as _;

/// The variable `scripts/azurite.sh` exports: the emulator's URL, `http://127.0.0.1:<port>/devstoreaccount1`.
pub const ENDPOINT_VAR: &str = "TABLE_MODEL_AZURITE_ENDPOINT";

/// The endpoint, or `None` after a notice (once per run) naming the `suite` skipped and the `command` that runs
/// it.
///
/// # Panics
/// When the variable is not set but `CI` is: in CI these tests must run.
pub fn endpoint_or_skip(suite: &str, command: &str) -> Option<String> {
    match std::env::var(ENDPOINT_VAR) {
        Ok(url) => Some(url),
        Err(_) if std::env::var_os("CI").is_some() => {
            panic!("{ENDPOINT_VAR} is not set but CI is: start Azurite with `scripts/azurite.sh start`")
        }
        Err(_) => {
            // Written to the process's stderr, past the test harness's capture.
            static NOTICE: std::sync::Once = std::sync::Once::new();
            NOTICE.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "note: the {suite} are skipped: {ENDPOINT_VAR} is not set; run them with `{command}`"
                );
            });
            None
        }
    }
}
