"""Make a real Milvus 2.3.5 read binlogs written by Strata.

Usage (venv as in README.md; STRATA is a built `strata` binary):

    go build -o /tmp/strata ./cmd/strata
    python import_strata.py --strata /tmp/strata --work /tmp/milvusbin-import

1. Starts Strata over a fresh data directory, creates "allt" (the schema of
   make_fixtures.py) and "vpkf" (VarChar pk, float vector), inserts the rows of rows.py, deletes the
   same keys, flushes, and stops Strata.
2. Starts Milvus 2.3.5 (local storage), copies Strata's insert logs and delta
   logs into its storage directory and bulk-imports them in binlog ("backup")
   mode into new collections of the same schemas, twice per collection:
     a. exactly as Strata laid them out (deletes are L0 delta logs in a
        segment of their own, which 2.3 does not know);
     b. with each L0 delta log also placed under every data segment, where
        2.3's importer looks for deletes.
3. Loads the imported collections, queries every row back from Milvus and
   compares each value with rows.py. Prints a JSON report and exits 1 on any
   mismatch. Stops both servers.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from milvus import MilvusServer
from pymilvus.grpc_gen import common_pb2 as common_types
from pymilvus.grpc_gen import milvus_pb2 as milvus_types
from pymilvus import (Collection, CollectionSchema, DataType, FieldSchema,
                      connections, utility)

import rows
from make_fixtures import schema_allt


def schema_vpkf():
    """VarChar primary key with a float vector (Strata has no binary vectors)."""
    return CollectionSchema([
        FieldSchema("k", DataType.VARCHAR, is_primary=True, max_length=16),
        FieldSchema("v", DataType.FLOAT_VECTOR, dim=4),
    ])


def vfrow(i):
    return {"k": rows.vrow(i)["k"], "v": [float(i), -float(i), 0.5, 1.0]}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_with_strata(binary, data_dir):
    port, mport = free_port(), free_port()
    log = open(data_dir + ".log", "w", encoding="utf-8")
    proc = subprocess.Popen([binary, "standalone", "--data-dir", data_dir,
                             "--addr", "127.0.0.1:%d" % port,
                             "--metrics-addr", "127.0.0.1:%d" % mport],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        connections.connect("strata", host="127.0.0.1", port=port)
        ids = {}
        for name, schema, make, n, deleted, pk in (
                ("allt", schema_allt(), rows.row, rows.N, rows.deleted, "pk"),
                ("vpkf", schema_vpkf(), vfrow, 40, rows.vdeleted, "k")):
            c = Collection(name, schema, using="strata")
            half = n * 2 // 3
            c.insert([make(i) for i in range(half)])
            c.flush()
            c.insert([make(i) for i in range(half, n)])
            gone = [make(i)[pk] for i in range(n) if deleted(i)]
            c.delete("%s in %s" % (pk, json.dumps(gone)))
            c.flush()
            ids[name] = {"id": c.describe()["collection_id"],
                         "fields": {f.name: f.to_dict().get("field_id") for f in c.schema.fields}}
        connections.disconnect("strata")
        return ids
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()


def stage(src_root, coll_id, dst, l0_to_segments):
    """Copy a collection's insert and delta logs from Strata's object store
    (src_root = .../storage/files) to dst/{insert_log,delta_log}/...; with
    l0_to_segments, every delta log of an L0 segment (partition -1) is also
    copied under each data segment, where Milvus 2.3 looks for deletes.
    Returns (insert prefix, delta prefix, partition directory name)."""
    ins = os.path.join(src_root, "insert_log", str(coll_id))
    parts = os.listdir(ins)
    assert len(parts) == 1, parts
    part = parts[0]
    shutil.copytree(os.path.join(ins, part), os.path.join(dst, "insert_log", str(coll_id), part))
    dsrc = os.path.join(src_root, "delta_log", str(coll_id))
    ddst = os.path.join(dst, "delta_log", str(coll_id), part)
    os.makedirs(ddst, exist_ok=True)
    segs = os.listdir(os.path.join(ins, part))
    for p in sorted(os.listdir(dsrc)) if os.path.isdir(dsrc) else []:
        for seg in os.listdir(os.path.join(dsrc, p)):
            for log in os.listdir(os.path.join(dsrc, p, seg)):
                f = os.path.join(dsrc, p, seg, log)
                targets = [seg] + (segs if l0_to_segments and p == "-1" else [])
                for t in targets:
                    os.makedirs(os.path.join(ddst, t), exist_ok=True)
                    shutil.copyfile(f, os.path.join(ddst, t, log))
    return (os.path.join(dst, "insert_log", str(coll_id), part) + "/",
            os.path.join(dst, "delta_log", str(coll_id), part) + "/")


def bulk_import(name, schema, files):
    c = Collection(name, schema)
    # pymilvus 2.3.7's do_bulk_insert drops every option but "bucket", so
    # send the Import request with {"backup": "true"} on the raw stub.
    req = milvus_types.ImportRequest(collection_name=name, partition_name="_default", files=files)
    req.options.append(common_types.KeyValuePair(key="backup", value="true"))
    resp = connections._fetch_handler()._stub.Import(req)
    if resp.status.error_code != 0 or not resp.tasks:
        return c, {"state": "Rejected", "reason": resp.status.reason, "files": files, "rows": 0}
    task = resp.tasks[0]
    deadline = time.time() + 300
    while True:
        st = utility.get_bulk_insert_state(task)
        if st.state in (st.ImportCompleted, st.ImportFailed, st.ImportFailedAndCleaned) or time.time() > deadline:
            break
        time.sleep(1)
    return c, {"task": task, "state": st.state_name, "rows": st.row_count,
               "reason": st.failed_reason, "files": files}


def fetch_all(c, pk, vector, index):
    c.create_index(vector, index)
    c.load()
    out = c.query("", output_fields=["*"], limit=16384)
    c.release()
    return {r[pk]: r for r in out}


def compare_allt(got):
    problems = []
    want = {rows.PK_BASE + i: rows.row(i) for i in range(rows.N)}
    for pk, r in got.items():
        w = want.get(pk)
        if w is None:
            problems.append("unexpected pk %r" % pk)
            continue
        for k, v in w.items():
            g = r.get(k)
            if k == "fv":
                g = [float(x) for x in g]
            if g != v:
                problems.append("pk %d field %s: got %r want %r" % (pk, k, g, v))
        extra = set(r) - set(w)
        if extra:
            problems.append("pk %d extra keys %s" % (pk, sorted(extra)))
    return problems


def self_check():
    """The comparators must notice a wrong value."""
    r = dict(rows.row(3))
    r["fv"] = list(r["fv"])
    r["fv"][7] += 1
    assert compare_allt({r["pk"]: r}), "compare_allt missed a wrong vector"
    r = dict(rows.row(4))
    r["ai"] = r["ai"][:-1]
    assert compare_allt({r["pk"]: r}), "compare_allt missed a wrong array"
    assert compare_vpkf({"k001": {"k": "k001", "v": [1.0, -1.0, 0.5, 2.0]}}), "compare_vpkf missed a wrong vector"


def compare_vpkf(got):
    problems = []
    want = {vfrow(i)["k"]: vfrow(i) for i in range(40)}
    for k, r in got.items():
        w = want.get(k)
        if w is None or [float(x) for x in r["v"]] != w["v"]:
            problems.append("key %r: got %r want %r" % (k, r, w))
    return problems


def import_into_milvus(ids, sdata, mdata):
    server = MilvusServer()
    server.set_base_dir(mdata)
    server.start()
    try:
        connections.connect(host="127.0.0.1", port=server.listen_port)
        report = {"milvus": utility.get_server_version(), "imports": []}
        src_root = os.path.join(sdata, "storage", "files")
        specs = {
            "allt": (schema_allt, "pk", "fv", rows.N, rows.deleted, compare_allt,
                     lambda i: rows.PK_BASE + i,
                     {"index_type": "FLAT", "metric_type": "L2", "params": {}}),
            "vpkf": (schema_vpkf, "k", "v", 40, rows.vdeleted, compare_vpkf,
                     lambda i: vfrow(i)["k"],
                     {"index_type": "FLAT", "metric_type": "L2", "params": {}}),
        }
        for name, (schema, pk, vec, n, deleted, compare, key, index) in specs.items():
            for variant in ("as_written", "l0_under_segments"):
                dst = os.path.join(mdata, "data", "strata", name, variant)
                files = list(stage(src_root, ids[name]["id"], dst, variant == "l0_under_segments"))
                target = "%s_%s" % (name, variant)
                c, res = bulk_import(target, schema(), files)
                res["collection"] = target
                if res["state"] == "Completed":
                    got = fetch_all(c, pk, vec, index)
                    res["rows_read_back"] = len(got)
                    res["deleted_applied"] = n - len(got)
                    # as written, 2.3 cannot see Strata's L0 deletes: every row comes back
                    want = {key(i) for i in range(n)
                            if variant == "as_written" or not deleted(i)}
                    res["expected_rows"] = len(want)
                    res["keys_match"] = set(got) == want
                    res["value_mismatches"] = compare(got)[:20]
                report["imports"].append(res)
        return report
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strata", required=True)
    ap.add_argument("--work", required=True, help="scratch directory (deleted first)")
    args = ap.parse_args()
    self_check()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    sdata = os.path.join(args.work, "strata-data")
    ids = write_with_strata(args.strata, sdata)
    report = import_into_milvus(ids, sdata, os.path.join(args.work, "milvus-data"))
    print(json.dumps(report, indent=1))
    ok = all(r["state"] == "Completed" and r["keys_match"] and not r["value_mismatches"]
             for r in report["imports"])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
