#!/usr/bin/env bash
# table-model's bulk API against the Python SDK (azure-data-tables 12.7.0), against one Azurite, in one run.
#
#   scripts/bench-vs-python.sh [ROUNDS]        (default 3)
#
# Each round inserts 10,000 entities (12 properties of every EDM type, 10 partitions) into a fresh table and
# reads them all back, once with the Rust example examples/bench_bulk.rs (`bulk_write` at its default
# concurrency, then one `query` collected) and once with scripts/bench_python_tables.py (the SDK's best
# practice: `submit_transaction` per 100 operations of one partition, sequential, then `list_entities()`),
# each side in its own process, alternating. Both check what they read back against what they sent. The report
# gives the minimum time of each phase over the rounds, entities per second, the peak RSS of each process
# (VmHWM / ru_maxrss) and the ratios.
#
# Environment:
#   BENCH_EXTRA="rust:1 rust:32 python:8"   more variants per round: Rust at a given `concurrency`, Python with a
#                                           thread pool of N (the baseline stays the sequential best practice)
#   BENCH_COUNT, BENCH_PARTITIONS           other sizes (default 10000 and 10)
#   CARGO_TARGET_DIR, CARGO_BUILD_JOBS      as for cargo
#
# Everything it installs lives in the git-ignored .bench/ (the venv) and .azurite/ (the emulator); the results of
# each run are kept in .bench/results-<time>.jsonl.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/.bench"
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"
VENV="$BENCH/venv"
ROUNDS="${1:-3}"
COUNT="${BENCH_COUNT:-10000}"
PARTITIONS="${BENCH_PARTITIONS:-10}"
EXTRA="${BENCH_EXTRA:-}"

say() { echo "bench-vs-python.sh: $*" >&2; }

if [[ "${1:-}" != "--inner" ]]; then
    [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { say "usage: scripts/bench-vs-python.sh [ROUNDS]"; exit 2; }
    bench_python_venv bench-vs-python.sh
    say "building examples/bench_bulk.rs (release)"
    (cd "$ROOT" && cargo build --release --quiet --example bench_bulk)
    exec bash "$ROOT/scripts/azurite.sh" run bash "$ROOT/scripts/bench-vs-python.sh" --inner "$ROUNDS"
fi

# --inner ROUNDS: Azurite runs; its endpoint is in TABLE_MODEL_AZURITE_ENDPOINT.
ROUNDS="$2"
RUST_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/bench_bulk"
[[ "$RUST_BIN" = /* ]] || RUST_BIN="$ROOT/$RUST_BIN"
PY="$VENV/bin/python"
PY_SIDE="$ROOT/scripts/bench_python_tables.py"
RESULTS="$BENCH/results-$(date +%Y%m%d-%H%M%S).jsonl"
# Both sides read the emulator's CPU time at the start and end of each phase: how busy the server was.
BENCH_SERVER_PID="$(bench_server_pid)"
BENCH_CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)"
export BENCH_SERVER_PID BENCH_CLK_TCK
: >"$RESULTS"

run_rust() { "$RUST_BIN" --table "$1" --count "$COUNT" --partitions "$PARTITIONS" "${@:2}" | tee -a "$RESULTS"; }
run_python() { "$PY" "$PY_SIDE" run --table "$1" --count "$COUNT" --partitions "$PARTITIONS" "${@:2}" | tee -a "$RESULTS"; }

say "load before: $(uptime)"
for round in $(seq "$ROUNDS"); do
    # Alternate which side goes first, so that neither always meets a warmer (or more fragmented) emulator.
    if ((round % 2)); then
        run_rust "benchrs$round"
        run_python "benchpy$round"
    else
        run_python "benchpy$round"
        run_rust "benchrs$round"
    fi
    for variant in $EXTRA; do
        case "$variant" in
            rust:*) run_rust "benchrs${round}c${variant#rust:}" --concurrency "${variant#rust:}" ;;
            python:*) run_python "benchpy${round}t${variant#python:}" --threads "${variant#python:}" ;;
            *) say "unknown variant $variant (rust:N or python:N)"; exit 2 ;;
        esac
    done
done
say "load after: $(uptime)"
say "results: $RESULTS"
echo
"$PY" "$PY_SIDE" report "$RESULTS"
