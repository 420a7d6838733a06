#!/usr/bin/env bash
# tablectl export and import against the Python SDK (azure-data-tables, as in scripts/bench-vs-python.sh),
# against one Azurite, in one run.
#
#   scripts/bench-tablectl.sh
#
# For each size, the input (a mixed schema over many partitions, scripts/bench_python_tablectl.py generate) is
# written once and imported once, untimed, into the source table of the exports. Then, per round, alternating
# which side goes first, each in its own process:
#   export  tablectl --json export SRC -o DIR/ --format jsonl [--parallel P]   (release build)
#           Python: list_entities(), one json.dumps per entity and line, to a file; and K threads, one
#           PartitionKey range each
#   import  tablectl --json import FILE T   into a table dropped first
#           Python: the same file, submit_transaction per 100 of one partition, sequential; and from K threads
# The report gives, per operation and size, the minimum time over the rounds, entities/s, peak RSS, the ratio
# against the sequential Python baseline, and the client's and Azurite's CPU seconds.
#
# Environment:
#   BENCH_SIZES="20000:3 200000:1"   entities:rounds
#   TABLECTL_PARALLEL="1 4"          the --parallel values of the tablectl export, used only when its --help
#                                    lists --parallel (otherwise one plain export, and the report says so)
#   BENCH_PY_THREADS=8               the thread count of the Python thread-pool variants (0: none)
#   TABLECTL_BIN                     a tablectl built elsewhere (another branch's) instead of this tree's release
#                                    build, which is then not built
#   CARGO_TARGET_DIR                 as for cargo
#
# Everything lives in the git-ignored .bench/ (the venv, .bench/tablectl/ for the files) and .azurite/; each
# run's results are kept in .bench/tablectl-<time>.jsonl.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"
SIZES="${BENCH_SIZES:-20000:3 200000:1}"
PARALLEL="${TABLECTL_PARALLEL:-1 4}"
PY_THREADS="${BENCH_PY_THREADS:-8}"

say() { echo "bench-tablectl.sh: $*" >&2; }

if [[ "${1:-}" != "--inner" ]]; then
    for size in $SIZES; do
        [[ "$size" =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || { say "BENCH_SIZES: \`$size\` is not ENTITIES:ROUNDS"; exit 2; }
    done
    bench_python_venv bench-tablectl.sh
    if [[ -z "${TABLECTL_BIN:-}" ]]; then
        say "building tablectl (release)"
        (cd "$ROOT" && cargo build --release --quiet -p table-model-cli --bin tablectl)
    fi
    exec bash "$ROOT/scripts/azurite.sh" run bash "$ROOT/scripts/bench-tablectl.sh" --inner
fi

# --inner: Azurite runs; its endpoint is in TABLE_MODEL_AZURITE_ENDPOINT and AZURE_STORAGE_CONNECTION_STRING.
bench_python_venv bench-tablectl.sh
TABLECTL="${TABLECTL_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tablectl}"
[[ "$TABLECTL" = /* ]] || TABLECTL="$ROOT/$TABLECTL"
PY="$BENCH_VENV/bin/python"
PY_SIDE="$ROOT/scripts/bench_python_tablectl.py"
WORK="$ROOT/.bench/tablectl"
RESULTS="$ROOT/.bench/tablectl-$(date +%Y%m%d-%H%M%S).jsonl"
BENCH_SERVER_PID="$(bench_server_pid)"
export BENCH_SERVER_PID
mkdir -p "$WORK"
: >"$RESULTS"

if "$TABLECTL" export --help | grep -q -- '--parallel'; then
    EXPORTS=()
    for p in $PARALLEL; do EXPORTS+=("$p"); done
else
    say "this tablectl has no --parallel: its export runs without it (TABLECTL_PARALLEL=\"$PARALLEL\" unused)"
    EXPORTS=(none)
fi

timed() { "$PY" "$PY_SIDE" time "$@" | tee -a "$RESULTS"; }

rust_exports() {
    local count="$1" p
    for p in "${EXPORTS[@]}"; do
        rm -rf "$WORK/out-rs"
        if [[ "$p" == none ]]; then
            timed --op export --variant "no --parallel" --count "$count" -- \
                "$TABLECTL" --json export "src$count" -o "$WORK/out-rs/" --format jsonl
        else
            timed --op export --variant "--parallel $p" --count "$count" -- \
                "$TABLECTL" --json export "src$count" -o "$WORK/out-rs/" --format jsonl --parallel "$p"
        fi
    done
    rm -rf "$WORK/out-rs"
}

python_exports() {
    local count="$1"
    "$PY" "$PY_SIDE" export --table "src$count" --count "$count" --out "$WORK/out-py.jsonl" | tee -a "$RESULTS"
    if ((PY_THREADS > 0)); then
        "$PY" "$PY_SIDE" export --table "src$count" --count "$count" --out "$WORK/out-py.jsonl" \
            --threads "$PY_THREADS" | tee -a "$RESULTS"
    fi
    rm -f "$WORK"/out-py.jsonl*
}

rust_import() {
    local count="$1"
    "$PY" "$PY_SIDE" drop --table imprs
    timed --op import --variant "default" --count "$count" -- \
        "$TABLECTL" --json import "$WORK/input-$count.jsonl" imprs
    "$PY" "$PY_SIDE" drop --table imprs
}

python_imports() {
    local count="$1"
    "$PY" "$PY_SIDE" import --table imppy --count "$count" --file "$WORK/input-$count.jsonl" | tee -a "$RESULTS"
    if ((PY_THREADS > 0)); then
        "$PY" "$PY_SIDE" import --table imppy --count "$count" --file "$WORK/input-$count.jsonl" \
            --threads "$PY_THREADS" | tee -a "$RESULTS"
    fi
}

say "tablectl: $("$TABLECTL" --version); load before: $(uptime)"
for size in $SIZES; do
    count="${size%%:*}"
    rounds="${size##*:}"
    input="$WORK/input-$count.jsonl"
    if [[ ! -s "$input" ]]; then
        say "writing $input"
        "$PY" "$PY_SIDE" generate --count "$count" --out "$input.part" && mv "$input.part" "$input"
    fi
    say "loading src$count (untimed)"
    "$PY" "$PY_SIDE" drop --table "src$count"
    "$TABLECTL" import "$input" "src$count" 2>&1 | tail -1 >&2
    for round in $(seq "$rounds"); do
        say "$count entities, round $round of $rounds ($(uptime | sed 's/.*load/load/'))"
        if ((round % 2)); then
            rust_exports "$count"
            python_exports "$count"
            rust_import "$count"
            python_imports "$count"
        else
            python_exports "$count"
            rust_exports "$count"
            python_imports "$count"
            rust_import "$count"
        fi
    done
    "$PY" "$PY_SIDE" drop --table "src$count"
done
say "load after: $(uptime)"
say "results: $RESULTS"
echo
"$PY" "$PY_SIDE" report "$RESULTS"
