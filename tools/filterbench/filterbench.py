"""Filtered HNSW search through the server: Strata (one or more builds) vs
Milvus 2.3.5 standalone, on the same data, measured alternately.

    python filterbench.py --strata before=/tmp/strata-old --strata after=/tmp/strata-new \
        --milvus --work /tmp/filterbench --rows 200000 --rounds 3

Every server gets the same collection: Int64 primary key, Int64 label
(row % 100), FloatVector(128) of clustered data (1,000 Gaussian centres,
unit noise), one shard, HNSW M 16 efConstruction 64, L2. The filters keep
1 % (label == 3), 10 % (label < 10), 20 % (label in [0..19]) and 50 %
(label >= 50) of the rows. For each round, filter and server in turn: a
warm-up of 10 queries, then --queries queries one at a time (nq 1, top 10,
ef 64). Reported per case: QPS (client wall), server CPU per query (user +
system time of the server process and its descendants, from /proc) and
recall@10 against the exact filtered top 10 computed with numpy. One JSON
line per case on stdout.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import time

import numpy as np
from pymilvus import Collection, CollectionSchema, DataType, FieldSchema, connections, utility

FILTERS = [
    ("1%", "label == 3", lambda l: l == 3),
    ("10%", "label < 10", lambda l: l < 10),
    ("20%", "label in [%s]" % ", ".join(str(i) for i in range(20)), lambda l: l < 20),
    ("50%", "label >= 50", lambda l: l >= 50),
]
DIM, K, EF = 128, 10, 64


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port):
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("port %d never opened" % port)


def tree_cpu(pid):
    """User + system seconds of pid and every descendant still running."""
    ticks = os.sysconf("SC_CLK_TCK")
    kids, stats = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rindex(")") + 2:].split()
        ppid = int(rest[1])
        kids.setdefault(ppid, []).append(int(d))
        stats[int(d)] = (int(rest[11]) + int(rest[12])) / ticks
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += stats.get(p, 0.0)
        todo.extend(kids.get(p, []))
    return total


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def dataset(rows, queries, seed=7):
    rng = np.random.default_rng(seed)
    centres = rng.random((1000, DIM), dtype=np.float32) * 10
    vecs = centres[rng.integers(0, 1000, rows)] + rng.standard_normal((rows, DIM), dtype=np.float32)
    qs = centres[rng.integers(0, 1000, queries)] + rng.standard_normal((queries, DIM), dtype=np.float32)
    return vecs.astype(np.float32), qs.astype(np.float32), np.arange(rows, dtype=np.int64) % 100


def truth(vecs, labels, qs):
    out = {}
    n2 = (vecs * vecs).sum(1)
    for name, _, keep in FILTERS:
        ids = np.nonzero(keep(labels))[0]
        sub, sn = vecs[ids], n2[ids]
        t = []
        for q in qs:
            d = sn - 2 * sub @ q
            t.append(set(ids[np.argsort(d, kind="stable")[:K]].tolist()))
        out[name] = t
    return out


def load(alias, uri, vecs, labels):
    connections.connect(alias, uri=uri)
    if utility.has_collection("fb", using=alias):
        utility.drop_collection("fb", using=alias)
    schema = CollectionSchema([
        FieldSchema("id", DataType.INT64, is_primary=True),
        FieldSchema("label", DataType.INT64),
        FieldSchema("vec", DataType.FLOAT_VECTOR, dim=DIM),
    ])
    c = Collection("fb", schema, using=alias, shards_num=1)
    t0 = time.time()
    for i in range(0, len(vecs), 5000):
        j = min(i + 5000, len(vecs))
        c.insert([list(range(i, j)), labels[i:j].tolist(), vecs[i:j].tolist()])
    c.flush()
    c.create_index("vec", {"index_type": "HNSW", "metric_type": "L2", "params": {"M": 16, "efConstruction": 64}})
    utility.wait_for_index_building_complete("fb", using=alias)
    c.load()
    return c, time.time() - t0


def measure(c, pid, qs, expr, want, n):
    p = {"metric_type": "L2", "params": {"ef": EF}}
    for q in qs[:10]:
        c.search([q.tolist()], "vec", p, K, expr=expr, consistency_level="Eventually")
    ql = [q.tolist() for q in qs[:n]]
    cpu0, t0 = tree_cpu(pid), time.perf_counter()
    found = 0
    for i, q in enumerate(ql):
        r = c.search([q], "vec", p, K, expr=expr, consistency_level="Eventually")
        found += len(set(r[0].ids) & want[i])
    wall, cpu = time.perf_counter() - t0, tree_cpu(pid) - cpu0
    return {"qps": round(n / wall, 1), "server_cpu_ms_per_query": round(1000 * cpu / n, 3),
            "recall": round(found / (K * n), 4)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strata", action="append", default=[], help="NAME=BINARY, repeatable")
    ap.add_argument("--milvus", action="store_true", help="also run milvus==2.3.5 (milvus.MilvusServer)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    vecs, qs, labels = dataset(a.rows, a.queries)
    want = truth(vecs, labels, qs)
    servers, stops = [], []
    try:
        for spec in a.strata:
            name, binary = spec.split("=", 1)
            d = os.path.join(a.work, "strata-" + name)
            shutil.rmtree(d, ignore_errors=True)
            port, mport = free_port(), free_port()
            log = open(d + ".log", "w")
            p = subprocess.Popen([binary, "standalone", "--data-dir", d, "--addr", "127.0.0.1:%d" % port,
                                  "--metrics-addr", "127.0.0.1:%d" % mport, "--log-level", "warn"],
                                 stdout=log, stderr=subprocess.STDOUT)
            stops.append(lambda p=p, log=log: (p.send_signal(signal.SIGTERM), p.wait(timeout=60), log.close()))
            wait_port(port)
            servers.append(("strata-" + name, "http://127.0.0.1:%d" % port, p.pid))
        if a.milvus:
            from milvus import MilvusServer
            d = os.path.join(a.work, "milvus")
            shutil.rmtree(d, ignore_errors=True)
            s = MilvusServer()
            s.set_base_dir(d)
            s.start()
            stops.append(s.stop)
            servers.append(("milvus-2.3.5", "http://127.0.0.1:%d" % s.listen_port, s.server_proc.pid))
        cols = {}
        for name, uri, pid in servers:
            c, secs = load(name, uri, vecs, labels)
            cols[name] = c
            print(json.dumps({"server": name, "load_seconds": round(secs, 1), "rows": a.rows}), flush=True)
        for rnd in range(1, a.rounds + 1):
            for fname, expr, _ in FILTERS:
                for name, uri, pid in servers:
                    before = loadavg()
                    r = measure(cols[name], pid, qs, expr, want[fname], a.queries)
                    r.update(server=name, round=rnd, selectivity=fname, filter=expr,
                             load_before=before, load_after=loadavg())
                    print(json.dumps(r), flush=True)
    finally:
        for stop in reversed(stops):
            try:
                stop()
            except Exception as e:  # keep stopping the others
                print(json.dumps({"stop_error": str(e)}), flush=True)


if __name__ == "__main__":
    main()
