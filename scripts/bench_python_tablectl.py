"""The Python side of scripts/bench-tablectl.sh: the input, the Python SDK's export and import, the timing of
tablectl's, and the report.

    bench_python_tablectl.py generate --count N --out FILE
        Writes N entities as JSON lines in the service's own JSON (the input of every import, and of the source
        table of every export), sorted by PartitionKey and RowKey as an export writes them: a mixed schema of
        three kinds of entity (orders, customers, events; 11 to 13 properties with the keys, of every EDM type,
        some sometimes absent), 200 per partition (100 partitions at 20,000, 1,000 at 200,000).

    bench_python_tablectl.py export --table T --count N --out FILE [--threads K]
        azure-data-tables: `list_entities()` written to FILE as JSON lines, one `json.dumps` per entity; with
        `--threads K`, K threads each list a PartitionKey range (`query_entities` with `ge`/`lt`, the ranges cut
        from the known key layout) into FILE.K. Prints one JSON line.

    bench_python_tablectl.py import --file FILE --table T --count N [--threads K]
        azure-data-tables: FILE read line by line, each line's annotated values made the SDK's typed values, the
        entities of a partition sent with `submit_transaction` per 100 (the best practice of
        scripts/bench_python_tables.py), one after the other or from a pool of K threads (at most 2K
        transactions queued). The table is deleted and created first. Prints one JSON line.

    bench_python_tablectl.py drop --table T
        Deletes the table, if there is one.

    bench_python_tablectl.py time --op export|import --variant V --count N -- COMMAND...
        Runs COMMAND (tablectl) under GNU time and prints one JSON line: its wall time, peak RSS (GNU time's
        %M) and CPU (wait4), and Azurite's CPU over the same time.

    bench_python_tablectl.py report FILE
        The minimum time of each operation, size, side and variant over the rounds, entities/s, peak RSS, and
        the ratios against the sequential Python baseline of the same operation and size (Markdown).
"""

import argparse
import base64
import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no scripts/__pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_python_tables import ACCOUNT, KEY, cpu_now, used  # noqa: E402  (one definition of each)

PER_PARTITION = 200
CITIES = ["Zürich", "Lisbon", "Nairobi", "Osaka", "Quito", "Tromsø", "Perth", "São Paulo"]
LEVELS = ["debug", "info", "warn", "error"]
BASELINE = "sequential"


def partition_key(p):
    return f"tenant-{p:05}"


def ticks_text(i):
    """A DateTime with 7 fractional digits, as the service writes it."""
    seconds = 1_714_521_600 + i * 37
    fraction = (i * 7_919_113) % 10_000_000
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction:07}Z"


def guid_text(i):
    h = f"{(0x9E3779B97F4A7C15F39CC0605CEDC834 * (i + 1)) % 2**128:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def generated(i):
    """Entity `i` as the service's JSON object (with `@odata.type` annotations)."""
    p, r = divmod(i, PER_PARTITION)
    e = {"PartitionKey": partition_key(p), "RowKey": f"{r:06}-{i:08x}"}

    def typed(name, edm, value):
        e[name + "@odata.type"] = edm
        e[name] = value

    kind = i % 3
    e["Kind"] = ("order", "customer", "event")[kind]
    typed("Created", "Edm.DateTime", ticks_text(i))
    typed("Version", "Edm.Int64", str(i * 1_000_003 + 2**40))
    if kind == 0:
        e["Customer"] = f"customer {i % 5003}"
        e["City"] = CITIES[i % len(CITIES)]
        if i % 5:
            e["Note"] = f'order {i}: "fragile"\tline 1\nline 2 \\ {i * 31}'
        e["Quantity"] = i % 1000 - 500
        typed("TotalCents", "Edm.Int64", str(i * 1_000_000_007))
        if i % 7 == 0:
            typed("Price", "Edm.Double", float(i % 100))  # an integral Double keeps its annotation
        else:
            e["Price"] = i * 0.01 + 0.5
        e["Shipped"] = i % 2 == 0
        typed("OrderId", "Edm.Guid", guid_text(i))
    elif kind == 1:
        e["Name"] = f"Ada Lovelace-{i}"
        e["Email"] = f"user{i}@example.com"
        e["Age"] = 18 + i % 80
        e["Balance"] = (i % 10_000) / 7.0
        e["Active"] = i % 4 != 0
        if i % 3:
            e["Tags"] = "vip,emea,beta" if i % 2 else ""
        typed("Avatar", "Edm.Binary", base64.b64encode(bytes((i * 131 + b * 7) % 256 for b in range(64))).decode())
    else:
        e["Level"] = LEVELS[i % 4]
        e["Message"] = f"request {i} handled by node-{i % 17} in region westeurope; " * 3
        e["DurationMs"] = (i % 5000) * 0.25 + 0.125
        e["Code"] = 200 + i % 5 * 100
        typed("TraceId", "Edm.Guid", guid_text(i * 3))
        typed("Payload", "Edm.Binary", base64.b64encode(bytes((i + b) % 256 for b in range(32))).decode())
    return e


