"""BM25 top-10 throughput on the bm25check corpus (corpus.py): Strata (through
pymilvus) against tantivy (Python bindings) and bm25s, one run, one thread
each, the same queries and the same tokens (Strata's standard analyzer;
tantivy gets them as term queries, bm25s as token lists).

Per engine: index build seconds, RSS growth, queries/s per core (queries /
CPU-seconds of the process doing the search: the server for Strata, this
process for the peers) and CPU-ms per query, plus the overlap of its top-10
with bm25s's (tantivy quantizes document lengths, so its ties and near-ties
may order differently).

    python3 tools/bm25check/bench.py --bin /tmp/strata --out /tmp/bm25bench [--passes 5]
    python3 tools/bm25check/bench.py --peers-only

The result table goes to stdout and OUT/bench.json.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402
import corpus as corpusmod  # noqa: E402


def rss_mb(pid="self"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid):
    """User + system CPU seconds of process pid."""
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(parts[11]) + int(parts[12])) / tick


def timed_queries(run_one, queries, passes):
    """Runs every query passes times; returns (CPU s of this process, wall s, last pass's results)."""
    res = None
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(passes):
        res = [run_one(q) for q in queries]
    return time.process_time() - c0, time.perf_counter() - w0, res


def bench_bm25s(dtoks, qtoks, passes):
    import bm25s

    r0 = rss_mb()
    t0 = time.perf_counter()
    bm = bm25s.BM25(method="lucene", k1=check.K1, b=check.B)
    bm.index(dtoks, show_progress=False)
    build = time.perf_counter() - t0
    grow = rss_mb() - r0
    vocab = bm.vocab_dict

    def one(toks):
        ids = [vocab[t] for t in toks if t in vocab]
        if not ids:
            return []
        s = bm.get_scores_from_ids(ids)
        top = np.argpartition(-s, 10)[:10]
        top = top[np.argsort(-s[top], kind="stable")]
        return [int(d) for d in top if s[d] > 0]

    cpu, wall, res = timed_queries(one, qtoks, passes)
    return {"build_s": build, "rss_mb": grow, "cpu_s": cpu, "wall_s": wall}, res


def bench_tantivy(docs, dtoks, qtoks, passes):
    import tantivy

    r0 = rss_mb()
    d = tempfile.mkdtemp(prefix="tantivy-")
    try:
        sb = tantivy.SchemaBuilder()
        # The tokens are Strata's, joined by spaces: the whitespace tokenizer
        # gives tantivy exactly those terms.
        sb.add_text_field("text", stored=False, tokenizer_name="whitespace", index_option="freq")
        sb.add_unsigned_field("id", stored=True, indexed=False)
        schema = sb.build()
        t0 = time.perf_counter()
        index = tantivy.Index(schema, path=d)
        w = index.writer(heap_size=256_000_000, num_threads=1)
        for i, toks in enumerate(dtoks):
            w.add_document(tantivy.Document(id=i, text=" ".join(toks)))
        w.commit()
        w.wait_merging_threads()
        index.reload()
        build = time.perf_counter() - t0
        searcher = index.searcher()
        grow = rss_mb() - r0
        Q, S = tantivy.Query, tantivy.Occur.Should

        def one(toks):
            if not toks:
                return []
            q = Q.boolean_query([(S, Q.term_query(schema, "text", t)) for t in toks])
            return [a for _, a in searcher.search(q, 10, count=False).hits]  # top 10 only, no match count

        cpu, wall, res = timed_queries(one, qtoks, passes)
        # The floor: the same calls for a query whose one term no doc has
        # (Python-side query building, the binding's call, an empty search).
        absent = [["zzzznotaterm"]] * len(qtoks)
        floor_cpu, _, _ = timed_queries(one, absent, passes)
        # Doc addresses to ids, outside the timed loop.
        ids = [[searcher.doc(a)["id"][0] for a in r] for r in res]
        return {"build_s": build, "rss_mb": grow, "cpu_s": cpu, "wall_s": wall,
                "segments": searcher.num_segments, "floor_cpu_ms_per_query": 1000 * floor_cpu / (passes * len(qtoks))}, ids
    finally:
        shutil.rmtree(d, ignore_errors=True)


def bench_strata(server, client, docs, queries, passes):
    coll = "bm25bench"
    pid = server.proc.pid
    r0 = rss_mb(pid)
    check.make_collection(client, coll)
    t0 = time.perf_counter()
    check.insert(client, coll, docs, 0, len(docs))
    client.flush(coll)
    for _ in range(600):  # the index built (searches go through it)
        d = client.describe_index(coll, "sparse")
        if d.get("indexed_rows") == len(docs) and d.get("pending_index_rows", 0) == 0:
            break
        time.sleep(0.1)
    build = time.perf_counter() - t0
    grow = rss_mb(pid) - r0
    params = {"metric_type": "BM25", "params": {"drop_ratio_search": 0.0}}

    def one(q):
        r = client.search(coll, data=[q], anns_field="sparse", limit=10, search_params=params, output_fields=[])
        return [int(h["id"]) for h in r[0]]

    one(queries[0])
    s0 = cpu_s(pid)
    ccpu, wall, res = timed_queries(one, queries, passes)
    scpu = cpu_s(pid) - s0
    f0 = cpu_s(pid)
    timed_queries(one, ["zzzznotaterm"] * len(queries), passes)
    floor = 1000 * (cpu_s(pid) - f0) / (passes * len(queries))

    # The same queries 20 to a request (nq 20).
    res20 = []
    b0, c0, w0 = cpu_s(pid), time.process_time(), time.perf_counter()
    for _ in range(passes):
        res20 = []
        for i in range(0, len(queries), 20):
            r = client.search(coll, data=queries[i:i + 20], anns_field="sparse", limit=10, search_params=params,
                              output_fields=[])
            res20 += [[int(h["id"]) for h in hits] for hits in r]
    m20 = {"build_s": build, "rss_mb": grow, "cpu_s": cpu_s(pid) - b0, "client_cpu_s": time.process_time() - c0,
           "wall_s": time.perf_counter() - w0}
    client.drop_collection(coll)
    return ({"build_s": build, "rss_mb": grow, "cpu_s": scpu, "client_cpu_s": ccpu, "wall_s": wall,
             "floor_cpu_ms_per_query": floor}, res), (m20, res20)


def bench_inprocess(corpus_dir, workdir, passes):
    """Strata's sparse index in process (tools/bm25check/gobench)."""
    exe = os.path.join(workdir, "gobench")
    subprocess.run(["go", "build", "-o", exe, "./tools/bm25check/gobench"], cwd=check.ROOT, check=True)
    out = subprocess.run([exe, "-corpus", corpus_dir, "-passes", str(passes)], capture_output=True, text=True,
                         check=True).stdout
    d = json.loads(out)
    res = [[h["row"] for h in r or []] for r in d["results"]]
    return {"build_s": d["build_s"], "rss_mb": d["index_heap_mb"], "cpu_s": d["cpu_s"], "wall_s": d["wall_s"],
            "analyze_docs_s": d["analyze_docs_s"], "query_analyze_cpu_s": d["query_analyze_cpu_s"]}, res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="strata binary (started here on --port)")
    ap.add_argument("--port", type=int, default=19650)
    ap.add_argument("--mport", type=int, default=19651)
    ap.add_argument("--out", default="/tmp/bm25bench")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--peers-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cdir = os.path.join(a.out, "corpus")
    docs, queries = corpusmod.load(cdir, a.queries)
    dtoks = check.tokens_by_package(docs, a.out)
    qtoks = check.tokens_by_package(queries, a.out)
    nq = len(queries) * a.passes
    rows, results = {}, {}

    def overlap(res):
        tot = 0
        for toks, r in zip(qtoks, res):
            s = ref.scores(toks)
            want = set(int(d) for d in np.argsort(-s, kind="stable")[:10] if s[d] > 0)
            kth = min((s[d] for d in want), default=0)
            # a hit tied with the reference's 10th score counts as a match
            tot += sum(1 for d in r if d in want or abs(s[d] - kth) <= 1e-4 * kth) / max(1, len(want))
        return tot / len(res)

    rows["bm25s (numpy)"], results["bm25s (numpy)"] = bench_bm25s(dtoks, qtoks, a.passes)
    rows["tantivy"], results["tantivy"] = bench_tantivy(docs, dtoks, qtoks, a.passes)
    k = "strata in-process (index)"
    rows[k], results[k] = bench_inprocess(cdir, a.out, a.passes)
    if not a.peers_only:
        from pymilvus import MilvusClient

        data = os.path.join(a.out, "data")
        shutil.rmtree(data, ignore_errors=True)
        server = check.Server(a.bin, a.port, a.mport, data, os.path.join(a.out, "server.log"))
        server.start()
        try:
            client = MilvusClient(uri=f"http://127.0.0.1:{a.port}")
            one, twenty = bench_strata(server, client, docs, queries, a.passes)
            rows["strata (pymilvus, nq=1)"], results["strata (pymilvus, nq=1)"] = one
            rows["strata (pymilvus, nq=20)"], results["strata (pymilvus, nq=20)"] = twenty
            client.close()
        finally:
            server.stop()
    ref = check.Reference(dtoks)  # after the peers, so their RSS growth is theirs
    for k, res in results.items():
        rows[k]["top10_overlap"] = overlap(res)
    base = rows["tantivy"]
    print(f"{len(docs)} docs, {len(queries)} queries x {a.passes} passes = {nq} searches, top-10, one thread")
    print(f"{'engine':26s} {'build s':>8s} {'RSS MB':>7s} {'q/s/core':>9s} {'CPU ms/q':>9s} {'vs tantivy':>10s} {'top10 ovl':>9s}")
    for k, m in rows.items():
        m["qps_per_core"] = nq / m["cpu_s"] if m["cpu_s"] else float("nan")
        m["cpu_ms_per_query"] = 1000 * m["cpu_s"] / nq
        m["vs_tantivy"] = m["qps_per_core"] / (nq / base["cpu_s"])
        print(f"{k:26s} {m['build_s']:8.2f} {m['rss_mb']:7.0f} {m['qps_per_core']:9.0f} "
              f"{m['cpu_ms_per_query']:9.3f} {m['vs_tantivy']:9.2f}x {m['top10_overlap']:9.4f}")
    for k, m in rows.items():
        if "floor_cpu_ms_per_query" in m:
            print(f"{k} floor (a query of one term no doc has, same calls): {m['floor_cpu_ms_per_query']:.3f} CPU ms")
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump({"docs": len(docs), "queries": len(queries), "passes": a.passes, "rows": rows,
                   "maxrss_self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}, f, indent=1)


if __name__ == "__main__":
    main()
