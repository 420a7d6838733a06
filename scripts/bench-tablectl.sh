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

now() { date +%s.%N; }
record() { # side op parallel entities seconds
    printf '{"side":"%s","op":"%s","parallel":%s,"entities":%s,"seconds":%s}\n' "$@" | tee -a "$RESULTS"
}

say "load before: $(uptime)"
for count in $COUNTS; do
    file="$WORK/in-$count.jsonl"
    "$PY" "$PY_SIDE" generate --count "$count" --partitions "$PARTITIONS" "$file"

    # Import: tablectl, then Python, each into a fresh table.
    start=$(now)
    "$TABLECTL" import "$file" "benchrs$count" --checkpoint "$WORK/ck.json" >/dev/null
    record rust import 1 "$count" "$(echo "$(now) - $start" | bc)"
    "$PY" "$PY_SIDE" import --table "benchpy$count" "$file" | sed "s/}$/,\"parallel\":1}/" | tee -a "$RESULTS"

    # Export the same table: tablectl with --parallel 1 and 4, then Python.
    for parallel in 1 4; do
        start=$(now)
        "$TABLECTL" export "benchrs$count" -o "$WORK/out-$count-$parallel/" --parallel "$parallel" 2>/dev/null
        record rust export "$parallel" "$count" "$(echo "$(now) - $start" | bc)"
    done
    "$PY" "$PY_SIDE" export --table "benchrs$count" "$WORK/py-$count.jsonl" | sed "s/}$/,\"parallel\":1}/" | tee -a "$RESULTS"
    rm -rf "$WORK"/out-* "$WORK"/py-*
done
say "load after: $(uptime)"

"$PY" - "$RESULTS" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n| entities | operation | tablectl --parallel 1 | tablectl --parallel 4 | Python SDK | ratio (best tablectl / Python) |")
print("|---:|---|---:|---:|---:|---:|")
for count in sorted({r["entities"] for r in rows}):
    for op in ("export", "import"):
        rate = lambda side, p: next((r["entities"] / r["seconds"] for r in rows if r["entities"] == count and r["op"] == op and r["side"] == side and r["parallel"] == p), None)
        r1, r4, py = rate("rust", 1), rate("rust", 4), rate("python", 1)
        best = max(x for x in (r1, r4) if x)
        show = lambda x: f"{x:,.0f}/s" if x else "—"
        print(f"| {count:,} | {op} | {show(r1)} | {show(r4)} | {show(py)} | {best / py:.1f}x |")
EOF
say "results in $RESULTS"