def generate(args):
    with open(args.out, "w", encoding="utf-8") as f:
        for i in range(args.count):
            f.write(json.dumps(generated(i), ensure_ascii=False, separators=(",", ":")))
            f.write("\n")


def service_client():
    from azure.data.tables import TableServiceClient

    endpoint = os.environ["TABLE_MODEL_AZURITE_ENDPOINT"]
    conn = f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};TableEndpoint={endpoint};"
    return TableServiceClient.from_connection_string(conn)


def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def emit(op, variant, count, seconds, cpu_before, cpu_after, **extra):
    client_cpu, server_cpu = used(cpu_before, cpu_after)
    line = {"side": "python", "op": op, "variant": variant, "count": count, "s": round(seconds, 6),
            "peak_rss_kib": peak_kib(), "cpu_s": client_cpu, "server_cpu_s": server_cpu, **extra}
    print(json.dumps(line), flush=True)


def plain_json(value):
    """What `json.dumps` cannot write itself: the SDK's typed values (the `default` of every dump)."""
    from uuid import UUID

    if isinstance(value, datetime):
        return getattr(value, "tables_service_value", "") or value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value)} is not JSON")


def dump(entities, path):
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        for entity in entities:
            # EntityProperty (Int64) is a named tuple: json writes it as [value, type].
            f.write(json.dumps(entity, default=plain_json, ensure_ascii=False))
            f.write("\n")
            n += 1
    return n


