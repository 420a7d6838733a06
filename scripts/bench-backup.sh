#!/usr/bin/env bash
# An incremental backup generation against a full export, a restore against an import, and the Python SDK's full
# export (what users run today), against one Azurite, in one run.
#
#   scripts/bench-backup.sh
#
# For each size, a table of ENTITIES entities in partitions of 500 (scripts/bench_backup.py generate: the mixed
# schema of scripts/bench-tablectl.sh) is imported (untimed), its first generation taken (`tablectl backup`, full,
# untimed), and 1% of it changed (scripts/bench_backup.py changes: 0.5% merged, 0.25% inserted, one partition of
# 0.25% deleted). Then, per round, alternating which goes first, each in its own process (release build):
#   full export         tablectl --json export SRC -o DIR/ --parallel P
#   incremental backup  tablectl --json backup SRC -o COPY --parallel P --margin 5, into a copy of the directory
#                       of the first generation (so that every round takes the same second generation)
# then once each through a byte-counting proxy (the bytes the server sends), then
#   restore             tablectl --json restore COPY NEW --from SRC   (the second generation)
#   import              tablectl --json import DIR/ NEW               (the full export, the same entities)
#   python export       azure-data-tables, list_entities() to a file (scripts/bench_python_tablectl.py export)
# The report gives the minimum time of each, its peak RSS, the client's and Azurite's CPU, the bytes, and the
# ratios. The margin is 5 s (and the first generation waits 6 s after the load) so that the load is not read
# again as a change: with the default 60 s, a table loaded in the minute before its first generation is.
#
# Environment:
#   BENCH_SIZES="20000:2 200000:2"   entities:rounds (the peak RSS of both sizes is the memory's flatness)
#   BACKUP_PARALLEL=4                --parallel of the export and the backup
#   TABLECTL_BIN, CARGO_TARGET_DIR   as for scripts/bench-tablectl.sh
#
# Everything lives in the git-ignored .bench/ (.bench/backup/ for the files); each run's results are kept in
# .bench/backup-<time>.jsonl.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"
SIZES="${BENCH_SIZES:-20000:2 200000:2}"
PARALLEL="${BACKUP_PARALLEL:-4}"
PER_PARTITION=500

say() { echo "bench-backup.sh: $*" >&2; }

