#!/usr/bin/env bash
# What `tablectl export` costs, against a loopback server answering one recorded page of 1,000 entities
# (`table-model-cli/benches/export.rs`):
#   1. instructions per entity (callgrind, client process only) of decoding the page with `response::query_as`
#      and `response::query`, of fetching and decoding it with a bare reqwest call and `query_as`, and of
#      exporting it (the client's query and the jsonl or csv writer); each operation runs N1 and N2 pages and
#      (count(N2) - count(N1)) / ((N2 - N1) * 1000) is the cost of one entity, setup excluded;
#   2. peak memory (max RSS, `/usr/bin/time -v`) of the release `tablectl export` of 20,000 and 200,000 entities
#      in jsonl and csv, from the same server.
# Usage: scripts/bench-export.sh [instructions|memory]   (both by default; needs valgrind and GNU time; builds
# the benchmark and tablectl in release mode)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
bin=$(cargo bench -p table-model-cli --bench export --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*export-[^"]*"' | tail -1 | cut -d'"' -f4)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

if [[ "$what" == all || "$what" == instructions ]]; then
    count() {
        local out
        out=$(EXPORT_BENCH_LOOP="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1)
        echo "$out" | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
    }
    declare -A per
    for op in decode/query_as decode/query page/query_as page/export-jsonl page/export-csv; do
        a=$(count "$op" 2)
        b=$(count "$op" 12)
        per[$op]=$(( (b - a) / 10 / 1000 ))
        printf '%-18s %8d instructions per entity\n' "$op" "${per[$op]}"
    done
    echo "export jsonl / decode with query_as:        $(ratio "${per[page/export-jsonl]}" "${per[decode/query_as]}")"
    echo "export jsonl / fetch and decode (query_as): $(ratio "${per[page/export-jsonl]}" "${per[page/query_as]}")"
    echo "export csv / export jsonl:                   $(ratio "${per[page/export-csv]}" "${per[page/export-jsonl]}")"
fi

if [[ "$what" == all || "$what" == memory ]]; then
    cargo build --release -p table-model-cli --bin tablectl 2>/dev/null
    tablectl="${CARGO_TARGET_DIR:-target}/release/tablectl"
    dir=$(mktemp -d)
    for pages in 20 200; do
        # The server runs until its standard input closes: a fifo held open by this script.
        mkfifo "$dir/in"
        EXPORT_BENCH_SERVE=$pages "$bin" <"$dir/in" >"$dir/port" &
        server=$!
        exec 3>"$dir/in"
        while [[ ! -s "$dir/port" ]]; do sleep 0.1; done
        port=$(head -1 "$dir/port")
        export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:$port/devstoreaccount1;"
        for format in jsonl csv; do
            rss=$(/usr/bin/time -v "$tablectl" export Customers -o "$dir/out.$format" --format "$format" --force 2>&1 \
                | grep 'Maximum resident set size' | grep -o '[0-9]*')
            printf '%-6s %7d entities: max RSS %7d KiB, file %10d bytes\n' "$format" $((pages * 1000)) "$rss" \
                "$(stat -c %s "$dir/out.$format")"
        done
        exec 3>&-
        wait "$server" || true
        rm -f "$dir/in" "$dir/port"
    done
    rm -rf "$dir"
fi