def export(args):
    table = service_client().get_table_client(args.table)
    before = cpu_now()
    started = time.perf_counter()
    if args.threads > 0:
        partitions = -(-args.count // PER_PARTITION)
        cuts = [partitions * k // args.threads for k in range(args.threads + 1)]

        def part(k):
            query = f"PartitionKey ge '{partition_key(cuts[k])}'"
            if k + 1 < args.threads:
                query += f" and PartitionKey lt '{partition_key(cuts[k + 1])}'"
            return dump(table.query_entities(query), f"{args.out}.{k}")

        with ThreadPoolExecutor(max_workers=args.threads) as pool:
            n = sum(pool.map(part, range(args.threads)))
        variant = f"{args.threads} threads, a PartitionKey range each"
    else:
        n = dump(table.list_entities(), args.out)
        variant = BASELINE
    seconds = time.perf_counter() - started
    after = cpu_now()
    if n != args.count:
        sys.exit(f"exported {n} entities, expected {args.count}")
    emit("export", variant, args.count, seconds, before, after)


def sdk_entity(line):
    """A line of the service's JSON as the SDK's entity: each annotated value as (value, EdmType)."""
    from azure.data.tables import EdmType

    e = json.loads(line)
    for name in [k for k in e if k.endswith("@odata.type")]:
        edm = e.pop(name)
        prop = name[: -len("@odata.type")]
        value = e[prop]
        if edm == "Edm.Binary":
            value = base64.b64decode(value)
        e[prop] = (value, EdmType(edm))
    return e


def batches(path):
    """The transactions of the best practice: consecutive entities of one partition, 100 at a time."""
    batch, pk = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            entity = sdk_entity(line)
            if batch and (entity["PartitionKey"] != pk or len(batch) == 100):
                yield batch
                batch = []
            pk = entity["PartitionKey"]
            batch.append(("create", entity))
    if batch:
        yield batch


def import_(args):
    service = service_client()
    service.delete_table(args.table)
    table = service.create_table(args.table)
    before = cpu_now()
    started = time.perf_counter()
    written = 0
    if args.threads > 0:
        with ThreadPoolExecutor(max_workers=args.threads) as pool:
            queued = []
            for batch in batches(args.file):
                queued.append(pool.submit(table.submit_transaction, batch))
                if len(queued) >= 2 * args.threads:
                    written += len(queued.pop(0).result())
            written += sum(len(q.result()) for q in queued)
        variant = f"{args.threads} threads"
    else:
        for batch in batches(args.file):
            written += len(table.submit_transaction(batch))
        variant = BASELINE
    seconds = time.perf_counter() - started
    after = cpu_now()
    if written != args.count:
        sys.exit(f"imported {written} entities, expected {args.count}")
    emit("import", variant, args.count, seconds, before, after)
    service.delete_table(args.table)


def drop(args):
    service_client().delete_table(args.table)  # no error when there is none


def run_timed(command):
    """Runs COMMAND (tablectl) under GNU time: its stdout, wall seconds, peak RSS (KiB), CPU seconds, and
    Azurite's CPU over the same time. Exits when the command fails."""
    # The peak RSS is GNU time's: a child forked from this process keeps this process's peak across its exec
    # (Linux carries ru_maxrss over execve), so wait4's own figure would be Python's.
    peak_file = f"/tmp/bench-tablectl-peak-{os.getpid()}"
    before = cpu_now()
    started = time.perf_counter()
    child = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", peak_file, *command], stdout=subprocess.PIPE)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    after = cpu_now()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(command)} failed with {os.waitstatus_to_exitcode(status)}")
    with open(peak_file, encoding="utf-8") as f:
        peak = int(f.read().split()[-1])
    os.remove(peak_file)
    return out, seconds, peak, round(usage.ru_utime + usage.ru_stime, 2), used(before, after)[1]


def time_command(args):
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    out, seconds, peak, cpu, server = run_timed(command)
    summary = json.loads(out.decode().strip().splitlines()[-1])
    done = summary.get("entities", summary.get("imported"))
    if done != args.count:
        sys.exit(f"{' '.join(command)}: {done} entities, expected {args.count}")
    line = {"side": "tablectl", "op": args.op, "variant": args.variant, "count": args.count, "s": round(seconds, 6),
            "peak_rss_kib": peak, "cpu_s": cpu, "server_cpu_s": server}
    print(json.dumps(line), flush=True)


def report(args):
    rows = {}
    with open(args.file, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows.setdefault((r["count"], r["op"], r["side"], r["variant"]), []).append(r)

    def mean(rs, key):
        values = [r[key] for r in rs if r.get(key) is not None]
        return f"{sum(values) / len(values):.2f}" if values else "?"

    print("| entities | operation | side | variant | rounds | min | entities/s | peak RSS | vs Python "
          "| client CPU | Azurite CPU |")
    print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2] != "tablectl", k[3])):
        count, op, side, variant = key
        rs = rows[key]
        best = min(r["s"] for r in rs)
        base = rows.get((count, op, "python", BASELINE))
        ratio = f"{min(r['s'] for r in base) / best:.2f}x" if base else "?"
        peaks = [r["peak_rss_kib"] / 1024 for r in rs]
        peak = f"{max(peaks):.1f} MiB"
        print(f"| {count:,} | {op} | {side} | {variant} | {len(rs)} | {best:.2f} s | {count / best:,.0f} | {peak} "
              f"| {ratio} | {mean(rs, 'cpu_s')} s | {mean(rs, 'server_cpu_s')} s |")
    print()
    print("(client and Azurite CPU: mean CPU seconds over the rounds, during the operation)")
    print()
    print("Each round, in order (seconds):")
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2] != "tablectl", k[3])):
        print(f"- {key[0]:,} {key[1]}, {key[2]}, {key[3]}: " + ", ".join(f"{r['s']:.2f}" for r in rows[key]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--out", required=True)
    for name in ("export", "import"):
        p = sub.add_parser(name)
        p.add_argument("--table", required=True)
        p.add_argument("--count", type=int, required=True)
        p.add_argument("--threads", type=int, default=0)
        p.add_argument("--out" if name == "export" else "--file", required=True)
    d = sub.add_parser("drop")
    d.add_argument("--table", required=True)
    t = sub.add_parser("time")
    t.add_argument("--op", required=True, choices=["export", "import"])
    t.add_argument("--variant", required=True)
    t.add_argument("--count", type=int, required=True)
    t.add_argument("command", nargs=argparse.REMAINDER)
    r = sub.add_parser("report")
    r.add_argument("file")
    args = parser.parse_args()
    commands = {"generate": generate, "export": export, "import": import_, "drop": drop, "time": time_command,
                "report": report}
    commands[args.what](args)


if __name__ == "__main__":
    main()
