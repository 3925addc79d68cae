"""Checks that pymilvus BulkWriter output imports into Strata.

Writes rows of every BulkWriter-supported type with pymilvus's LocalBulkWriter
(Parquet, JSON and NumPy), straight into the embedded object store of a
running Strata (DATA_DIR/storage), imports each with MilvusClient-side
`bulk_import` (REST jobs/import/*) and `utility.do_bulk_insert` (gRPC
Import), waits for Completed and compares every row. Run by hand:

    strata standalone --data-dir /tmp/d --addr 127.0.0.1:32650 &
    python docs/import/bulkwriter_check.py /tmp/d 127.0.0.1:32650
"""
import json
import os
import random
import sys
import time

import ml_dtypes  # bfloat16, as pymilvus uses it
import numpy as np
from pymilvus import DataType, MilvusClient, connections, utility
from pymilvus.bulk_writer import BulkFileType, LocalBulkWriter, bulk_import, get_import_progress, list_import_jobs

data_dir, addr = sys.argv[1], sys.argv[2]
url = "http://" + addr
client = MilvusClient(url)
connections.connect(uri=url)
DIM = 8
N = 2000


# At most four vector fields per collection: each format takes a different set.
VECTORS = {"parquet": ["v", "bf", "bin", "sp"], "json": ["v", "h", "q", "sp"], "numpy": ["v", "h", "bin", "q"]}
VTYPES = {"v": (DataType.FLOAT_VECTOR, DIM), "h": (DataType.FLOAT16_VECTOR, DIM), "bf": (DataType.BFLOAT16_VECTOR, DIM),
          "bin": (DataType.BINARY_VECTOR, DIM * 8), "q": (DataType.INT8_VECTOR, DIM), "sp": (DataType.SPARSE_FLOAT_VECTOR, None)}


def schema(fmt):
    numpy_ok = fmt == "numpy"
    s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=True)
    s.add_field("id", DataType.INT64, is_primary=True)
    s.add_field("b", DataType.BOOL)
    s.add_field("i8", DataType.INT8)
    s.add_field("i16", DataType.INT16)
    s.add_field("i32", DataType.INT32)
    s.add_field("f", DataType.FLOAT)
    s.add_field("d", DataType.DOUBLE)
    s.add_field("s", DataType.VARCHAR, max_length=64)
    s.add_field("j", DataType.JSON)
    for name in VECTORS[fmt]:
        t, dim = VTYPES[name]
        if dim:
            s.add_field(name, t, dim=dim)
        else:
            s.add_field(name, t)
    if not numpy_ok:  # NumPy files cannot hold these (BulkWriter refuses them)
        s.add_field("arr", DataType.ARRAY, element_type=DataType.INT64, max_capacity=4)
        s.add_field("n", DataType.INT64, nullable=True)
    s.verify()  # resolves the primary field, which LocalBulkWriter reads
    return s


def row(i, fmt):
    numpy_ok = fmt == "numpy"
    r = {
        "id": i, "b": i % 2 == 0, "i8": i % 100, "i16": i, "i32": i * 3, "f": i / 2, "d": i / 4,
        "s": f"str{i}", "j": {"k": i, "t": [i]},
        "v": [float(i + k) for k in range(DIM)],
        "h": np.array([k / 2 for k in range(DIM)], dtype=np.float16),
        "bf": np.array([k for k in range(DIM)], dtype=ml_dtypes.bfloat16),
        "bin": bytes((i + k) % 256 for k in range(DIM)),
        "q": np.array([(i + k) % 128 for k in range(DIM)], dtype=np.int8),
        "color": f"c{i % 5}",
    }
    r["sp"] = {i % 50: 0.5, 100 + i % 7: 1.5}
    if not numpy_ok:
        r["arr"] = [i, i + 1]
        r["n"] = None if i % 3 == 0 else i
    for name in VTYPES:
        if name not in VECTORS[fmt]:
            del r[name]
    return r


