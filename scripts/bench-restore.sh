#!/usr/bin/env bash
# The restore of a backup's second generation against an import of the same entities, each run against a fresh
# `table-server` at the service's pace (30 ms a page, 15 ms a transaction, 2,000 entities/s per partition), so
# that no run pays for the tables of the one before; two `tablectl` builds side by side, rounds interleaved.
#
#   scripts/bench-restore.sh BASE_TABLECTL NEW_TABLECTL [ROUNDS]      (5 rounds by default)
#
# Reads what `scripts/bench-latency.sh` leaves in .bench/latency: the backup `copy16` (a full generation of
# `Backed`, 200,000 entities in 400 partitions, and an incremental one of 1% changed) and `gen2.jsonl` (the table as
# of the second generation, in key order). Run `bash scripts/bench-latency.sh 1 0 '^(import/gen2|restore)'` first.
# Prints each run's wall, user and system seconds, then the minima and medians, and each restore's ratio to the
# import's minimum.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE="$(realpath "$1")"
NEW="$(realpath "$2")"
ROUNDS="${3:-5}"
WORK="$ROOT/.bench/latency"
SERVER="${CARGO_TARGET_DIR:-$ROOT/target}/release/table-server"
KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
for needed in "$WORK/copy16" "$WORK/gen2.jsonl" "$SERVER"; do
    [[ -e "$needed" ]] || { echo "bench-restore.sh: $needed is missing: run scripts/bench-latency.sh first" >&2; exit 2; }
done
cd "$WORK"
results="$(mktemp)"
trap 'rm -f "$results"' EXIT

# One run against a server of its own: LABEL, then the command.
run() {
    local label="$1" port_file server
    shift
    port_file="$(mktemp)"
    # The server stops when its stdin closes: a pipe from a sleep that outlives the run, killed after it.
    sleep 600 | "$SERVER" --latency-query 30 --latency-write 15 --throttle 2000 > "$port_file" &
    server=$!
    until [[ -s "$port_file" ]]; do sleep 0.05; done
    export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$KEY;TableEndpoint=http://127.0.0.1:$(head -1 "$port_file")/devstoreaccount1"
    rm -f Gen2.import-checkpoint.json
    /usr/bin/time -f "$label %e %U %S" -o "$port_file.time" "$@" > /dev/null 2>&1
    cat "$port_file.time" | tee -a "$results"
    pkill -P "$$" -x sleep || true
    wait "$server" 2>/dev/null || true
    rm -f "$port_file" "$port_file.time"
}

for _ in $(seq "$ROUNDS"); do
    run base "$BASE" restore copy16 Restored --from Backed
    run new "$NEW" restore copy16 Restored --from Backed
    run import "$NEW" import gen2.jsonl Gen2 --in-flight 8
done
python3 - "$results" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, wall, *_ = line.split()
    runs.setdefault(label, []).append(float(wall))
floor = min(runs["import"])
for label in ("base", "new", "import"):
    print(f"{label:7} min {min(runs[label]):.2f} s  median {statistics.median(runs[label]):.2f} s  "
          f"min / import's min {min(runs[label]) / floor:.3f}")
EOF
