#!/usr/bin/env bash
# What `tablectl export` costs, against a loopback server answering one recorded page of 1,000 entities
# (`table-model-cli/benches/export.rs`):
#   1. instructions per entity (callgrind, client process only) of decoding the page with `response::query_as`
#      and `response::query`, of fetching and decoding it with a bare reqwest call and `query_as`, and of
#      exporting it (the client's query and the jsonl, csv or Parquet writer, every page into one file, as an
#      export writes a table); each operation runs 2 and 18 pages and (count(18) - count(2)) / (16 * 1000) is the
#      cost of one entity, setup excluded (16 pages: two of the Parquet writer's row groups of 8,192 rows). The
#      exports are counted twice: in all, and only inside sha2's block function `compress256` (callgrind's
#      `--toggle-collect`), the manifest's SHA-256, reported apart: under valgrind sha2 runs its portable code, as
#      valgrind hides the CPU's SHA extensions;
#   2. user time per entity of the same operations run natively (the loop's own user time, printed by the
#      benchmark; interleaved minima of EXPORT_BENCH_ROUNDS rounds, 10 by default), where sha2 uses the SHA
#      extensions, and of the SHA-256 of the page's lines alone;
#   3. peak memory (max RSS, `/usr/bin/time -v`) and entities/s of the release `tablectl export` of 20,000 and
#      200,000 entities in jsonl and csv, from the same server.
# Usage: [EXPORT_BENCH=<path>] [TABLECTL=<path>] scripts/bench-export.sh [instructions|time|memory]   (all by default; needs valgrind and GNU time;
# builds the benchmark and tablectl in release mode, without the `sql` feature, which export does not use)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
# EXPORT_BENCH=<path> measures another build of the benchmark (an earlier commit's, for a before and after).
bin="${EXPORT_BENCH:-}"
if [[ -z "$bin" ]]; then
    bin=$(cargo bench -p table-model-cli --no-default-features --bench export --no-run --message-format=json 2>/dev/null \
        | grep -o '"executable":"[^"]*export-[^"]*"' | tail -1 | cut -d'"' -f4)
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

