#!/usr/bin/env bash
# Instructions per operation of `table-model/benches/batch.rs`, counted with callgrind, which other load on the
# machine does not disturb (wall-clock benchmarks on a shared 2-core machine move by tens of percent).
# Each operation runs N1 and N2 times; (count(N2) - count(N1)) / (N2 - N1) is the cost of one, setup excluded.
# Usage: scripts/bench-batch-instructions.sh [all]   (needs valgrind; builds the bench in release mode, or
# counts the binary BATCH_BENCH_BIN names, for a before/after comparison)
# Without `all`, only the 100-entity operations; with it, the reader and the splitter at growing sizes too
# (the naive splitter up to 1 MiB only: at 16 MiB it runs for hours under callgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BATCH_BENCH_BIN:-$(cargo bench -p table-model --bench batch --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*batch-[^"]*"' | tail -1 | cut -d'"' -f4)}
count() {
    local out
    out=$(BATCH_BENCH_LOOP="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1)
    echo "$out" | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
}
declare -A per
measure() {
    local op=$1 n1=$2 n2=$3 a b
    a=$(count "$op" "$n1")
    b=$(count "$op" "$n2")
    per[$op]=$(( (b - a) / (n2 - n1) ))
    printf '%-40s %14d instructions\n' "$op" "${per[$op]}"
}
for op in "serde_json_to_vec_100 (baseline)" to_json_100 Batch::insert_100 TableService::batch_100 \
    insert_100+TableService::batch response::batch_100; do
    measure "$op" 2 12
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
serde=${per["serde_json_to_vec_100 (baseline)"]}
for op in to_json_100 Batch::insert_100 TableService::batch_100 insert_100+TableService::batch; do
    printf '%-40s %sx serde_json\n' "$op" "$(ratio "${per[$op]}" "$serde")"
done
if [ "${1:-}" = all ]; then
    for op in response::batch_1MiB response::batch_4MiB response::batch_16MiB split8k/memmem_256KiB \
        split8k/memmem_1024KiB split8k/memmem_4096KiB split8k/memmem_16384KiB; do
        measure "$op" 1 3
    done
    for op in split8k/naive_256KiB split8k/naive_1024KiB; do
        measure "$op" 1 2
    done
fi
