"""The Python side of scripts/bench-tablectl.sh: the same work as `tablectl export` and `tablectl import`, done
with the Python SDK (azure-data-tables), against the Table service in TABLE_MODEL_AZURITE_ENDPOINT.

    bench_tablectl.py generate --count N --partitions P FILE
        Writes N entities as JSON lines in the service's own JSON (12 properties of every EDM type, the
        entities of examples/bench_bulk.rs), for `tablectl import` and `import` below to read.

    bench_tablectl.py export --table NAME FILE
        `list_entities()` to JSON lines: each entity as one JSON object (typed values written as JSON can show
        them: Int64 and Guid as strings, DateTime in ISO 8601, Binary in base64). Prints the count and the time
        (the shell script times the whole process).

    bench_tablectl.py import --table NAME FILE
        Reads the JSON lines (the `@odata.type` annotations give the types), groups them by PartitionKey and
        sends `submit_transaction` per 100 operations of one partition, one after the other (the SDK's
        documented best practice, the baseline of scripts/bench-vs-python.sh). Prints one JSON line.
"""

import argparse
import base64
import json
import os
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone

ACCOUNT = "devstoreaccount1"
# The emulator's well-known development key (public, documented by Microsoft; not a secret).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CITIES = ["Zürich", "Lisbon", "Nairobi", "Osaka", "Quito", "Tromsø", "Perth"]
START = datetime(2024, 5, 1, tzinfo=timezone.utc)
GUID_FACTOR = 0x9E3779B97F4A7C15F39CC0605CEDC834


def service():
    from azure.core.credentials import AzureNamedKeyCredential
    from azure.data.tables import TableServiceClient

    endpoint = os.environ["TABLE_MODEL_AZURITE_ENDPOINT"]
    return TableServiceClient(endpoint=endpoint, credential=AzureNamedKeyCredential(ACCOUNT, KEY))


def wire_entity(i, partitions):
    """Entity `i` in the service's JSON, as `tablectl export` writes it (without Timestamp and ETag)."""
    created = START + timedelta(seconds=i, microseconds=i % 1_000_000)
    return {
        "PartitionKey": f"p{i % partitions:02}",
        "RowKey": f"{i:08}",
        "Customer": f"customer {i}",
        "City": CITIES[i % 7],
        "Note": f'order {i}: "fragile"\tline 1\nline 2 \\ {i * 31}',
        "Quantity": i % 1000 - 500,
        "TotalCents@odata.type": "Edm.Int64",
        "TotalCents": str(i * 1_000_000_007),
        "Sequence@odata.type": "Edm.Int64",
        "Sequence": str(-i * 3_000_000_019),
        "Price": i * 0.01 + 0.5,
        "Ratio": 1.0 / (i + 3.0),
        "Shipped": i % 3 == 0,
        "OrderId@odata.type": "Edm.Guid",
        "OrderId": str(uuid.UUID(int=(GUID_FACTOR * (i + 1)) % 2**128)),
        "Created@odata.type": "Edm.DateTime",
        "Created": created.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z",
        "Payload@odata.type": "Edm.Binary",
        "Payload": base64.b64encode(bytes((i * 131 + b * 7) % 256 for b in range(32))).decode(),
    }


def generate(args):
    with open(args.file, "w", encoding="utf-8") as out:
        for i in range(args.count):
            out.write(json.dumps(wire_entity(i, args.partitions), ensure_ascii=False, separators=(",", ":")))
            out.write("\n")


def to_json(entity):
    """A TableEntity as one JSON object, its typed values as JSON can show them."""
    from azure.data.tables import EntityProperty

    row = {}
    for name, value in entity.items():
        if isinstance(value, EntityProperty):
            value = value.value
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, (bytes, bytearray)):
            value = base64.b64encode(value).decode()
        elif isinstance(value, uuid.UUID):
            value = str(value)
        row[name] = value
    return row


def export(args):
    table = service().get_table_client(args.table)
    start = time.perf_counter()
    count = 0
    with open(args.file, "w", encoding="utf-8") as out:
        for entity in table.list_entities():
            out.write(json.dumps(to_json(entity), ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
            count += 1
    seconds = time.perf_counter() - start
    print(json.dumps({"side": "python", "op": "export", "entities": count, "seconds": seconds}))


def from_json(row):
    """A JSON line back into an entity the SDK sends with the same types."""
    from azure.data.tables import EdmType, EntityProperty

    entity = {}
    for name, value in row.items():
        if "@" in name or name in ("Timestamp", "odata.etag"):
            continue
        kind = row.get(f"{name}@odata.type")
        if kind == "Edm.Int64":
            value = EntityProperty(int(value), EdmType.INT64)
        elif kind == "Edm.Guid":
            value = uuid.UUID(value)
        elif kind == "Edm.DateTime":
            value = datetime.strptime(value[:26] + "Z", "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
        elif kind == "Edm.Binary":
            value = base64.b64decode(value)
        elif kind == "Edm.Double" or isinstance(value, float):
            value = EntityProperty(float(value), EdmType.DOUBLE)
        entity[name] = value
    return entity


def import_(args):
    table = service().create_table_if_not_exists(args.table)
    start = time.perf_counter()
    partitions = {}
    count = 0
    with open(args.file, encoding="utf-8") as lines:
        for line in lines:
            entity = from_json(json.loads(line))
            batch = partitions.setdefault(entity["PartitionKey"], [])
            batch.append(("create", entity))
            if len(batch) == 100:
                table.submit_transaction(batch)
                count += len(batch)
                partitions[entity["PartitionKey"]] = []
    for batch in partitions.values():
        if batch:
            table.submit_transaction(batch)
            count += len(batch)
    seconds = time.perf_counter() - start
    print(json.dumps({"side": "python", "op": "import", "entities": count, "seconds": seconds}))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--count", type=int, required=True)
    gen.add_argument("--partitions", type=int, default=10)
    gen.add_argument("file")
    for name in ("export", "import"):
        p = sub.add_parser(name)
        p.add_argument("--table", required=True)
        p.add_argument("file")
    args = parser.parse_args()
    {"generate": generate, "export": export, "import": import_}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
