"""Reference measurements for `strata bench`.

Run by internal/bench/compare.go as `python3 compare.py SPEC.json`. It builds
the same index type with the same parameters in hnswlib (HNSW) and faiss
(HNSW, IVF_FLAT, IVF_SQ8, IVF_PQ, FLAT), whichever are importable, over the
vectors the Go side wrote, measures recall@k against the Go side's exact
ground truth and throughput single-threaded (wall and thread CPU time) and
on `threads` threads (best of `rounds` passes, each pass one batch call), and
prints one JSON object on stdout: {"libraries": [...]}. For FLAT the
single-threaded row searches one query per call, like Strata's, and
"batch" holds one call with every query (faiss then uses BLAS). When no
library fits it prints {"skipped": reason} and exits 0.
"""

import json
import sys
import time


def load(spec):
    import numpy as np

    dim = spec["dim"]
    base = np.fromfile(spec["base"], dtype="<f4").reshape(-1, dim)
    queries = np.fromfile(spec["queries"], dtype="<f4").reshape(-1, dim)
    gt = np.fromfile(spec["gt"], dtype="<i4").reshape(-1, spec["k"])
    if spec["metric"] == "COSINE":
        base = base / np.maximum(np.linalg.norm(base, axis=1, keepdims=True), 1e-30)
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-30)
    return np.ascontiguousarray(base), np.ascontiguousarray(queries), gt


def recall(labels, gt):
    hit = 0
    for got, want in zip(labels, gt):
        hit += len(set(int(x) for x in got) & set(int(x) for x in want))
    return hit / gt.size


def version(mod, name):
    try:
        from importlib.metadata import version as v

        return v(name)
    except Exception:  # noqa: BLE001 - a missing version is not an error
        return getattr(mod, "__version__", "?")


def best_time(fn, rounds):
    """Shortest wall time and shortest thread CPU time of rounds calls."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(rounds):
        t, c = time.perf_counter(), time.thread_time()
        fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.thread_time() - c)
    return wall, cpu


def row(param, r, n, t1, tn):
    """One sweep row from the single-threaded (wall, cpu) and N-thread times."""
    return {"param": param, "recall": r, "qps1": n / t1[0], "cpuqps1": n / max(t1[1], 1e-9), "qpsN": n / tn[0]}


def run_hnswlib(spec, base, queries, gt):
    import hnswlib

    space = {"L2": "l2", "IP": "ip", "COSINE": "ip"}[spec["metric"]]
    p = spec["params"]
    idx = hnswlib.Index(space=space, dim=spec["dim"])
    t, tc = time.perf_counter(), time.process_time()
    idx.init_index(max_elements=len(base), ef_construction=p["efConstruction"], M=p["M"], random_seed=42)
    idx.add_items(base, num_threads=spec["threads"])
    build, build_cpu = time.perf_counter() - t, time.process_time() - tc
    rows = []
    k = spec["k"]
    for ef in spec["sweep"]:
        idx.set_ef(max(ef, k))
        labels, _ = idx.knn_query(queries, k=k, num_threads=1)
        r = recall(labels, gt)
        t1 = best_time(lambda: idx.knn_query(queries, k=k, num_threads=1), spec["rounds"])
        tn = best_time(lambda: idx.knn_query(queries, k=k, num_threads=spec["threads"]), spec["rounds"])
        rows.append(row(ef, r, len(queries), t1, tn))
    mem = idx.index_file_size() if hasattr(idx, "index_file_size") else 0
    return {"library": "hnswlib " + version(hnswlib, "hnswlib"), "build_s": build, "build_cpu_s": build_cpu,
            "memory_bytes": mem, "rows": rows}


def run_faiss(spec, base, queries, gt):
    import faiss

    d, p, kind = spec["dim"], spec["params"], spec["index"]
    ip = spec["metric"] in ("IP", "COSINE")
    mt = faiss.METRIC_INNER_PRODUCT if ip else faiss.METRIC_L2
    faiss.omp_set_num_threads(spec["threads"])
    t, tc = time.perf_counter(), time.process_time()
    if kind == "HNSW":
        idx = faiss.IndexHNSWFlat(d, p["M"], mt)
        idx.hnsw.efConstruction = p["efConstruction"]
    elif kind == "FLAT":
        idx = faiss.IndexFlatIP(d) if ip else faiss.IndexFlatL2(d)
    else:
        quant = faiss.IndexFlatIP(d) if ip else faiss.IndexFlatL2(d)
        if kind == "IVF_FLAT":
            idx = faiss.IndexIVFFlat(quant, d, p["nlist"], mt)
        elif kind == "IVF_SQ8":
            idx = faiss.IndexIVFScalarQuantizer(quant, d, p["nlist"], faiss.ScalarQuantizer.QT_8bit, mt)
        else:
            idx = faiss.IndexIVFPQ(quant, d, p["nlist"], p["m"], p["nbits"], mt)
            idx.pq.cp.niter = p["iterations"]
        # The coarse quantizer keeps faiss's IndexIVF default, cp.niter = 10
        # (Level1Quantizer), which is what Milvus (knowhere) runs: Strata's
        # iterations are a cap with an early stop, not a count to match.
        idx.train(base)  # quant stays referenced by this frame until return
    idx.add(base)
    build, build_cpu = time.perf_counter() - t, time.process_time() - tc
    k = spec["k"]

    def set_param(v):
        if kind == "HNSW":
            idx.hnsw.efSearch = max(v, k)
        elif kind != "FLAT":
            idx.nprobe = v

    def search(threads):
        faiss.omp_set_num_threads(threads)
        idx.search(queries, k)

    def one_by_one():
        faiss.omp_set_num_threads(1)
        for i in range(len(queries)):
            idx.search(queries[i : i + 1], k)

    rows = []
    for v in spec["sweep"]:
        set_param(v)
        _, labels = idx.search(queries, k)
        r = recall(labels, gt)
        t1 = best_time(one_by_one if kind == "FLAT" else lambda: search(1), spec["rounds"])
        tn = best_time(lambda: search(spec["threads"]), spec["rounds"])
        rows.append(row(v, r, len(queries), t1, tn))
        if kind not in ("FLAT", "HNSW"):
            # One search call per query, as Strata is timed (the batch call
            # above lets faiss rank the lists of all queries with one GEMM).
            te = best_time(one_by_one, spec["rounds"])
            rows[-1]["cpuqps1_each"] = len(queries) / max(te[1], 1e-9)
    out = {"library": "faiss " + version(faiss, "faiss-cpu"), "build_s": build, "build_cpu_s": build_cpu, "rows": rows}
    if kind == "FLAT":
        b1 = best_time(lambda: search(1), spec["rounds"])
        bn = best_time(lambda: search(spec["threads"]), spec["rounds"])
        b = row(0, rows[0]["recall"], len(queries), b1, bn)
        out["batch"] = {key: b[key] for key in ("recall", "qps1", "cpuqps1", "qpsN")}
    out["memory_bytes"] = int(faiss.serialize_index(idx).nbytes)
    return out


def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    if not importable("numpy"):
        print(json.dumps({"skipped": "numpy is not importable"}))
        return
    runners = []
    if spec["index"] == "HNSW" and importable("hnswlib"):
        runners.append(run_hnswlib)
    if importable("faiss"):
        runners.append(run_faiss)
    if not runners:
        need = "hnswlib or faiss" if spec["index"] == "HNSW" else "faiss"
        print(json.dumps({"skipped": need + " is not importable"}))
        return
    base, queries, gt = load(spec)
    print(json.dumps({"libraries": [run(spec, base, queries, gt) for run in runners]}))


if __name__ == "__main__":
    main()
