//! `tablectl`: see `docs/tablectl.md`. The logic is the `table_model_cli` library's.

/// mimalloc rather than glibc's allocator: an import reads its lines on a thread of their own and frees them on
/// the runtime's once written, frees across threads that glibc's arenas paid for in locks and consolidation (an
/// import of 200,000 entities under the service's latency 4% slower; `CHANGELOG.md`). The library's users keep
/// their own allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // For the resume tests only (`table_model_cli::ABORT_AFTER_VAR`): abort once a run has done this many
    // entities, as a kill would.
    let abort_after = std::env::var(table_model_cli::ABORT_AFTER_VAR).ok().and_then(|n| n.parse().ok());
    table_model_cli::main(abort_after)
}
