"""Write Milvus 2.3.5 binlogs with a real Milvus and copy them out as fixtures.

Usage (needs `pip install milvus==2.3.5 pymilvus==2.3.7`, see README.md here):

    python make_fixtures.py --data /tmp/milvusbin-data \
        --out ../../internal/storage/testdata/milvus-2.3.5

Starts a Milvus 2.3.5 standalone (the `milvus` PyPI package, local storage)
over a fresh data directory, creates collection "allt" (every scalar type
2.3.5 has, JSON, arrays, a float vector, a dynamic field) and
"vpk" (VarChar primary key, binary vector; 2.3 allows one vector field), inserts the rows of rows.py in two flushes,
deletes by primary key, then copies every insert, stats and delta log of both
collections to --out (same relative keys) with manifest.json describing
collections and segments. To stay small it leaves out the VarChar stats logs
(about 100 KiB each) of every "vpk" segment but the first. Stops the server at the end.
"""

import argparse
import json
import os
import shutil
import time

from milvus import MilvusServer
from pymilvus import (Collection, CollectionSchema, DataType, FieldSchema,
                      connections, utility)

import rows


def schema_allt():
    f = [
        FieldSchema("pk", DataType.INT64, is_primary=True),
        FieldSchema("b", DataType.BOOL),
        FieldSchema("i8", DataType.INT8),
        FieldSchema("i16", DataType.INT16),
        FieldSchema("i32", DataType.INT32),
        FieldSchema("f", DataType.FLOAT),
        FieldSchema("d", DataType.DOUBLE),
        FieldSchema("s", DataType.VARCHAR, max_length=64),
        FieldSchema("j", DataType.JSON),
        FieldSchema("ai", DataType.ARRAY, element_type=DataType.INT64, max_capacity=8),
        FieldSchema("as", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=4, max_length=16),
        FieldSchema("fv", DataType.FLOAT_VECTOR, dim=8),
    ]
    return CollectionSchema(f, enable_dynamic_field=True)


def schema_vpk():
    f = [
        FieldSchema("k", DataType.VARCHAR, is_primary=True, max_length=16),
        FieldSchema("bv", DataType.BINARY_VECTOR, dim=16),
    ]
    return CollectionSchema(f)


def copy_logs(data_root, coll_id, out, stats_segments=None):
    """Copy a collection's logs; stats_segments, if set, limits stats logs to those segments."""
    n = 0
    for kind in ("insert_log", "stats_log", "delta_log"):
        src = os.path.join(data_root, kind, str(coll_id))
        if not os.path.isdir(src):
            continue
        for dirpath, _, files in os.walk(src):
            for name in files:
                p = os.path.join(dirpath, name)
                rel = os.path.relpath(p, data_root)
                seg = rel.split(os.sep)[3]
                if kind == "stats_log" and stats_segments is not None and seg not in stats_segments:
                    continue
                dst = os.path.join(out, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(p, dst)
                n += 1
    return n


def segments(coll):
    out = []
    for s in utility.get_query_segment_info(coll.name):
        out.append({"segment": s.segmentID, "partition": s.partitionID, "rows": s.num_rows})
    return sorted(out, key=lambda x: x["segment"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="fresh Milvus data directory (deleted first)")
    ap.add_argument("--out", required=True, help="fixture directory (replaced)")
    args = ap.parse_args()
    shutil.rmtree(args.data, ignore_errors=True)
    server = MilvusServer()
    server.set_base_dir(args.data)
    server.start()
    try:
        run(server, args)
    finally:
        server.stop()


def run(server, args):
    connections.connect(host="127.0.0.1", port=server.listen_port)
    manifest = {"milvus": utility.get_server_version(), "collections": {}}

    allt = Collection("allt", schema_allt())
    vpk = Collection("vpk", schema_vpk())
    first = [rows.row(i) for i in range(200)]
    allt.insert(first)
    vpk.insert([rows.vrow(i) for i in range(20)])
    allt.flush()
    vpk.flush()
    allt.insert([rows.row(i) for i in range(200, rows.N)])
    vpk.insert([rows.vrow(i) for i in range(20, 40)])
    gone = [rows.PK_BASE + i for i in range(rows.N) if rows.deleted(i)]
    allt.delete("pk in %s" % json.dumps(gone))
    vgone = [rows.vrow(i)["k"] for i in range(40) if rows.vdeleted(i)]
    vpk.delete("k in %s" % json.dumps(vgone))
    allt.flush()
    vpk.flush()

    allt.create_index("fv", {"index_type": "FLAT", "metric_type": "L2", "params": {}})
    vpk.create_index("bv", {"index_type": "BIN_FLAT", "metric_type": "HAMMING", "params": {}})
    for c in (allt, vpk):
        c.load()
    time.sleep(2)
    manifest["collections"]["allt"] = {
        "id": allt.describe()["collection_id"],
        "loaded_segments": segments(allt),
        "count": allt.query("", output_fields=["count(*)"])[0]["count(*)"],
    }
    manifest["collections"]["vpk"] = {
        "id": vpk.describe()["collection_id"],
        "loaded_segments": segments(vpk),
        "count": vpk.query("", output_fields=["count(*)"])[0]["count(*)"],
    }

    data_root = os.path.join(args.data, "data")
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    for name, c in manifest["collections"].items():
        keep = None
        if name == "vpk":
            keep = {str(c["loaded_segments"][0]["segment"])}
        c["files"] = copy_logs(data_root, c["id"], args.out, keep)
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as fp:
        json.dump(manifest, fp, indent=1, sort_keys=True)
        fp.write("\n")
    print(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    main()
