"""Rows/s of bulk import against inserts through the SDK, on one Strata.

    strata standalone --data-dir /tmp/d --addr 127.0.0.1:33710 &
    python docs/import/bench_import.py /tmp/d 127.0.0.1:33710 100000

Rows: int64 key, a VarChar, a 128-dim float vector. The Parquet file is
written by LocalBulkWriter beforehand (not timed) into the embedded object
store; import is timed from the request to Completed (rows in flushed
segments, visible). Insert is timed for MilvusClient.insert in batches of
5,000 rows (acknowledged once durable in the WAL), and then with the flush
that turns them into flushed segments too.
"""
import os
import sys
import time

import numpy as np
from pymilvus import DataType, MilvusClient
from pymilvus.bulk_writer import BulkFileType, LocalBulkWriter, bulk_import, get_import_progress

data_dir, addr, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
url = "http://" + addr
client = MilvusClient(url)
DIM = 128
rng = np.random.default_rng(1)
vecs = rng.random((n, DIM), dtype=np.float32)


def schema():
    s = MilvusClient.create_schema(auto_id=False)
    s.add_field("id", DataType.INT64, is_primary=True)
    s.add_field("s", DataType.VARCHAR, max_length=32)
    s.add_field("v", DataType.FLOAT_VECTOR, dim=DIM)
    s.verify()
    return s


def fresh(name):
    if client.has_collection(name):
        client.drop_collection(name)
    client.create_collection(name, schema=schema())


# Import.
fresh("bench_import")
os.makedirs(os.path.join(data_dir, "storage", "bench"), exist_ok=True)
w = LocalBulkWriter(schema=schema(), local_path=os.path.join(data_dir, "storage", "bench"),
                    file_type=BulkFileType.PARQUET, chunk_size=1 << 30)
for i in range(n):
    w.append_row({"id": i, "s": f"row{i}", "v": vecs[i]})
w.commit()
root = os.path.join(data_dir, "storage") + "/"
files = [[p.replace(root, "") for p in b] for b in w.batch_files]
t0 = time.time()
job = bulk_import(url=url, collection_name="bench_import", files=files).json()["data"]["jobId"]
while True:
    p = get_import_progress(url=url, job_id=job).json()["data"]
    if p["state"] in ("Completed", "Failed"):
        break
    time.sleep(0.05)
t_import = time.time() - t0
assert p["state"] == "Completed" and p["importedRows"] == n, p

# Insert.
fresh("bench_insert")
t0 = time.time()
B = 5000
for lo in range(0, n, B):
    client.insert("bench_insert", [{"id": i, "s": f"row{i}", "v": vecs[i].tolist()} for i in range(lo, min(lo + B, n))])
t_insert = time.time() - t0
client.flush("bench_insert")
t_flush = time.time() - t0

print(f"| rows | import (to Completed) | insert (acknowledged) | insert + flush |")
print(f"|---:|---:|---:|---:|")
print(f"| {n} | {t_import:.2f} s, {n / t_import:,.0f} rows/s | {t_insert:.2f} s, {n / t_insert:,.0f} rows/s "
      f"| {t_flush:.2f} s, {n / t_flush:,.0f} rows/s |")
