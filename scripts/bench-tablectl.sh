#!/usr/bin/env bash
# tablectl export and import throughput against the Python SDK (azure-data-tables 12.7.0), against one Azurite, in
# one run.
#
#   scripts/bench-tablectl.sh [COUNTS]        (default "20000 200000")
#
# For each count, the entities of examples/bench_bulk.rs (12 properties of every EDM type, 10 partitions) are
# written as JSON lines (scripts/bench_tablectl.py generate), then, each timed on its own:
#   - import: `tablectl import FILE T` (the bulk writer at its default concurrency), and the Python SDK's
#     documented best practice reading the same file (`submit_transaction` per 100 operations of one partition,
#     one after the other: the baseline of scripts/bench-vs-python.sh);
#   - export: `tablectl export T -o DIR/ --parallel 1` and `--parallel 4`, and the Python SDK's
#     `list_entities()` written as JSON lines.
# The report gives entities per second for each and the ratios. The release binary is built first.
#
# Everything it installs lives in the git-ignored .bench/ (the venv) and .azurite/ (the emulator); each run's
# results are kept in .bench/tablectl-<time>.jsonl.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/.bench"
VENV="$BENCH/venv"
PY_SDK_VERSION="12.7.0"
PARTITIONS="${BENCH_PARTITIONS:-10}"

say() { echo "bench-tablectl.sh: $*" >&2; }

if [[ "${1:-}" != "--inner" ]]; then
    COUNTS="${1:-20000 200000}"
    mkdir -p "$BENCH"
    if [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("azure-data-tables"))' 2>/dev/null)" != "$PY_SDK_VERSION" ]]; then
        say "creating $VENV with azure-data-tables==$PY_SDK_VERSION"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install --quiet --disable-pip-version-check "azure-data-tables==$PY_SDK_VERSION"
    fi
    say "building tablectl (release)"
    (cd "$ROOT" && cargo build --release --quiet -p table-model-cli --bin tablectl)
    exec bash "$ROOT/scripts/azurite.sh" run bash "$ROOT/scripts/bench-tablectl.sh" --inner "$COUNTS"
fi

# --inner COUNTS: Azurite runs; its endpoint is in TABLE_MODEL_AZURITE_ENDPOINT.
COUNTS="$2"
TABLECTL="${CARGO_TARGET_DIR:-$ROOT/target}/release/tablectl"
[[ "$TABLECTL" = /* ]] || TABLECTL="$ROOT/$TABLECTL"
PY="$VENV/bin/python"
PY_SIDE="$ROOT/scripts/bench_tablectl.py"
RESULTS="$BENCH/tablectl-$(date +%Y%m%d-%H%M%S).jsonl"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=$TABLE_MODEL_AZURITE_ENDPOINT;"
: >"$RESULTS"

# Each run's CPU time (user + system, from /usr/bin/time) and Azurite's over the same span (/proc/<pid>/stat):
# where the time goes.
PORT="${TABLE_MODEL_AZURITE_ENDPOINT#http://*:}"
PORT="${PORT%%/*}"
SERVER_PID="$(pgrep -f "azurite-table .*--tablePort $PORT( |$)" | head -1)"
CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)"
now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a - b }'; }
server_cpu() { awk -v t="$CLK_TCK" '{print ($14 + $15) / t}' "/proc/$SERVER_PID/stat"; }
# timed SIDE OP PARALLEL ENTITIES COMMAND...: runs the command and records one JSON line.
timed() {
    local side="$1" op="$2" parallel="$3" entities="$4"
    shift 4
    local start server
    start=$(now)
    server=$(server_cpu)
    /usr/bin/time -f "%U %S" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; exit 1; }
    printf '{"side":"%s","op":"%s","parallel":%s,"entities":%s,"seconds":%s,"client_cpu":%s,"server_cpu":%s}\n' \
        "$side" "$op" "$parallel" "$entities" "$(minus "$(now)" "$start")" \
        "$(awk '{ printf "%.2f", $1 + $2 }' "$WORK/time")" "$(minus "$(server_cpu)" "$server")" | tee -a "$RESULTS"
}

say "load before: $(uptime)"
for count in $COUNTS; do
    file="$WORK/in-$count.jsonl"
    "$PY" "$PY_SIDE" generate --count "$count" --partitions "$PARTITIONS" "$file"

    # Import: tablectl, then Python, each into a fresh table.
    timed rust import 1 "$count" "$TABLECTL" import "$file" "benchrs$count" --checkpoint "$WORK/ck.json"
    timed python import 1 "$count" "$PY" "$PY_SIDE" import --table "benchpy$count" "$file"

    # Export the same table: tablectl with --parallel 1 and 4, then Python.
    for parallel in 1 4; do
        timed rust export "$parallel" "$count" "$TABLECTL" export "benchrs$count" -o "$WORK/out-$count-$parallel/" \
            --parallel "$parallel"
    done
    timed python export 1 "$count" "$PY" "$PY_SIDE" export --table "benchrs$count" "$WORK/py-$count.jsonl"
    rm -rf "$WORK"/out-* "$WORK"/py-*
done
say "load after: $(uptime)"

"$PY" - "$RESULTS" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n| entities | operation | tablectl --parallel 1 | tablectl --parallel 4 | Python SDK | ratio (best tablectl / Python) |")
print("|---:|---|---:|---:|---:|---:|")
def row(count, op, side, p):
    return next((r for r in rows if r["entities"] == count and r["op"] == op and r["side"] == side and r["parallel"] == p), None)
for count in sorted({r["entities"] for r in rows}):
    for op in ("export", "import"):
        rate = lambda r: r["entities"] / r["seconds"] if r else None
        r1, r4, py = rate(row(count, op, "rust", 1)), rate(row(count, op, "rust", 4)), rate(row(count, op, "python", 1))
        best = max(x for x in (r1, r4) if x)
        show = lambda x: f"{x:,.0f}/s" if x else "—"
        print(f"| {count:,} | {op} | {show(r1)} | {show(r4)} | {show(py)} | {best / py:.1f}x |")
print("\nCPU per entity (client; Azurite over the same span):\n")
print("| entities | run | wall | client CPU per entity | Azurite CPU per entity |")
print("|---:|---|---:|---:|---:|")
for r in rows:
    n = r["entities"]
    name = f'{r["side"]} {r["op"]}' + (f' --parallel {r["parallel"]}' if r["side"] == "rust" and r["op"] == "export" else "")
    print(f'| {n:,} | {name} | {r["seconds"]:.2f} s | {r["client_cpu"] / n * 1e6:.0f} µs | {r["server_cpu"] / n * 1e6:.0f} µs |')
EOF
say "results in $RESULTS"