def write(file_type, fmt):
    os.makedirs(os.path.join(data_dir, "storage", "bw"), exist_ok=True)
    w = LocalBulkWriter(schema=schema(fmt), local_path=os.path.join(data_dir, "storage", "bw"),
                        file_type=file_type, chunk_size=1 << 20)
    for i in range(N):
        w.append_row(row(i, fmt))
    w.commit()
    # Paths as object-store keys, relative to the store root.
    root = os.path.join(data_dir, "storage") + "/"
    return [[p.replace(root, "") for p in batch] for batch in w.batch_files]


def vec_bytes(x):
    return bytes(x[0] if isinstance(x, list) else x)


def check(coll, fmt):
    numpy_ok = fmt == "numpy"
    client.load_collection(coll)
    got = client.query(coll, filter="id >= 0", output_fields=["*"], limit=N + 10, consistency_level="Strong")
    assert len(got) == N, (coll, len(got))
    for g in got:
        w = row(g["id"], fmt)
        for k in ["b", "i8", "i16", "i32", "s", "color"]:
            assert g[k] == w[k], (coll, k, g[k], w[k])
        assert abs(g["f"] - w["f"]) < 1e-6 and g["d"] == w["d"], (coll, g["f"], g["d"])
        assert g["j"] == w["j"], (coll, g["j"])
        assert [float(x) for x in g["v"]] == w["v"], (coll, g["v"])
        for name in ("h", "bf"):
            if name in w:
                assert vec_bytes(g[name]) == w[name].tobytes(), (coll, name)
        if "bin" in w:
            assert vec_bytes(g["bin"]) == w["bin"], (coll, "bin")
        if "q" in w:
            assert [int(x) for x in (g["q"] if len(g["q"]) == DIM else np.frombuffer(vec_bytes(g["q"]), np.int8))] == \
                [int(x) for x in w["q"]], (coll, "q", g["q"])
        if "sp" in w:
            assert {int(k): float(v) for k, v in g["sp"].items()} == w["sp"], (coll, g["sp"])
        if not numpy_ok:
            assert list(g["arr"]) == w["arr"], (coll, g["arr"])
            assert g["n"] == w["n"], (coll, g["n"], w["n"])


results = []
for name, ft in [("parquet", BulkFileType.PARQUET), ("json", BulkFileType.JSON), ("numpy", BulkFileType.NUMPY)]:
    coll = "bw_" + name
    if client.has_collection(coll):
        client.drop_collection(coll)
    idx = client.prepare_index_params()
    for f in VECTORS[name]:
        if f == "bin":
            idx.add_index(f, index_type="BIN_FLAT", metric_type="HAMMING")
        elif f == "sp":
            idx.add_index(f, index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
        else:
            idx.add_index(f, index_type="HNSW", metric_type="L2", params={"M": 8, "efConstruction": 64})
    client.create_collection(coll, schema=schema(name), index_params=idx)
    files = write(ft, name)
    t0 = time.time()
    if name == "json":
        # gRPC v1 (utility.do_bulk_insert): one task per call.
        ids = [utility.do_bulk_insert(coll, files=f) for f in files]
        for tid in ids:
            while True:
                st = utility.get_bulk_insert_state(tid)
                if st.state_name in ("Completed", "Failed"):
                    break
                time.sleep(0.1)
            assert st.state_name == "Completed", st
    else:
        resp = bulk_import(url=url, collection_name=coll, files=files)
        job = resp.json()["data"]["jobId"]
        while True:
            p = get_import_progress(url=url, job_id=job).json()["data"]
            if p["state"] in ("Completed", "Failed"):
                break
            time.sleep(0.1)
        assert p["state"] == "Completed", p
        assert p["importedRows"] == N, p
    took = time.time() - t0
    check(coll, name)
    results.append((name, len(files), took))
    print(f"{name}: {len(files)} file group(s), {N} rows imported and compared in {took:.2f}s")

jobs = list_import_jobs(url=url).json()["data"]["records"]
assert any(j["collectionName"] == "bw_parquet" and j["state"] == "Completed" for j in jobs), jobs
print("list_import_jobs:", len(jobs), "jobs")
print("OK")
