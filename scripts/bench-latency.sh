#!/usr/bin/env bash
# tablectl and the Python SDK against a loopback Table service with the service's pace: 30 ms a page, 15 ms a
# transaction, 2,000 entities/s per partition (`table-server`, test-utils/src/service.rs), where the service
# rather than an emulator's CPU sets the pace. What each case runs and how the figures are made: the docstring of
# scripts/bench_latency.py. Each figure is a ratio to its baseline measured in the same run (interleaved minima).
#
#   scripts/bench-latency.sh [ROUNDS] [PYTHON_ROUNDS] [CASES]     (3 and 2 by default; CASES: a regular
#   expression, the cases to run, all by default)
#
# Builds a release tablectl without default features (no SQL), a release table-server and the bench
# import_floor (the import's transactions sent by a bare client); creates the git-ignored
# .bench/venv with azure-data-tables (scripts/bench-common.sh). Works in .bench/latency.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"
cd "$ROOT"
bench_python_venv bench-latency.sh
echo "bench-latency.sh: building tablectl and table-server (release)" >&2
cargo build --release --quiet -p table-model-cli --no-default-features --bin tablectl
cargo build --release --quiet -p table-model-test-utils --features service --bin table-server
floor=$(cargo bench -p table-model-cli --no-default-features --bench import_floor --no-run --message-format=json \
    2>/dev/null | grep -o '"executable":"[^"]*import_floor-[^"]*"' | tail -1 | cut -d'"' -f4)
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BENCH_VENV/bin/python" "$ROOT/scripts/bench_latency.py" --tablectl "$TARGET/release/tablectl" \
    --server "$TARGET/release/table-server" --import-floor "$floor" --rounds "${1:-3}" --python-rounds "${2:-2}" --work "$ROOT/.bench/latency" \
    ${3:+--cases "$3"}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
