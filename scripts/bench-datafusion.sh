#!/usr/bin/env bash
# What the DataFusion provider (table-model-datafusion) costs, against the workspace's in-memory Table service on
# loopback (test-utils/src/service.rs, answering at once: no latency, no throttle) holding a table of the
# benchmarks' entity (`table-model-datafusion/benches/scan.rs`; the server is a child process, outside callgrind):
#   1. instructions (callgrind, client process only) per entity of the provider's scan into record batches, of
#      the client's query into a derived struct, and of decoding the same page in process with
#      `response::query_as` (the baseline), straight into a `BatchBuilder` or through `Entity`s into one; each
#      operation reads one page of 1,000
#      entities N1 and N2 times and (count(N2) - count(N1)) / ((N2 - N1) * 1000) is the cost of one entity;
#   2. wall time (interleaved minima) of a full-table aggregate with target_partitions 1 and 4, and of a query
#      of one partition of fifty with and without filter pushdown, with the entities each made the server send,
#      for 20,000 and 200,000 entities;
#   3. peak memory (max RSS, `/usr/bin/time -v`, the client process alone) of the aggregate with 1 and 4
#      partitions, for 20,000 and 200,000 entities;
#   4. `latency` (not in `all`): wall time of the aggregate with target_partitions 1, 4 and 16 against the same
#      server answering each page after 30 ms, as the service does, for 200,000 entities in 400 partitions.
# Usage: scripts/bench-datafusion.sh [instructions|time|memory|latency] [ROUNDS]   (all by default; ROUNDS of the time
# runs, 5 by default; needs valgrind and GNU time; builds the benchmark in release mode)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
rounds="${2:-5}"
bin=$(cargo bench -p table-model-datafusion --bench scan --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*scan-[^"]*"' | tail -1 | cut -d'"' -f4)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

if [[ "$what" == all || "$what" == instructions ]]; then
    count() {
        local out
        out=$(DF_BENCH_LOOP="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1)
        echo "$out" | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
    }
    declare -A per
    for op in decode/query_as decode/batch decode/entities page/query_as scan/batches; do
        a=$(count "$op" 2)
        b=$(count "$op" 12)
        per[$op]=$(( (b - a) / 10 / 1000 ))
        printf '%-16s %8d instructions per entity\n' "$op" "${per[$op]}"
    done
    echo "scan into batches / decode with query_as:            $(ratio "${per[scan/batches]}" "${per[decode/query_as]}")"
    echo "scan into batches / the client's query into structs: $(ratio "${per[scan/batches]}" "${per[page/query_as]}")"
    echo "decode into a batch / decode with query_as:          $(ratio "${per[decode/batch]}" "${per[decode/query_as]}")"
    echo "entities into a batch / decode with query_as:        $(ratio "${per[decode/entities]}" "${per[decode/query_as]}")"
fi

if [[ "$what" == all || "$what" == time ]]; then
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    for entities in 20000 200000; do
        DF_BENCH_SQL="$entities:50:$rounds" "$bin"
    done
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if [[ "$what" == latency ]]; then
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    DF_BENCH_SQL="200000:400:$rounds:30" "$bin"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if [[ "$what" == all || "$what" == memory ]]; then
    dir=$(mktemp -d)
    for entities in 20000 200000; do
        # The server runs until its standard input closes: a fifo held open by this script.
        mkfifo "$dir/in"
        DF_BENCH_SERVE="$entities:50" "$bin" <"$dir/in" >"$dir/port" &
        server=$!
        exec 3>"$dir/in"
        while [[ ! -s "$dir/port" ]]; do sleep 0.1; done
        port=$(head -1 "$dir/port")
        for case in aggregate/1 aggregate/4; do
            rss=$(DF_BENCH_QUERY="$case" DF_BENCH_PORT="$port" /usr/bin/time -v "$bin" 2>&1 \
                | grep 'Maximum resident set size' | grep -o '[0-9]*')
            printf '%-12s %7d entities: max RSS %7d KiB\n' "$case" "$entities" "$rss"
        done
        exec 3>&-
        wait "$server" || true
        rm -f "$dir/in" "$dir/port"
    done
    rm -rf "$dir"
fi
