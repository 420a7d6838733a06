"""The Python side of scripts/bench-vs-python.sh, and its report.

    bench_python_tables.py run --table NAME [--count 10000] [--partitions 10] [--threads 0]
        Against the Table service in TABLE_MODEL_AZURITE_ENDPOINT, with azure-data-tables: creates the table,
        inserts the entities with the SDK's documented best practice (entities grouped by PartitionKey,
        `submit_transaction` per 100 operations, one after the other; `--threads N` sends the transactions from
        a thread pool instead), reads the whole table back with `list_entities()`, checks what was read
        against what was sent (untimed), deletes the table and prints one JSON line: the time of each phase and
        the process's peak memory (`ru_maxrss`).

    bench_python_tables.py report FILE
        Reads the JSON lines of every round and prints the minimum time of each phase per side and variant,
        entities per second, peak RSS, and the ratios against the Python baseline (Markdown).

The entities are those of examples/bench_bulk.rs, formula for formula: 12 properties of every EDM type
(Binary, Boolean, DateTime, Double, Guid, Int32, Int64, String).
"""

import argparse
import json
import os
import resource
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

ACCOUNT = "devstoreaccount1"
# The emulator's well-known development key (public, documented by Microsoft; not a secret).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CITIES = ["Zürich", "Lisbon", "Nairobi", "Osaka", "Quito", "Tromsø", "Perth"]
START = datetime(2024, 5, 1, tzinfo=timezone.utc)
GUID_FACTOR = 0x9E3779B97F4A7C15F39CC0605CEDC834
BASELINE = "submit_transaction per 100, sequential"


def entity(i, partitions):
    """Entity `i`: the same values as `entity(i)` in examples/bench_bulk.rs."""
    from azure.data.tables import EdmType, EntityProperty

    return {
        "PartitionKey": f"p{i % partitions:02}",
        "RowKey": f"{i:08}",
        "Customer": f"customer {i}",
        "City": CITIES[i % 7],
        "Note": f'order {i}: "fragile"\tline 1\nline 2 \\ {i * 31}',
        "Quantity": i % 1000 - 500,
        "TotalCents": EntityProperty(i * 1_000_000_007, EdmType.INT64),
        "Sequence": EntityProperty(-i * 3_000_000_019, EdmType.INT64),
        "Price": i * 0.01 + 0.5,
        "Ratio": 1.0 / (i + 3.0),
        "Shipped": i % 3 == 0,
        "OrderId": uuid.UUID(int=(GUID_FACTOR * (i + 1)) % 2**128),
        "Created": START + timedelta(seconds=i, microseconds=i % 1_000_000),
        "Payload": bytes((i * 131 + b * 7) % 256 for b in range(32)),
    }


def transactions(count, partitions):
    """The insert transactions of the best practice: per partition, 100 operations at a time."""
    for p in range(partitions):
        batch = []
        for i in range(p, count, partitions):
            batch.append(("create", entity(i, partitions)))
            if len(batch) == 100:
                yield batch
                batch = []
        if batch:
            yield batch


def plain(value):
    """A read value in the form `entity` writes it (Int64 comes back as an EntityProperty)."""
    if hasattr(value, "edm_type") and hasattr(value, "value"):
        return value.value
    return value


def check(read, count, partitions):
    if len(read) != count:
        sys.exit(f"read back {len(read)} entities, expected {count}")
    seen = set()
    for got in read:
        i = int(got["RowKey"])
        if i in seen or not 0 <= i < count:
            sys.exit(f"RowKey {got['RowKey']!r} unexpected or read twice")
        seen.add(i)
        sent = entity(i, partitions)
        for name, value in sent.items():
            if plain(got.get(name)) != plain(value):
                sys.exit(f"entity {i}: {name} sent {plain(value)!r}, read {plain(got.get(name))!r}")
        if len(got) != len(sent):
            sys.exit(f"entity {i}: {len(got)} properties read, {len(sent)} sent")


