#!/usr/bin/env bash
# Instructions per operation of the derive benchmarks, counted with callgrind, which other load on the machine
# does not disturb (wall-clock benchmarks on a shared 2-core machine move by tens of percent).
# Each operation runs N1 and N2 times; (count(N2) - count(N1)) / (N2 - N1) is the cost of one, setup excluded.
# Sections (SECTIONS="serde width" by default):
#   serde  `table-model/benches/derive.rs`: the direct JSON path against serde_json's derive, one 12-field struct;
#   width  `table-model/benches/derive_width.rs`: `to_json` + `from_json` per property at 12 and 252 properties.
# Usage: scripts/bench-derive-instructions.sh   (needs valgrind; builds the benches in release mode)
set -euo pipefail
cd "$(dirname "$0")/.."
N1=200
N2=2200
SECTIONS="${SECTIONS:-serde width}"
# The executable of bench $1.
bench_bin() {
    cargo bench -p table-model --bench "$1" --no-run --message-format=json 2>/dev/null \
        | grep -o "\"executable\":\"[^\"]*/$1-[^\"]*\"" | tail -1 | cut -d'"' -f4
}
# Instructions of $3 runs of operation $2 of executable $1, whose loop variable is $4.
count() {
    local out
    out=$(env "$4=$2:$3" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" 2>&1)
    echo "$out" | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
}
declare -A per
# Instructions of one run of operation $2 of executable $1 (loop variable $3), kept in per[$2] and printed.
measure() {
    local a b
    a=$(count "$1" "$2" "$N1" "$3")
    b=$(count "$1" "$2" "$N2" "$3")
    per[$2]=$(( (b - a) / (N2 - N1) ))
    printf '%-48s %8d instructions\n' "$2" "${per[$2]}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

if [[ " $SECTIONS " == *" serde "* ]]; then
    bin=$(bench_bin derive)
    for op in encode/serde_json_derive encode/to_json encode/to_entity+encode_entity \
        decode/serde_json_derive decode/from_json_minimalmetadata decode/from_json_nometadata \
        decode/decoder_core_discarding_minimalmetadata decode/decode_entity+from_entity; do
        measure "$bin" "$op" DERIVE_BENCH_LOOP
    done
    echo "encode to_json / serde_json derive:                 $(ratio "${per[encode/to_json]}" "${per[encode/serde_json_derive]}")"
    echo "decode from_json minimalmetadata / serde_json derive: $(ratio "${per[decode/from_json_minimalmetadata]}" "${per[decode/serde_json_derive]}")"
    echo "decode from_json nometadata / serde_json derive:      $(ratio "${per[decode/from_json_nometadata]}" "${per[decode/serde_json_derive]}")"
fi

if [[ " $SECTIONS " == *" width "* ]]; then
    bin=$(bench_bin derive_width)
    for n in 12 252; do
        for op in to_json from_json decoder_core; do
            measure "$bin" "$n/$op" DERIVE_WIDTH_BENCH_LOOP
        done
    done
    # Per property: to_json + from_json; the decoder core alone; the rest of from_json (the generated code).
    for n in 12 252; do
        pp[$n]=$(awk -v a="${per[$n/to_json]}" -v b="${per[$n/from_json]}" -v n="$n" 'BEGIN { printf "%.1f", (a + b) / n }')
        core[$n]=$(awk -v c="${per[$n/decoder_core]}" -v n="$n" 'BEGIN { printf "%.1f", c / n }')
        rest[$n]=$(awk -v a="${per[$n/to_json]}" -v b="${per[$n/from_json]}" -v c="${per[$n/decoder_core]}" -v n="$n" \
            'BEGIN { printf "%.1f", (a + b - c) / n }')
        echo "$n properties, per property: to_json + from_json ${pp[$n]}, decoder core ${core[$n]}, the rest ${rest[$n]}"
    done
    echo "per property, 252 / 12: to_json + from_json $(ratio "${pp[252]}" "${pp[12]}"), decoder core $(ratio "${core[252]}" "${core[12]}"), the rest $(ratio "${rest[252]}" "${rest[12]}")"
fi
