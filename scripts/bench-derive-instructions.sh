#!/usr/bin/env bash
# Instructions per operation of `table-model/benches/derive.rs`, counted with callgrind, which other load on the
# machine does not disturb (wall-clock benchmarks on a shared 2-core machine move by tens of percent).
# Each operation runs N1 and N2 times; (count(N2) - count(N1)) / (N2 - N1) is the cost of one, setup excluded.
# Usage: scripts/bench-derive-instructions.sh   (needs valgrind; builds the bench in release mode)
set -euo pipefail
cd "$(dirname "$0")/.."
N1=200
N2=2200
bin=$(cargo bench -p table-model --bench derive --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*derive-[^"]*"' | tail -1 | cut -d'"' -f4)
count() {
    local out
    out=$(DERIVE_BENCH_LOOP="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1)
    echo "$out" | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
}
declare -A per
for op in encode/serde_json_derive encode/to_json encode/to_entity+encode_entity \
    decode/serde_json_derive decode/from_json_minimalmetadata decode/from_json_nometadata \
    decode/decoder_core_discarding_minimalmetadata decode/decode_entity+from_entity; do
    a=$(count "$op" "$N1")
    b=$(count "$op" "$N2")
    per[$op]=$(( (b - a) / (N2 - N1) ))
    printf '%-48s %8d instructions\n' "$op" "${per[$op]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "encode to_json / serde_json derive:                 $(ratio "${per[encode/to_json]}" "${per[encode/serde_json_derive]}")"
echo "decode from_json minimalmetadata / serde_json derive: $(ratio "${per[decode/from_json_minimalmetadata]}" "${per[decode/serde_json_derive]}")"
echo "decode from_json nometadata / serde_json derive:      $(ratio "${per[decode/from_json_nometadata]}" "${per[decode/serde_json_derive]}")"
