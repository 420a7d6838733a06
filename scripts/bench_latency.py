"""The driver of scripts/bench-latency.sh: tablectl and the Python SDK (azure-data-tables) against the in-memory
Table service with the service's latency and throttle (`table-server`, test-utils/src/service.rs), in one run.

    bench_latency.py --tablectl PATH --server PATH --import-floor PATH [--rounds R] [--python-rounds R] [--work DIR]

Starts `table-server --latency-query 30 --latency-write 15 --throttle 2000` with three tables of the benchmarks'
entity (test-utils/src/entity.rs): Customers (100,000 entities in 400 partitions), Small (2,000 in 4) and Big
(200,000 in 400). Big is exported once, untimed, as the input of the 200,000-entity import, and Customers for
the input of the imports compared with Python (its first 20,000 entities: Python's client spends ~0.3 s of CPU
on a transaction of 100). Then, per round, every case once, in an order that rotates
from round to round (interleaved), each tablectl run in its own process:

    export/P      tablectl export Customers -o DIR/ --parallel P          P = 1, 4, 16
    count/P       tablectl count Customers --parallel P                  P = 1, 16
    copy/P        tablectl copy Customers <new table> --parallel P       P = 1, 16
    copy/16/W     the same with W transactions in flight (`--in-flight W`), W = 32
    import/200k   tablectl import big.jsonl <new table>
    floor/200k    the same transactions built and signed beforehand, sent by a bare reqwest client as the bulk
                  writer groups them, the places in flight full from the first to the last (the import's chunks go
                  two at a time; table-model-cli/benches/import_floor.rs): the seconds from its first transaction
                  to its last answer, the floor this machine sets under import/200k
    import/200k/W, floor/200k/W   the same two with W transactions in flight (`--in-flight W`), W = 32
    import/20k    tablectl import customers20k.jsonl <new table>   (the first 20,000 of Customers, 80 partitions)
    small/P       tablectl export Small -o DIR/ --parallel P             P = 1, 16
    backup/P      tablectl backup Backed -o COPY --parallel P --margin 5: an incremental generation, into a copy
                  of the first generation's directory (so that every round takes the same second generation)
    full/P        tablectl export Backed -o DIR/ --parallel P, the full export it is compared with   P = 1, 16
    restore       tablectl restore COPY <new table> --from Backed: the second generation (p16's), compared
                  with import/gen2 (the same entities) and import/200k (as many)
    import/gen2   tablectl import gen2.jsonl <new table>: the table as of the second generation, exported in key
                  order (`--parallel 1`, untimed) once 1% of it changed, as the restore's merged file has it
    py-export/1   azure-data-tables: list_entities() to a file, one json.dumps a line
    py-export/8   the same from 8 threads, a PartitionKey range each
    py-import/1   azure-data-tables: customers20k.jsonl, submit_transaction per 100 of a partition, one at a time
    py-import/8   the same from 8 threads

Backed (200,000 entities in 400 partitions) gets its first generations (p1 and p16, untimed) more than the
margin after the server seeded it, then 1% of it changes: 1,000 entities merged, 500 inserted, one partition of
500 deleted (`tablectl import --mode merge`, `tablectl delete`). The bytes of one incremental generation and one
full export (p16) are the server's `bytes_sent` before and after.

The Python cases run `--python-rounds` rounds (the first ones); `--cases REGEX` runs only the cases it matches. Prints the minimum of each case, then each
figure as a ratio to its baseline measured in the same run, and the server's counts (GET /stats).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

LATENCY_QUERY_MS = 30
LATENCY_WRITE_MS = 15
THROTTLE = 2000
TABLES = {"Customers": (100_000, 400), "Small": (2_000, 4), "Big": (200_000, 400), "Backed": (200_000, 400)}
# The backup cases' margin for the skew of clocks, in seconds (`tablectl backup --margin`).
MARGIN = 5
# The bulk writer's transactions in flight (table-model's BulkOptions default), which import and copy use.
IN_FLIGHT = 8
# The wider import's transactions in flight (`tablectl import --in-flight`).
WIDE = 32
PY_THREADS = 8
# The entities of the imports compared with Python.
SMALL_IMPORT = 20_000


def partition_key(p, partitions):
    """The seeded table's PartitionKey of partition p (service::Seed::keys)."""
    width = max(2, len(str(partitions - 1)))
    return f"tenant-{p:0{width}}"


