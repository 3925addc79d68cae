#!/usr/bin/env python3
"""Data side of tools/milvusbackup/run.sh (pymilvus 2.6).

  data.py URI load COLL [UPSERTS]
                             create COLL, insert in three flushed batches, delete,
                             (UPSERTS=1: upsert 50 keys,) flush; prints the row count
  data.py URI compare A B    loads B (index as A's), compares every row of A and B
                             by primary key, all fields; exit 1 on any difference
"""
import json
import math
import random
import sys
import time

from pymilvus import DataType, MilvusClient

DIM = 8
BATCH = 1000


def schema(c):
    s = c.create_schema(auto_id=False, enable_dynamic_field=True)
    s.add_field("pk", DataType.INT64, is_primary=True)
    s.add_field("name", DataType.VARCHAR, max_length=64)
    s.add_field("score", DataType.DOUBLE)
    s.add_field("tags", DataType.ARRAY, element_type=DataType.INT64, max_capacity=4)
    s.add_field("meta", DataType.JSON)
    s.add_field("opt", DataType.INT32, nullable=True)
    s.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
    return s


def row(i, gen=0):
    r = random.Random(i * 7919 + gen)
    out = {
        "pk": i,
        "name": f"n{i}-g{gen}",
        "score": r.random() * 100,
        "tags": [i % 5, gen],
        "meta": {"i": i, "g": gen, "s": str(i)},
        "opt": None if i % 3 == 0 else i,
        "vec": [r.random() for _ in range(DIM)],
    }
    if i % 4 == 0:
        out["extra"] = f"dyn{i}"  # dynamic field
    return out


def load(uri, coll, upserts):
    c = MilvusClient(uri)
    if c.has_collection(coll):
        c.drop_collection(coll)
    c.create_collection(coll, schema=schema(c), shards_num=1)
    c.create_partition(coll, "p1")
    idx = c.prepare_index_params()
    idx.add_index("vec", index_type="HNSW", metric_type="L2", params={"M": 8, "efConstruction": 64})
    c.create_index(coll, idx)
    for b in range(3):
        rows = [row(i) for i in range(b * BATCH, (b + 1) * BATCH)]
        # the second batch goes to partition p1
        c.insert(coll, rows, partition_name="p1" if b == 1 else None)
        c.flush(coll)
    # deletes: every 10th key (some in p1, some in _default)
    deleted = list(range(0, 3 * BATCH, 10))
    c.delete(coll, ids=deleted)
    if upserts:
        # upserts: keys 5, 15, 25 ... < 500 get a new generation
        c.upsert(coll, [row(i, 1) for i in range(5, 500, 10)])
    c.flush(coll)
    c.load_collection(coll)
    n = c.query(coll, filter="", output_fields=["count(*)"], consistency_level="Strong")[0]["count(*)"]
    print(f"loaded {coll}: {n} rows ({3 * BATCH} inserted, {len(deleted)} deleted, "
          f"{50 if upserts else 0} upserted)")


def rows_of(c, coll):
    out = {}
    it = c.query_iterator(coll, batch_size=1000, filter="pk >= 0", output_fields=["*"],
                          consistency_level="Strong")
    while True:
        page = it.next()
        if not page:
            break
        for r in page:
            out[r["pk"]] = r
    it.close()
    return out


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def compare(uri, a, b):
    c = MilvusClient(uri)
    t0 = time.time()
    if not c.list_indexes(b):
        idx = c.prepare_index_params()
        idx.add_index("vec", index_type="HNSW", metric_type="L2", params={"M": 8, "efConstruction": 64})
        c.create_index(b, idx)
    c.load_collection(b)
    ra, rb = rows_of(c, a), rows_of(c, b)
    bad = 0
    for pk in sorted(set(ra) | set(rb)):
        x, y = ra.get(pk), rb.get(pk)
        if x is None or y is None:
            bad += 1
            if bad <= 10:
                print(f"pk {pk}: only in {a if y is None else b}")
            continue
        x, y = dict(x), dict(y)
        if x.keys() != y.keys() or not all(same(x[k], y[k]) for k in x):
            bad += 1
            if bad <= 10:
                print(f"pk {pk}: {json.dumps(x, default=str)[:300]} != {json.dumps(y, default=str)[:300]}")
    parts_a = {p: c.query(a, filter="", output_fields=["count(*)"], partition_names=[p],
                          consistency_level="Strong")[0]["count(*)"] for p in c.list_partitions(a)}
    parts_b = {p: c.query(b, filter="", output_fields=["count(*)"], partition_names=[p],
                          consistency_level="Strong")[0]["count(*)"] for p in c.list_partitions(b)}
    print(f"compared {len(ra)} rows of {a} with {len(rb)} rows of {b}: {bad} differ; "
          f"partitions {parts_a} vs {parts_b}; {time.time() - t0:.1f}s")
    if parts_a != parts_b:
        bad += 1
    return 1 if bad or not ra else 0


if __name__ == "__main__":
    if sys.argv[2] == "load":
        load(sys.argv[1], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == "1")
    elif sys.argv[2] == "compare":
        sys.exit(compare(sys.argv[1], sys.argv[3], sys.argv[4]))
    else:
        sys.exit(__doc__)