def cpu_s(pid):
    """CPU seconds (user + system) a process has used, from /proc/<pid>/stat (None when unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cpu_now():
    """CPU seconds of this process and of the server, whose pid the script passes in BENCH_SERVER_PID."""
    server = os.environ.get("BENCH_SERVER_PID")
    return cpu_s("self"), cpu_s(server) if server else None


def used(before, after):
    return tuple(None if a is None or b is None else round(b - a, 2) for a, b in zip(before, after))


def run(args):
    from azure.data.tables import TableServiceClient

    endpoint = os.environ["TABLE_MODEL_AZURITE_ENDPOINT"]
    conn = f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};TableEndpoint={endpoint};"
    service = TableServiceClient.from_connection_string(conn)
    service.delete_table(args.table)  # no error when there is none
    table = service.create_table(args.table)

    cpu_before = cpu_now()
    started = time.perf_counter()
    written = sent = 0
    if args.threads > 0:
        with ThreadPoolExecutor(max_workers=args.threads) as pool:
            for answer in pool.map(table.submit_transaction, transactions(args.count, args.partitions)):
                written += len(answer)
                sent += 1
    else:
        for batch in transactions(args.count, args.partitions):
            written += len(table.submit_transaction(batch))
            sent += 1
    insert_s = time.perf_counter() - started
    cpu_inserted = cpu_now()
    if written != args.count:
        sys.exit(f"{written} entities written, expected {args.count}")

    started = time.perf_counter()
    read = list(table.list_entities())
    read_s = time.perf_counter() - started
    cpu_read = cpu_now()
    insert_cpu, insert_server_cpu = used(cpu_before, cpu_inserted)
    read_cpu, read_server_cpu = used(cpu_inserted, cpu_read)
    # ru_maxrss is in KiB on Linux.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    check(read, args.count, args.partitions)
    service.delete_table(args.table)
    variant = BASELINE if args.threads == 0 else f"submit_transaction per 100, {args.threads} threads"
    line = {
        "side": "python",
        "variant": variant,
        "count": args.count,
        "insert_s": round(insert_s, 6),
        "read_s": round(read_s, 6),
        "transactions": sent,
        "peak_rss_kib": peak,
        "insert_cpu_s": insert_cpu,
        "read_cpu_s": read_cpu,
        "insert_server_cpu_s": insert_server_cpu,
        "read_server_cpu_s": read_server_cpu,
    }
    print(json.dumps(line, ensure_ascii=False))


def report(args):
    rows = {}
    with open(args.file, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows.setdefault((r["side"], r["variant"]), []).append(r)
    base = rows.get(("python", BASELINE))
    base_insert = min(r["insert_s"] for r in base) if base else None
    base_read = min(r["read_s"] for r in base) if base else None
    print("| side | variant | rounds | insert, min | insert entities/s | read, min | read entities/s | peak RSS "
          "| insert vs Python | read vs Python |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (side, variant), rs in rows.items():
        count = rs[0]["count"]
        insert = min(r["insert_s"] for r in rs)
        read = min(r["read_s"] for r in rs)
        peaks = [r["peak_rss_kib"] / 1024 for r in rs if r.get("peak_rss_kib")]
        peak = f"{max(peaks):.1f} MiB" if peaks else "?"
        if min(peaks, default=0) < max(peaks, default=0) - 0.5:
            peak = f"{min(peaks):.1f} to {max(peaks):.1f} MiB"
        ratio_i = f"{base_insert / insert:.2f}x" if base_insert else "?"
        ratio_r = f"{base_read / read:.2f}x" if base_read else "?"
        print(f"| {side} | {variant} | {len(rs)} | {insert:.3f} s | {count / insert:,.0f} | {read:.3f} s "
              f"| {count / read:,.0f} | {peak} | {ratio_i} | {ratio_r} |")
    print()
    print("CPU seconds per phase, mean over rounds (client: the benchmark's process; server: Azurite's), against")
    print("the phase's wall time:")
    print()
    print("| side | variant | insert wall | insert client CPU | insert server CPU | read wall | read client CPU "
          "| read server CPU |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")

    def mean(rs, key):
        values = [r[key] for r in rs if r.get(key) is not None]
        return f"{sum(values) / len(values):.2f}" if values else "?"

    for (side, variant), rs in rows.items():
        print(f"| {side} | {variant} | {mean(rs, 'insert_s')} | {mean(rs, 'insert_cpu_s')} "
              f"| {mean(rs, 'insert_server_cpu_s')} | {mean(rs, 'read_s')} | {mean(rs, 'read_cpu_s')} "
              f"| {mean(rs, 'read_server_cpu_s')} |")
    print()
    print("Each round, in order (seconds):")
    for (side, variant), rs in rows.items():
        times = ", ".join(f"{r['insert_s']:.3f}/{r['read_s']:.3f}" for r in rs)
        print(f"- {side}, {variant}: insert/read {times}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--table", required=True)
    r.add_argument("--count", type=int, default=10_000)
    r.add_argument("--partitions", type=int, default=10)
    r.add_argument("--threads", type=int, default=0)
    p = sub.add_parser("report")
    p.add_argument("file")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
