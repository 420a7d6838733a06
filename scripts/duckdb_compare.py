#!/usr/bin/env python3
"""Compares `tablectl sql` with DuckDB over the same entities (issue 25): dates across 1601..9999, a property of
two types, Guids, and a join. Writes two tables to the Azurite of $AZURE_STORAGE_CONNECTION_STRING with tablectl
import, exports them to Parquet with tablectl export, and runs each query in both; prints each pair of answers
and exits 1 on the first that differs.

    bash scripts/azurite.sh run python3 scripts/duckdb_compare.py target/debug/tablectl

Needs `pip install duckdb`.
"""
import json
import os
import subprocess
import sys
import tempfile
import uuid

import duckdb

tablectl = os.path.abspath(sys.argv[1])
conn = os.environ["AZURE_STORAGE_CONNECTION_STRING"]
work = tempfile.mkdtemp(prefix="duckdb-compare-")
suffix = str(os.getpid())
orders, customers = f"Orders{suffix}", f"Customers{suffix}"


def run(*args):
    out = subprocess.run([tablectl, *args], cwd=work, capture_output=True, text=True,
                         env={**os.environ, "AZURE_STORAGE_CONNECTION_STRING": conn})
    if out.returncode != 0:
        sys.exit(f"tablectl {' '.join(args)}: {out.returncode}: {out.stderr}")
    return out.stdout


def entity(i):
    e = {"PartitionKey": f"c{i % 5}", "RowKey": f"o{i:04}", "Total": i * 7 % 100,
         "Total@odata.type": "Edm.Int64", "Total": str(i * 7 % 100)}
    # Dates: a 1601 sentinel, a 9999 "never", and days of 2019..2021 with a 100 ns digit.
    if i % 17 == 0:
        e["OrderDate"] = "1601-01-01T00:00:00.0000000Z"
    elif i % 19 == 0:
        e["OrderDate"] = "9999-12-31T23:59:59.9999999Z"
    else:
        e["OrderDate"] = f"20{19 + i % 3}-0{1 + i % 9}-1{i % 10}T0{i % 10}:00:00.000000{i % 10}Z"
    e["OrderDate@odata.type"] = "Edm.DateTime"
    # Priority: an Int32 mostly, a String for 1 in 8.
    if i % 8 == 0:
        e["Priority"] = ["High", "Low", "Urgent"][i % 3]
    else:
        e["Priority"] = i % 3
    e["Id"] = str(uuid.UUID(int=i * 0x1_0001_0001))
    e["Id@odata.type"] = "Edm.Guid"
    return e


with open(os.path.join(work, "orders.jsonl"), "w") as f:
    for i in range(400):
        f.write(json.dumps(entity(i)) + "\n")
with open(os.path.join(work, "customers.jsonl"), "w") as f:
    for c in range(5):
        f.write(json.dumps({"PartitionKey": "c", "RowKey": f"c{c}", "Name": f"Customer {c}"}) + "\n")
run("import", "orders.jsonl", orders)
run("import", "customers.jsonl", customers)
run("export", orders, "-o", "orders.parquet", "--format", "parquet")
run("export", customers, "-o", "customers.parquet", "--format", "parquet")

db = duckdb.connect()
db.execute(f"CREATE VIEW orders AS SELECT * FROM '{work}/orders.parquet'")
db.execute(f"CREATE VIEW customers AS SELECT * FROM '{work}/customers.parquet'")
types = dict(db.execute("SELECT column_name, column_type FROM (DESCRIBE orders)").fetchall())
print("duckdb types:", {k: types[k] for k in ("OrderDate", "Priority", "Id")})
assert types["Id"] == "UUID", types
assert types["OrderDate"].startswith("TIMESTAMP"), types

queries = [
    ("max date", 'SELECT max("OrderDate") AS m FROM {o}'),
    ("min date", 'SELECT min("OrderDate") AS m FROM {o}'),
    ("since 2020", "SELECT count(*) AS n FROM {o} WHERE \"OrderDate\" >= '2020-01-01'"),
    ("mixed groups", 'SELECT "Priority" AS p, count(*) AS n FROM {o} GROUP BY 1 ORDER BY 1'),
    ("null priorities", 'SELECT count(*) AS n FROM {o} WHERE "Priority" IS NULL'),
    ("uuid", ("SELECT \"RowKey\" AS r FROM {o} WHERE \"Id\" = '" + str(uuid.UUID(int=10 * 0x1_0001_0001)) + "'::UUID",
              "SELECT \"RowKey\" AS r FROM {o} WHERE \"Id\" = arrow_cast(X'" + uuid.UUID(int=10 * 0x1_0001_0001).hex
              + "', 'FixedSizeBinary(16)')")),
    ("join", 'SELECT c."Name" AS name, sum(o."Total") AS s FROM {o} o JOIN {c} c ON o."PartitionKey" = c."RowKey" '
             'GROUP BY 1 ORDER BY 1'),
]


def norm(v):
    s = str(v)
    # DuckDB prints `2020-01-10 03:00:00.000001+00:00`; tablectl's JSON `2020-01-10T03:00:00.000001Z`.
    if len(s) > 10 and s[4] == "-" and s[7] == "-" and s[10] == " ":
        return s.replace(" ", "T").replace("+00:00", "Z").replace("+00", "Z")
    return s


failed = False
for label, sql in queries:
    duck_sql, our_sql = sql if isinstance(sql, tuple) else (sql, sql)
    duck = [tuple(norm(v) for v in row) for row in db.execute(duck_sql.format(o="orders", c="customers")).fetchall()]
    lines = run("sql", our_sql.format(o=orders, c=customers), "--format", "jsonl").splitlines()
    ours = [tuple(norm(v) for v in json.loads(line).values()) for line in lines]
    same = duck == ours
    failed |= not same
    print(f"{'ok  ' if same else 'DIFF'} {label}: duckdb {duck[:6]} | tablectl {ours[:6]}")
sys.exit(1 if failed else 0)
