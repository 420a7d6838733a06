"""The Python side of scripts/bench-backup.sh: the table's changes between generations, a byte-counting proxy,
the timing of each tablectl command, and the report.

    bench_backup.py generate --count N --per-partition P --out FILE
        `bench_python_tablectl.py generate` with P entities a partition.

    bench_backup.py changes --count N --per-partition P --out FILE
        Writes the changes of 1% of a table of N entities written by `bench_python_tablectl.py generate` with P
        entities a partition: every 200th entity merged with a new property (0.5%), and a new entity after every
        400th (0.25%), as JSON lines for `tablectl import --mode merge`. Prints the PartitionKey of the partition
        to delete (P entities: 0.25% at 200,000 with 500 a partition).

    bench_backup.py proxy --target HOST:PORT --port-file FILE --counts FILE
        A TCP forwarder on a free loopback port (written to --port-file) that counts the bytes the server sends
        back, written to --counts as one JSON object after each connection closes.

    bench_backup.py time --label L -- COMMAND...
        Runs COMMAND under GNU time and prints one JSON line: the label, its wall time, peak RSS, CPU, Azurite's
        CPU over the same time, and the JSON summary COMMAND printed last on stdout.

    bench_backup.py report FILE
        The minimum of each label over the rounds and the ratios (Markdown).
"""

import argparse
import asyncio
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_python_tablectl as tablectl_side  # noqa: E402  (the generated entities)


def generate(args):
    tablectl_side.PER_PARTITION = args.per_partition
    tablectl_side.generate(args)


def changes(args):
    tablectl_side.PER_PARTITION = args.per_partition
    with open(args.out, "w", encoding="utf-8") as f:
        for i in range(args.count):
            if i % 200 == 0:
                e = tablectl_side.generated(i)
                merged = {"PartitionKey": e["PartitionKey"], "RowKey": e["RowKey"], "Revised": f"revision of {i}"}
                f.write(json.dumps(merged, separators=(",", ":")) + "\n")
            if i % 400 == 1:
                e = tablectl_side.generated(i)
                e["RowKey"] = e["RowKey"] + "-new"
                f.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
    # A partition in the middle, whose entities are not among those merged above by chance only.
    print(tablectl_side.partition_key(args.count // args.per_partition // 2 + 1))


def proxy(args):
    host, port = args.target.rsplit(":", 1)
    totals = {"from_server": 0, "to_server": 0, "connections": 0}

    async def pipe(reader, writer, key):
        try:
            while data := await reader.read(65536):
                totals[key] += len(data)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def handle(client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection(host, int(port))
        totals["connections"] += 1
        await asyncio.gather(
            pipe(client_reader, server_writer, "to_server"), pipe(server_reader, client_writer, "from_server")
        )
        with open(args.counts + ".part", "w", encoding="utf-8") as f:
            json.dump(totals, f)
        os.replace(args.counts + ".part", args.counts)

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        with open(args.port_file, "w", encoding="utf-8") as f:
            f.write(str(server.sockets[0].getsockname()[1]))
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def time_command(args):
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    out, seconds, peak, cpu, server = tablectl_side.run_timed(command)
    lines = out.decode().strip().splitlines()
    summary = json.loads(lines[-1]) if lines else {}
    line = {"label": args.label, "s": round(seconds, 3), "peak_rss_kib": peak, "cpu_s": cpu, "server_cpu_s": server,
            "summary": summary}
    print(json.dumps(line), flush=True)


def report(args):
    with open(args.file, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    best = {}
    for row in rows:
        label = row["label"]
        if label not in best or row.get("s", 0) < best[label].get("s", 0):
            best[label] = row
    sizes = sorted({int(label.rsplit("/", 1)[1]) for label in best})
    print("| measured | entities | time (min) | peak RSS | client CPU | Azurite CPU | bytes from the server |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, row in best.items():
        name, size = label.rsplit("/", 1)
        received = row.get("from_server")
        print(f"| {name} | {int(size):,} | {row.get('s', 0):.2f} s | {row.get('peak_rss_kib', 0) / 1024:.1f} MiB | "
              f"{row.get('cpu_s', 0):.2f} s | {row.get('server_cpu_s', 0):.2f} s | "
              f"{f'{received:,}' if received is not None else ''} |")
    print()
    for size in sizes:
        def ratio(a, b, key):
            a, b = best.get(f"{a}/{size}"), best.get(f"{b}/{size}")
            return a[key] / b[key] if a and b and b.get(key) else None

        for a, b, key, what in [
            ("incremental backup", "full export", "s", "time of an incremental generation / a full export"),
            ("incremental backup (bytes)", "full export (bytes)", "from_server",
             "bytes received by an incremental generation / a full export"),
            ("restore", "import", "s", "time of a restore / an import of the same entities"),
            ("full export", "python export", "s", "time of tablectl's full export / the Python SDK's"),
        ]:
            r = ratio(a, b, key)
            if r is not None:
                print(f"- {size:,} entities, {what}: **{r:.2f}**")
    memory = [best.get(f"incremental backup/{size}", {}).get("peak_rss_kib") for size in sizes]
    if len(sizes) > 1 and all(memory):
        print(f"- peak RSS of an incremental generation, {sizes[-1]:,} against {sizes[0]:,} entities: "
              f"**{memory[-1] / memory[0]:.2f}**")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--per-partition", type=int, required=True)
    g.add_argument("--out", required=True)
    c = sub.add_parser("changes")
    c.add_argument("--count", type=int, required=True)
    c.add_argument("--per-partition", type=int, required=True)
    c.add_argument("--out", required=True)
    p = sub.add_parser("proxy")
    p.add_argument("--target", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--counts", required=True)
    t = sub.add_parser("time")
    t.add_argument("--label", required=True)
    t.add_argument("command", nargs=argparse.REMAINDER)
    r = sub.add_parser("report")
    r.add_argument("file")
    args = parser.parse_args()
    {"generate": generate, "changes": changes, "proxy": proxy, "time": time_command, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
