#!/usr/bin/env bash
# Instructions per operation of `table-model/benches/client.rs` (the client against a bare reqwest call), counted
# with callgrind in the client process only (the loopback server is a child process that valgrind does not
# follow), which other load on the machine does not disturb.
# Each operation runs N1 and N2 times; (count(N2) - count(N1)) / (N2 - N1) is the cost of one, setup excluded.
# Usage: scripts/bench-client-instructions.sh   (needs valgrind; builds the bench in release mode)
# RUST_BACKTRACE is left as the caller has it: azure_core captures a backtrace for each error it builds.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cargo bench -p table-model --bench client --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*client-[^"]*"' | tail -1 | cut -d'"' -f4)
count() {
    local out
    out=$(CLIENT_BENCH_LOOP="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1)
    echo "$out" | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
}
declare -A per
for spec in get/baseline:50:250 get/client:50:250 get/traced:50:250 page/baseline:5:25 page/client:5:25; do
    IFS=: read -r op n1 n2 <<<"$spec"
    a=$(count "$op" "$n1")
    b=$(count "$op" "$n2")
    per[$op]=$(( (b - a) / (n2 - n1) ))
    printf '%-16s %10d instructions\n' "$op" "${per[$op]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo "point read client / baseline:       $(ratio "${per[get/client]}" "${per[get/baseline]}")"
echo "1,000-entity page client / baseline: $(ratio "${per[page/client]}" "${per[page/baseline]}")"
echo "point read traced / untraced:       $(ratio "${per[get/traced]}" "${per[get/client]}")"
echo "one span (traced - untraced) / 2:   $(( (per[get/traced] - per[get/client]) / 2 )) instructions"
