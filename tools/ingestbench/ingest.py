"""Insert throughput of a Milvus-API server, measured with pymilvus.

    python ingest.py --uri http://127.0.0.1:19530 --dim 128 --rows 100000 --threads 1

Creates a fresh collection (Int64 primary key "id", FloatVector "v" of
--dim), inserts --rows rows in batches of --batch from --threads client
threads (thread t sends batches t, t+T, t+2T, ...; each thread has its own
connection), then calls flush once. Prints one JSON line:

    rows_per_s, mb_per_s  insert phase only (first send to last ack)
    flush_s               the flush call alone
    mb                    raw payload: rows * (8 + 4*dim) bytes

Vectors are generated before the clock starts, so only the client's
encoding, the RPC and the server count. The collection is dropped after.
"""
import argparse
import json
import threading
import time

import numpy as np
from pymilvus import (Collection, CollectionSchema, DataType, FieldSchema,
                      connections, utility)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True, help="e.g. http://127.0.0.1:19530")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--name", default="ingestbench")
    ap.add_argument("--label", default="")
    ap.add_argument("--encode-only", action="store_true",
                    help="time only pymilvus building and serializing the InsertRequests "
                         "(one thread, nothing sent): the client's ceiling")
    a = ap.parse_args()

    aliases = ["ib%d" % t for t in range(a.threads)]
    for al in aliases:
        connections.connect(al, uri=a.uri)
    main_alias = aliases[0]
    if utility.has_collection(a.name, using=main_alias):
        utility.drop_collection(a.name, using=main_alias)
    schema = CollectionSchema([
        FieldSchema("id", DataType.INT64, is_primary=True),
        FieldSchema("v", DataType.FLOAT_VECTOR, dim=a.dim),
    ])
    Collection(a.name, schema, using=main_alias, shards_num=1)

    rng = np.random.default_rng(1)
    nb = (a.rows + a.batch - 1) // a.batch
    batches = []
    for b in range(nb):
        lo, hi = b * a.batch, min(a.rows, (b + 1) * a.batch)
        ids = list(range(lo, hi))
        vecs = rng.random((hi - lo, a.dim), dtype=np.float32).tolist()
        batches.append([ids, vecs])

    if a.encode_only:
        encode_only(a, main_alias, batches)
        return

    colls = [Collection(a.name, using=al) for al in aliases]
    errors = []

    def worker(t):
        try:
            for b in range(t, nb, a.threads):
                r = colls[t].insert(batches[b])
                if r.insert_count != len(batches[b][0]):
                    raise RuntimeError("batch %d: insert_count %d" % (b, r.insert_count))
        except Exception as e:  # reported below, the run fails
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(a.threads)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t1 = time.perf_counter()
    if errors:
        raise SystemExit("insert failed: " + "; ".join(errors[:3]))
    colls[0].flush()
    t2 = time.perf_counter()
    n = colls[0].num_entities
    utility.drop_collection(a.name, using=main_alias)
    for al in aliases:
        connections.disconnect(al)

    mb = a.rows * (8 + 4 * a.dim) / 1e6
    ins = t1 - t0
    print(json.dumps({
        "label": a.label, "dim": a.dim, "rows": a.rows, "threads": a.threads,
        "batch": a.batch, "insert_s": round(ins, 3),
        "rows_per_s": round(a.rows / ins), "mb_per_s": round(mb / ins, 1),
        "flush_s": round(t2 - t1, 3), "num_entities": n, "mb": round(mb, 1),
    }), flush=True)
    if n != a.rows:
        raise SystemExit("num_entities %d after flush, want %d" % (n, a.rows))


def encode_only(a, alias, batches):
    """Prints the rows/s and MB/s at which one client thread turns the batches
    into serialized InsertRequests, the work pymilvus does before each RPC."""
    from pymilvus.client.prepare import Prepare
    from pymilvus.orm.prepare import Prepare as OrmPrepare
    h = connections._fetch_handler(alias)
    fields = h.describe_collection(a.name)["fields"]
    schema = Collection(a.name, using=alias).schema
    t0 = time.perf_counter()
    nbytes = 0
    for b in batches:
        ents = OrmPrepare.prepare_insert_data(b, schema)
        nbytes += len(Prepare.batch_insert_param(a.name, ents, "", fields).SerializeToString())
    t1 = time.perf_counter()
    utility.drop_collection(a.name, using=alias)
    mb = a.rows * (8 + 4 * a.dim) / 1e6
    print(json.dumps({"label": a.label, "dim": a.dim, "rows": a.rows, "encode_only": True,
                      "encode_s": round(t1 - t0, 3), "rows_per_s": round(a.rows / (t1 - t0)),
                      "mb_per_s": round(mb / (t1 - t0), 1), "wire_mb": round(nbytes / 1e6, 1)}),
          flush=True)


if __name__ == "__main__":
    main()
