#!/usr/bin/env bash
# `tablectl validate` against `jq -c . >/dev/null` on the same JSON-lines file, in one run.
#
#   scripts/bench-validate.sh [FILE] [ROUNDS]     (default .bench/validate-1g.jsonl, 3 rounds)
#
# Without FILE, writes 1 GB (10^9 bytes) of entities to .bench/validate-1g.jsonl once (a fixed seed; about 590
# bytes per line: keys, a String with non-ASCII text and escapes, Int32, Double, DateTime, Guid, Int64, Boolean,
# 90 bytes of Binary, a String of 0 to 80 bytes), every one valid for both services. Each round runs
# `tablectl validate FILE --service portable --json` then `jq -c . FILE >/dev/null`, interleaved, after one
# untimed read of the file so both find it in the page cache; the report gives the best wall time of each and
# MB/s (10^6 bytes). jq is not a dependency of anything else: install it for this (`apt-get install jq`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FILE="${1:-$ROOT/.bench/validate-1g.jsonl}"
ROUNDS="${2:-3}"
command -v jq >/dev/null || { echo "bench-validate: jq is not installed (apt-get install jq)" >&2; exit 2; }

if [ ! -f "$FILE" ]; then
  mkdir -p "$(dirname "$FILE")"
  python3 - "$FILE" <<'PY'
import base64, json, random, sys, uuid
random.seed(7)
words = ["alpha", "beta", "gamma", "delta", "épsilon", "ζeta", "東京", "naïve", 'quote"d', "tab\tbed"]
size, n = 0, 0
with open(sys.argv[1], "w", encoding="utf-8") as out:
    while size < 10**9:
        e = {"PartitionKey": "p%04d" % (n // 1000), "RowKey": "%012d" % n,
             "Name": " ".join(random.choice(words) for _ in range(5)), "Age": random.randint(0, 120),
             "Score@odata.type": "Edm.Double", "Score": random.random() * 1000,
             "Created@odata.type": "Edm.DateTime",
             "Created": "2024-%02d-%02dT10:11:12.1234567Z" % (random.randint(1, 12), random.randint(1, 28)),
             "Ref@odata.type": "Edm.Guid", "Ref": str(uuid.UUID(int=random.getrandbits(128))),
             "Big@odata.type": "Edm.Int64", "Big": str(random.getrandbits(62)), "Flag": random.random() < 0.5,
             "Data@odata.type": "Edm.Binary", "Data": base64.b64encode(random.randbytes(90)).decode(),
             "Note": "x" * random.randint(0, 80)}
        line = json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n"
        out.write(line)
        size += len(line.encode())
        n += 1
PY
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -q -p table-model-cli
TABLECTL="$CARGO_TARGET_DIR/release/tablectl"
BYTES=$(stat -c %s "$FILE")
cat "$FILE" >/dev/null

now() { date +%s.%N; }
best_validate=inf best_jq=inf
for round in $(seq "$ROUNDS"); do
  start=$(now); "$TABLECTL" validate "$FILE" --service portable --json >/dev/null 2>&1 || true; end=$(now)
  t=$(echo "$end - $start" | bc); best_validate=$(python3 -c "print(min(float('$best_validate'), $t))")
  start=$(now); jq -c . "$FILE" >/dev/null; end=$(now)
  u=$(echo "$end - $start" | bc); best_jq=$(python3 -c "print(min(float('$best_jq'), $u))")
  echo "round $round: validate ${t}s, jq ${u}s"
done
python3 - "$BYTES" "$best_validate" "$best_jq" "$(nproc)" <<'PY'
import sys
size, v, j, cores = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print(f"{size / 1e6:.0f} MB, {cores} cores, best of the rounds:")
print(f"  tablectl validate --service portable  {v:6.2f} s  {size / 1e6 / v:7.1f} MB/s")
print(f"  jq -c . >/dev/null                    {j:6.2f} s  {size / 1e6 / j:7.1f} MB/s")
print(f"  validate is {j / v:.1f}x jq")
PY