def start_server(server):
    """The server and its port; the time it seeded its tables at."""
    args = [server, "--latency-query", str(LATENCY_QUERY_MS), "--latency-write", str(LATENCY_WRITE_MS),
            "--throttle", str(THROTTLE)]
    for table, (entities, partitions) in TABLES.items():
        args += ["--seed", f"{table}:{entities}:{partitions}"]
    process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(process.stdout.readline())
    return process, port, time.time()


def backup_changes(path, partitions, per):
    """The 1% of Backed that changes between its generations: a JSON lines file of 1,000 entities to merge (5 in
    every other partition) and 500 to insert (5 new in every fourth), and the partition to delete."""
    key = lambda p: partition_key(p, partitions)
    width = max(6, len(str(per - 1)))
    with open(path, "w", encoding="utf-8") as out:
        for p in range(0, partitions, 2):
            for r in (1, per // 2, per - 1, per // 4, per // 3):
                out.write(json.dumps({"PartitionKey": key(p), "RowKey": f"{r:0{width}}", "Changed": 1}) + "\n")
        for p in range(1, partitions, 4):
            for r in range(per, per + 5):
                out.write(json.dumps({"PartitionKey": key(p), "RowKey": f"{r:0{width}}", "Changed": 2}) + "\n")
    # Odd and not one of every fourth: neither merged nor inserted into.
    return key(min(123, partitions - 1))


def stats(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as r:
        return json.loads(r.read())


def drop(port, table):
    """Deletes a table the run made (the server checks no signature), so that its memory stays that of the seeds."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/devstoreaccount1/Tables('{table}')", method="DELETE")
    urllib.request.urlopen(request).close()


class Run:
    def __init__(self, args, port):
        self.tablectl = args.tablectl
        self.work = args.work
        self.port = port
        self.serial = 0
        endpoint = f"http://127.0.0.1:{port}/devstoreaccount1"
        os.environ["TABLE_MODEL_AZURITE_ENDPOINT"] = endpoint
        from bench_python_tables import ACCOUNT, KEY

        self.endpoint = endpoint
        self.env = dict(os.environ, AZURE_STORAGE_CONNECTION_STRING=(
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};TableEndpoint={endpoint}"))

    def fresh(self, what):
        self.serial += 1
        return f"{what}{self.serial}"

    def tablectl_run(self, *args):
        """Runs tablectl in the work directory: its wall time."""
        started = time.perf_counter()
        subprocess.run([self.tablectl, *args], cwd=self.work, env=self.env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started

    def export(self, table, parallel):
        out = os.path.join(self.work, self.fresh("export"))
        seconds = self.tablectl_run("export", table, "-o", out + "/", "--format", "jsonl", "--parallel", str(parallel))
        shutil.rmtree(out)
        return seconds

    def py_export(self, threads):
        from bench_python_tablectl import dump, service_client

        entities, partitions = TABLES["Customers"]
        table = service_client().get_table_client("Customers")
        out = os.path.join(self.work, self.fresh("py-export"))
        started = time.perf_counter()
        if threads > 1:
            cuts = [partitions * k // threads for k in range(threads + 1)]

            def part(k):
                query = f"PartitionKey ge '{partition_key(cuts[k], partitions)}'"
                if k + 1 < threads:
                    query += f" and PartitionKey lt '{partition_key(cuts[k + 1], partitions)}'"
                return dump(table.query_entities(query), f"{out}.{k}")

            with ThreadPoolExecutor(max_workers=threads) as pool:
                n = sum(pool.map(part, range(threads)))
        else:
            n = dump(table.list_entities(), out)
        seconds = time.perf_counter() - started
        for name in os.listdir(self.work):
            if name.startswith(os.path.basename(out)):
                os.remove(os.path.join(self.work, name))
        if n != entities:
            sys.exit(f"the Python export read {n} entities, not {entities}")
        return seconds

    def py_import(self, threads, path, count):
        from bench_python_tablectl import batches, service_client

        service = service_client()
        name = self.fresh("PyImport")
        table = service.create_table(name)
        started = time.perf_counter()
        written = 0
        if threads > 1:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                queued = []
                for batch in batches(path):
                    queued.append(pool.submit(table.submit_transaction, batch))
                    if len(queued) >= 2 * threads:
                        written += len(queued.pop(0).result())
                written += sum(len(q.result()) for q in queued)
        else:
            for batch in batches(path):
                written += len(table.submit_transaction(batch))
        seconds = time.perf_counter() - started
        drop(self.port, name)
        if written != count:
            sys.exit(f"the Python import wrote {written} entities, not {count}")
        return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tablectl", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--import-floor", required=True, help="the bench import_floor's binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python-rounds", type=int, default=2)
    parser.add_argument("--work", default=".bench/latency")
    parser.add_argument("--cases", help="run only the cases whose name this regular expression matches")
    parser.add_argument("--scale", type=int, default=1, help="divide every table's entities by this (a smoke test)")
    args = parser.parse_args()
    global SMALL_IMPORT
    SMALL_IMPORT //= args.scale
    for table, (entities, partitions) in list(TABLES.items()):
        TABLES[table] = (entities // args.scale, partitions)
    args.work = os.path.abspath(args.work)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    server, port, seeded = start_server(args.server)
    try:
        run = Run(args, port)
        # The inputs of the imports: Big and Customers exported once, untimed.
        for table, file in [("Big", "big"), ("Customers", "customers")]:
            run.tablectl_run("export", table, "-o", os.path.join(args.work, f"{file}.jsonl"), "--parallel", "16")
        big = os.path.join(args.work, "big.jsonl")
        # The input of the imports compared with Python (whose client costs ~0.3 s of CPU a transaction of 100):
        # the first 20,000 entities of Customers, 80 partitions.
        customers = os.path.join(args.work, "customers20k.jsonl")
        with open(os.path.join(args.work, "customers.jsonl"), encoding="utf-8") as f, \
                open(customers, "w", encoding="utf-8") as out:
            for _, line in zip(range(SMALL_IMPORT), f):
                out.write(line)

        def import_floor(path, in_flight=IN_FLIGHT):
            """The same transactions as the import, sent by a bare client (table-model-cli/benches/import_floor.rs):
            the seconds it prints, from its first transaction to its last answer."""
            name = run.fresh("Floor")
            out = subprocess.run([args.import_floor, run.endpoint, name, path, str(in_flight)], cwd=args.work,
                                 check=True, stdout=subprocess.PIPE, text=True).stdout
            drop(port, name)
            return float(out.split()[0])

        def tablectl_import(path, in_flight=IN_FLIGHT):
            name = run.fresh("Import")
            seconds = run.tablectl_run("import", path, name, "--in-flight", str(in_flight))
            drop(port, name)
            return seconds

        # Backed: its first generations more than the margin after the seed (whose entities would otherwise be
        # read again as changed), then 1% of it changed.
        time.sleep(max(0.0, seeded + MARGIN + 1 - time.time()))
        for p in (1, 16):
            run.tablectl_run("backup", "Backed", "-o", os.path.join(args.work, f"bak{p}"), "--parallel", str(p))
        changes = os.path.join(args.work, "changes.jsonl")
        doomed = backup_changes(changes, TABLES["Backed"][1], TABLES["Backed"][0] // TABLES["Backed"][1])
        run.tablectl_run("import", changes, "Backed", "--mode", "merge")
        run.tablectl_run("delete", "Backed", "--filter", f"PartitionKey eq '{doomed}'", "--yes")
        gen2 = os.path.join(args.work, "gen2.jsonl")
        run.tablectl_run("export", "Backed", "-o", gen2, "--parallel", "1", "--force")

        def incremental(parallel):
            copy = os.path.join(args.work, f"copy{parallel}")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(os.path.join(args.work, f"bak{parallel}"), copy)
            return run.tablectl_run("backup", "Backed", "-o", copy, "--parallel", str(parallel), "--margin", str(MARGIN))

        def restore():
            if not os.path.exists(os.path.join(args.work, "copy16")):
                incremental(16)
            name = run.fresh("Restored")
            seconds = run.tablectl_run("restore", os.path.join(args.work, "copy16"), name, "--from", "Backed")
            drop(port, name)
            return seconds

        def copy(parallel, in_flight=IN_FLIGHT):
            name = run.fresh("Copy")
            seconds = run.tablectl_run("copy", "Customers", name, "--parallel", str(parallel),
                                       "--in-flight", str(in_flight))
            drop(port, name)
            return seconds

        cases = [
            ("export/1", lambda: run.export("Customers", 1)),
            ("export/4", lambda: run.export("Customers", 4)),
            ("export/16", lambda: run.export("Customers", 16)),
            ("count/1", lambda: run.tablectl_run("count", "Customers", "--parallel", "1")),
            ("count/16", lambda: run.tablectl_run("count", "Customers", "--parallel", "16")),
            ("copy/1", lambda: copy(1)),
            ("copy/16", lambda: copy(16)),
            (f"copy/16/{WIDE}", lambda: copy(16, WIDE)),
            ("import/200k", lambda: tablectl_import(big)),
            ("floor/200k", lambda: import_floor(big)),
            (f"import/200k/{WIDE}", lambda: tablectl_import(big, WIDE)),
            (f"floor/200k/{WIDE}", lambda: import_floor(big, WIDE)),
            ("import/20k", lambda: tablectl_import(customers)),
            ("small/1", lambda: run.export("Small", 1)),
            ("small/16", lambda: run.export("Small", 16)),
            ("backup/1", lambda: incremental(1)),
            ("full/1", lambda: run.export("Backed", 1)),
            ("backup/16", lambda: incremental(16)),
            ("full/16", lambda: run.export("Backed", 16)),
            ("restore", restore),
            ("import/gen2", lambda: tablectl_import(gen2)),
            ("py-export/1", lambda: run.py_export(1)),
            ("py-export/8", lambda: run.py_export(PY_THREADS)),
            ("py-import/1", lambda: run.py_import(1, customers, SMALL_IMPORT)),
            ("py-import/8", lambda: run.py_import(PY_THREADS, customers, SMALL_IMPORT)),
        ]
        if args.cases:
            cases = [(name, case) for name, case in cases if re.search(args.cases, name)]
        best = {}
        for r in range(args.rounds):
            order = cases[r % len(cases):] + cases[:r % len(cases)]
            for name, case in order:
                if name.startswith("py-") and r >= args.python_rounds:
                    continue
                seconds = case()
                best[name] = min(best.get(name, seconds), seconds)
                print(f"round {r + 1}: {name:<12} {seconds:8.3f} s", file=sys.stderr, flush=True)
        # The bytes the server sent for one incremental generation and one full export (p16).
        sent = {}
        for name, case in (("backup/16", lambda: incremental(16)), ("full/16", lambda: run.export("Backed", 16))):
            before = stats(port)["bytes_sent"]
            case()
            sent[name] = stats(port)["bytes_sent"] - before
        counts = stats(port)
    finally:
        server.stdin.close()
        server.wait()

    print(f"table-server: {LATENCY_QUERY_MS} ms a page, {LATENCY_WRITE_MS} ms a transaction, "
          f"{THROTTLE} entities/s per partition; minimum of {args.rounds} interleaved rounds "
          f"({args.python_rounds} for Python)\n")
    print("| case | seconds | entities/s |")
    print("|---|---:|---:|")
    customers, small, big = TABLES["Customers"][0], TABLES["Small"][0], TABLES["Big"][0]
    backed = TABLES["Backed"][0]
    sizes = {"export": customers, "count": customers, "copy": customers, "small": small, "py-export": customers,
             "py-import": SMALL_IMPORT, "backup": backed, "full": backed, "restore": backed}
    for name, seconds in best.items():
        kind = name.split("/")[0]
        n = (big if name.split("/")[1:2] == ["200k"] else backed if name == "import/gen2"
             else SMALL_IMPORT if kind == "import" else sizes[kind])
        print(f"| {name} | {seconds:.3f} | {n / seconds:,.0f} |")

    def ratio(a, b):
        return best[a] / best[b] if a in best and b in best else float("nan")

    print("\nratios (each against its baseline of the same run):")
    print(f"  export --parallel 4 speed-up over --parallel 1:   {ratio('export/1', 'export/4'):.2f}x (goal for 16: 10x)")
    print(f"  export --parallel 16 speed-up over --parallel 1:  {ratio('export/1', 'export/16'):.2f}x")
    print(f"  count --parallel 16 speed-up over --parallel 1:   {ratio('count/1', 'count/16'):.2f}x")
    print(f"  copy --parallel 16 speed-up over --parallel 1:    {ratio('copy/1', 'copy/16'):.2f}x")
    print(f"  copy --parallel 16 --in-flight {WIDE} over --parallel 1: {ratio('copy/1', f'copy/16/{WIDE}'):.2f}x")
    print(f"  2,000 entities, --parallel 16 time / --parallel 1: {ratio('small/16', 'small/1'):.2f} (goal: at most 1.10)")
    partitions = TABLES["Big"][1]
    transactions = partitions * -(-(big // partitions) // 100)
    latency_bound = transactions / IN_FLIGHT * LATENCY_WRITE_MS / 1000
    throttle_bound = big / (TABLES["Big"][1] * THROTTLE)
    allowed = max(latency_bound, throttle_bound)
    if "import/200k" in best:
        print(f"  import of {big:,} in 400 partitions: {best['import/200k']:.3f} s; the throttle allows "
              f"{throttle_bound:.3f} s, the latency with {IN_FLIGHT} transactions in flight {latency_bound:.3f} s: "
              f"{best['import/200k'] / allowed:.2f}x what they allow (goal: within 1.10)")
    if "import/200k" in best and "floor/200k" in best:
        print(f"  import of {big:,} / the same transactions sent by a bare client (floor/200k, "
              f"{best['floor/200k']:.3f} s): {ratio('import/200k', 'floor/200k'):.2f} (goal: within 1.10)")
    wide = f"import/200k/{WIDE}"
    if wide in best:
        bound = max(transactions / WIDE * LATENCY_WRITE_MS / 1000, throttle_bound)
        print(f"  import of {big:,} with {WIDE} transactions in flight: {best[wide]:.3f} s, "
              f"{best[wide] / bound:.2f}x the {bound:.3f} s that latency and throttle allow; "
              f"{ratio('import/200k', wide):.2f}x faster than {IN_FLIGHT} in flight; the same transactions sent by "
              f"a bare client, {WIDE} in flight: {ratio(wide, f'floor/200k/{WIDE}'):.2f}")
    for py in ("py-export/1", "py-export/8"):
        for ours in ("export/1", "export/16"):
            print(f"  tablectl {ours} against Python {py}: {ratio(py, ours):.2f}x (goal: 5x)")
    for py in ("py-import/1", "py-import/8"):
        print(f"  tablectl import/20k against Python {py}: {ratio(py, 'import/20k'):.2f}x (goal: 5x)")
    for p in (1, 16):
        print(f"  incremental backup --parallel {p} time / full export: {ratio(f'backup/{p}', f'full/{p}'):.2f} "
              f"(goal: at most 0.35)")
    if sent.get("full/16"):
        print(f"  incremental backup bytes / full export: {sent['backup/16'] / sent['full/16']:.3f} "
              f"({sent['backup/16']:,} of {sent['full/16']:,}; goal: at most 0.25)")
    print(f"  restore of the second generation / import of the same entities (import/gen2): "
          f"{ratio('restore', 'import/gen2'):.2f} (goal: at import speed); / import/200k: "
          f"{ratio('restore', 'import/200k'):.2f}")
    print(f"\nserver counts: {json.dumps(counts)}")


if __name__ == "__main__":
    main()