if [[ "${1:-}" != "--inner" ]]; then
    for size in $SIZES; do
        [[ "$size" =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || { say "BENCH_SIZES: \`$size\` is not ENTITIES:ROUNDS"; exit 2; }
    done
    bench_python_venv bench-backup.sh
    if [[ -z "${TABLECTL_BIN:-}" ]]; then
        say "building tablectl (release)"
        (cd "$ROOT" && cargo build --release --quiet -p table-model-cli --bin tablectl)
    fi
    exec bash "$ROOT/scripts/azurite.sh" run bash "$ROOT/scripts/bench-backup.sh" --inner
fi

bench_python_venv bench-backup.sh
TABLECTL="${TABLECTL_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tablectl}"
[[ "$TABLECTL" = /* ]] || TABLECTL="$ROOT/$TABLECTL"
PY="$BENCH_VENV/bin/python"
SIDE="$ROOT/scripts/bench_backup.py"
TABLES="$ROOT/scripts/bench_python_tablectl.py"
WORK="$ROOT/.bench/backup"
RESULTS="$ROOT/.bench/backup-$(date +%Y%m%d-%H%M%S).jsonl"
BENCH_SERVER_PID="$(bench_server_pid)"
export BENCH_SERVER_PID
rm -rf "$WORK"
mkdir -p "$WORK"
: >"$RESULTS"
AZURITE_ADDR="${TABLE_MODEL_AZURITE_ENDPOINT#http://}"
AZURITE_ADDR="${AZURITE_ADDR%%/*}"
ACCOUNT_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

timed() {
    local label="$1"
    shift
    "$PY" "$SIDE" time --label "$label/$COUNT" -- "$@" | tee -a "$RESULTS" | cut -c1-200 >&2
}

# Runs a command with the connection string through the byte-counting proxy; records the bytes under LABEL.
counted() {
    local label="$1"
    shift
    rm -f "$WORK/proxy.port" "$WORK/proxy.counts"
    "$PY" "$SIDE" proxy --target "$AZURITE_ADDR" --port-file "$WORK/proxy.port" --counts "$WORK/proxy.counts" &
    local proxy=$!
    while [[ ! -s "$WORK/proxy.port" ]]; do sleep 0.1; done
    local cs="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$ACCOUNT_KEY;TableEndpoint=http://127.0.0.1:$(cat "$WORK/proxy.port")/devstoreaccount1;"
    AZURE_STORAGE_CONNECTION_STRING="$cs" "$@" >/dev/null
    sleep 0.5
    kill "$proxy"
    wait "$proxy" 2>/dev/null || true
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["label"]=sys.argv[2]+"/"+sys.argv[3]; print(json.dumps(c))' \
        "$WORK/proxy.counts" "$label" "$COUNT" | tee -a "$RESULTS" >&2
}

full_export() {
    rm -rf "$WORK/export"
    timed "full export" "$TABLECTL" --json export "src$COUNT" -o "$WORK/export/" --parallel "$PARALLEL" --max-rate 0
}

incremental() {
    rm -rf "$WORK/copy"
    cp -r "$WORK/bak" "$WORK/copy"
    timed "incremental backup" "$TABLECTL" --json backup "src$COUNT" -o "$WORK/copy" --parallel "$PARALLEL" \
        --margin 5 --max-rate 0
}

say "tablectl: $("$TABLECTL" --version); load before: $(uptime)"
for size in $SIZES; do
    COUNT="${size%%:*}"
    rounds="${size##*:}"
    input="$WORK/input-$COUNT.jsonl"
    say "writing $input and loading src$COUNT (untimed)"
    "$PY" "$SIDE" generate --count "$COUNT" --per-partition "$PER_PARTITION" --out "$input"
    "$PY" "$TABLES" drop --table "src$COUNT"
    "$TABLECTL" import "$input" "src$COUNT" --max-rate 0 2>&1 | tail -1 >&2
    sleep 6
    rm -rf "$WORK/bak"
    "$TABLECTL" backup "src$COUNT" -o "$WORK/bak" --parallel "$PARALLEL" --max-rate 0 2>&1 | tail -1 >&2
    doomed="$("$PY" "$SIDE" changes --count "$COUNT" --per-partition "$PER_PARTITION" --out "$WORK/changes.jsonl")"
    "$TABLECTL" import "$WORK/changes.jsonl" "src$COUNT" --mode merge --max-rate 0 2>&1 | tail -1 >&2
    "$TABLECTL" delete "src$COUNT" --filter "PartitionKey eq '$doomed'" --yes 2>&1 | tail -1 >&2
    for round in $(seq "$rounds"); do
        say "$COUNT entities, round $round of $rounds ($(uptime | sed 's/.*load/load/'))"
        if ((round % 2)); then full_export; incremental; else incremental; full_export; fi
    done
    rm -rf "$WORK/copy" "$WORK/export"
    cp -r "$WORK/bak" "$WORK/copy"
    counted "incremental backup (bytes)" "$TABLECTL" --json backup "src$COUNT" -o "$WORK/copy" --parallel "$PARALLEL" \
        --margin 5 --max-rate 0
    counted "full export (bytes)" "$TABLECTL" --json export "src$COUNT" -o "$WORK/export/" --parallel "$PARALLEL" \
        --max-rate 0
    "$PY" "$TABLES" drop --table "restored$COUNT"
    timed "restore" "$TABLECTL" --json restore "$WORK/copy" "restored$COUNT" --from "src$COUNT" --max-rate 0
    "$PY" "$TABLES" drop --table "restored$COUNT"
    timed "import" "$TABLECTL" --json import "$WORK/export/" "restored$COUNT" --max-rate 0
    "$PY" "$TABLES" drop --table "restored$COUNT"
    remaining="$("$PY" -c 'import json,sys; print(sum(f["entities"] for f in json.load(open(sys.argv[1]))["files"]))' "$WORK/export/manifest.json")"
    "$PY" "$TABLES" export --table "src$COUNT" --count "$remaining" --out "$WORK/python.jsonl" \
        | "$PY" -c 'import json,sys; r=json.loads(sys.stdin.read().splitlines()[-1]); r["label"]="python export/"+sys.argv[1]; print(json.dumps(r))' "$COUNT" \
        | tee -a "$RESULTS" >&2
    "$PY" "$TABLES" drop --table "src$COUNT"
done
say "load after: $(uptime)"
say "results: $RESULTS"
echo
"$PY" "$SIDE" report "$RESULTS"