if [[ "$what" == all || "$what" == instructions ]]; then
    # count OPERATION PAGES [CALLGRIND-OPTION...]
    count() {
        local out
        out=$(EXPORT_BENCH_LOOP="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "${@:3}" "$bin" 2>&1)
        echo "$out" | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
    }
    declare -A per
    for op in decode/query_as decode/query page/query_as page/export-jsonl page/export-jsonl-copy page/export-csv \
        page/export-csv-rows page/export-parquet page/export-parquet-values; do
        a=$(count "$op" 2)
        b=$(count "$op" 18)
        per[$op]=$(( (b - a) / 16 / 1000 ))
        printf '%-32s %8d instructions per entity\n' "$op" "${per[$op]}"
        if [[ "$op" == page/export-* ]]; then
            # With a toggle, callgrind counts only inside the function (collection starts off): the digest.
            a=$(count "$op" 2 '--toggle-collect=sha2::sha256::compress256')
            b=$(count "$op" 18 '--toggle-collect=sha2::sha256::compress256')
            digest=$(( (b - a) / 16 / 1000 ))
            per[$op/no-digest]=$(( per[$op] - digest ))
            printf '%-32s %8d instructions per entity (the digest: %d)\n' "$op/no-digest" "${per[$op/no-digest]}" \
                "$digest"
        fi
    done
    echo "export jsonl / decode with query_as:                   $(ratio "${per[page/export-jsonl]}" "${per[decode/query_as]}")"
    echo "export jsonl without the digest / decode with query_as: $(ratio "${per[page/export-jsonl/no-digest]}" "${per[decode/query_as]}")"
    echo "export jsonl copied / decode with query_as:            $(ratio "${per[page/export-jsonl-copy]}" "${per[decode/query_as]}")"
    echo "export jsonl copied without the digest / query_as:     $(ratio "${per[page/export-jsonl-copy/no-digest]}" "${per[decode/query_as]}")"
    echo "export jsonl / fetch and decode (query_as):            $(ratio "${per[page/export-jsonl]}" "${per[page/query_as]}")"
    echo "export jsonl copied / fetch and decode (query_as):     $(ratio "${per[page/export-jsonl-copy]}" "${per[page/query_as]}")"
    echo "export csv without the digest / decode with query_as:   $(ratio "${per[page/export-csv/no-digest]}" "${per[decode/query_as]}")"
    echo "export csv rows without the digest / query_as:          $(ratio "${per[page/export-csv-rows/no-digest]}" "${per[decode/query_as]}")"
    echo "export csv / export jsonl:                              $(ratio "${per[page/export-csv]}" "${per[page/export-jsonl]}")"
    echo "export csv rows / export jsonl copied:                  $(ratio "${per[page/export-csv-rows]}" "${per[page/export-jsonl-copy]}")"
    echo "export parquet without the digest / query_as:           $(ratio "${per[page/export-parquet/no-digest]}" "${per[decode/query_as]}")"
    echo "export parquet values without the digest / query_as:    $(ratio "${per[page/export-parquet-values/no-digest]}" "${per[decode/query_as]}")"
fi

if [[ "$what" == all || "$what" == time ]]; then
    # user ns per entity: the loop's user time over 300 pages, the minimum of ROUNDS rounds (10 by default; the
    # environment's EXPORT_BENCH_ROUNDS), each round running every operation once, so that the machine's load
    # weighs on all of them alike (interleaved minima).
    ops=(decode/query_as decode/query page/query_as page/export-jsonl page/export-jsonl-copy page/export-csv
        page/export-csv-rows page/export-parquet page/export-parquet-values digest/sha256)
    declare -A ns
    for _ in $(seq 1 "${EXPORT_BENCH_ROUNDS:-10}"); do
        for op in "${ops[@]}"; do
            t=$(EXPORT_BENCH_LOOP="$op:300" "$bin" 2>&1 >/dev/null | grep -o 'user_ns=[0-9]*' | cut -d= -f2)
            t=$(( t / 300 / 1000 ))
            if [[ -z "${ns[$op]:-}" || "$t" -lt "${ns[$op]}" ]]; then ns[$op]=$t; fi
        done
    done
    for op in "${ops[@]}"; do
        printf '%-26s %8d ns user time per entity\n' "$op" "${ns[$op]}"
    done
    echo "export jsonl / decode with query_as (user time): $(ratio "${ns[page/export-jsonl]}" "${ns[decode/query_as]}")"
    echo "export jsonl copied / query_as (user time):      $(ratio "${ns[page/export-jsonl-copy]}" "${ns[decode/query_as]}")"
    echo "export jsonl copied / fetch and decode (user):   $(ratio "${ns[page/export-jsonl-copy]}" "${ns[page/query_as]}")"
    echo "export csv / decode with query_as (user time):   $(ratio "${ns[page/export-csv]}" "${ns[decode/query_as]}")"
    echo "export csv rows / query_as (user time):          $(ratio "${ns[page/export-csv-rows]}" "${ns[decode/query_as]}")"
    echo "export parquet / query_as (user time):           $(ratio "${ns[page/export-parquet]}" "${ns[decode/query_as]}")"
    echo "export parquet values / query_as (user time):    $(ratio "${ns[page/export-parquet-values]}" "${ns[decode/query_as]}")"
fi

if [[ "$what" == all || "$what" == memory ]]; then
    # TABLECTL=<path> measures another build (an earlier commit's, for a before and after).
    tablectl="${TABLECTL:-}"
    if [[ -z "$tablectl" ]]; then
        cargo build --release -p table-model-cli --no-default-features --bin tablectl 2>/dev/null
        tablectl="${CARGO_TARGET_DIR:-target}/release/tablectl"
    fi
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
            out=$(/usr/bin/time -f 'rss=%M wall=%e user=%U' "$tablectl" export Customers -o "$dir/out.$format" \
                --format "$format" --force 2>&1)
            rss=$(echo "$out" | grep -o 'rss=[0-9]*' | cut -d= -f2)
            wall=$(echo "$out" | grep -o 'wall=[0-9.]*' | cut -d= -f2)
            user=$(echo "$out" | grep -o 'user=[0-9.]*' | cut -d= -f2)
            printf '%-6s %7d entities: max RSS %7d KiB, file %10d bytes, %s s (user %s s), %s entities/s\n' \
                "$format" $((pages * 1000)) "$rss" "$(stat -c %s "$dir/out.$format")" "$wall" "$user" \
                "$(awk -v n=$((pages * 1000)) -v t="$wall" 'BEGIN { printf "%.0f", n / t }')"
        done
        exec 3>&-
        wait "$server" || true
        rm -f "$dir/in" "$dir/port"
    done
    rm -rf "$dir"
fi
