#!/usr/bin/env python3
"""Reference measurement with hnswlib for the Fashion-MNIST benchmark.

Run by fmnist_test.go (build tag "bench") in the same process tree so that
both libraries see the same data, ground truth and parameters. Prints one
JSON object per line: {"build_s": ..., "cpu_s": ..., "threads": ...} and
{"ef": ..., "recall": ..., "qps": ..., "cpu_qps": ...}. Requires `pip install hnswlib numpy`.
"""
import argparse
import gzip
import json
import time

import hnswlib
import numpy as np


def load_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    n, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(n, rows * cols).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--gt", required=True, help="little-endian int32 [nq, k] exact neighbours")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--M", type=int, default=16)
    ap.add_argument("--efc", type=int, default=200)
    ap.add_argument("--ef", default="10,16,20,32,48,64,128")
    ap.add_argument("--rounds", type=int, default=3, help="timed passes per ef; the fastest counts")
    ap.add_argument("--single-build", action="store_true", help="also time a 1-thread build")
    a = ap.parse_args()

    train, test = load_idx(a.train), load_idx(a.test)
    gt = np.fromfile(a.gt, dtype="<i4").reshape(len(test), -1)[:, :a.k]

    def build(threads):
        p = hnswlib.Index(space="l2", dim=train.shape[1])
        p.init_index(max_elements=len(train), M=a.M, ef_construction=a.efc, random_seed=100)
        t, c = time.perf_counter(), time.thread_time()
        p.add_items(train, np.arange(len(train)), num_threads=threads)
        el, cpu = time.perf_counter() - t, time.thread_time() - c
        # cpu_s is meaningful for threads == 1, which runs on this thread.
        print(json.dumps({"build_s": el, "cpu_s": cpu, "threads": threads}), flush=True)
        return p

    if a.single_build:
        build(1)
    p = build(-1)
    p.set_num_threads(1)
    for ef in (int(x) for x in a.ef.split(",")):
        p.set_ef(ef)
        p.knn_query(test[:200], k=a.k, num_threads=1)  # warm up
        # num_threads=1 runs the queries on this thread, so thread_time is
        # the CPU time they used (it excludes time spent descheduled).
        el = cpu = float("inf")
        for _ in range(a.rounds):
            t, c = time.perf_counter(), time.thread_time()
            labels, _ = p.knn_query(test, k=a.k, num_threads=1)
            el, cpu = min(el, time.perf_counter() - t), min(cpu, time.thread_time() - c)
        hit = sum(len(set(labels[i]) & set(gt[i])) for i in range(len(test)))
        print(json.dumps({"ef": ef, "recall": hit / (len(test) * a.k), "qps": len(test) / el, "cpu_qps": len(test) / cpu}), flush=True)


if __name__ == "__main__":
    main()
