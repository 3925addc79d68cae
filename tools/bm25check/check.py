"""Strata's BM25 full-text search against an independent BM25 (bm25s).

Corpus: the package descriptions `apt-cache dumpavail` prints (corpus.py), id
= the package's index; queries: 200 phrases derived from it deterministically.
Strata: a collection with a VarChar `text` field (enable_analyzer, the
standard analyzer), a BM25 function text -> `sparse`, SPARSE_INVERTED_INDEX
with metric BM25 (bm25_k1=1.2, bm25_b=0.75); searched with the raw query text.
Peer: bm25s, method "lucene" (idf ln(1+(N-df+0.5)/(df+0.5)), term part
tf/(tf+k1(1-b+b*dl/avgdl))), fed the same tokens as Strata: the server's
run_analyzer when it has it, else Strata's analyzer package run by
`go run ./tools/bm25check/tokens`. Each token is replaced by its Milvus hash
(CRC-32 of its first 100 bytes), since the BM25 function stores hashes, so two
tokens that collide are one term on both sides. bm25s's scores lack Milvus's
constant (k1+1) factor; the check multiplies them by it, and verifies the
formula itself on every reported hit with a direct computation.

Stages (each compares all queries' top-10 ids and scores, rel. 1e-4, ties at
the 10th score allowed either way):
  growing    collection A, all rows inserted, nothing flushed
  flushed    collection A after flush
  segments   collection B, rows inserted and flushed in 4 parts (4 segments)
  compacted  collection B after a compaction
  restarted  collection B after the server was stopped and started again
             (only when this script started the server: --bin)
  deleted    collection B after deleting every doc with id % 10 in 3, 6, 9; the
             reference is bm25s over the remaining docs (N, avgdl, df of the
             live rows, as Strata defines its statistics)
  deleted+compacted  the same after a manual compaction (the segments
             served, and their row counts, are in the report)

    python3 tools/bm25check/check.py --bin /tmp/strata --port 19650 --out /tmp/bm25check
    python3 tools/bm25check/check.py --uri http://127.0.0.1:19530   # a running server, no restart

Exit status 0 when every stage matches; the report (mismatches with their
detail) goes to stdout and OUT/report.json.
"""

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import zlib
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus as corpusmod  # noqa: E402

K1, B = 1.2, 0.75
TOPK = 10
REL = 1e-4
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def milvus_hash(token):
    """The sparse dimension Milvus's BM25 function gives a token."""
    return zlib.crc32(token.encode()[:100]) % (2**32 - 1)


class Server:
    """A strata standalone process over a data dir of its own."""

    def __init__(self, binary, port, mport, data, log):
        self.binary, self.port, self.mport, self.data, self.log = binary, port, mport, data, log
        self.proc = None

    def start(self):
        logf = open(self.log, "a")
        self.proc = subprocess.Popen(
            [self.binary, "standalone", "--data-dir", self.data, "--addr", f"127.0.0.1:{self.port}",
             "--metrics-addr", f"127.0.0.1:{self.mport}", "--log-level", "warn"],
            stdout=logf, stderr=logf)
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/healthz", timeout=1)
                return
            except Exception:
                if self.proc.poll() is not None:
                    raise SystemExit(f"server exited with {self.proc.returncode}; see {self.log}")
                time.sleep(0.1)
        raise SystemExit("server did not become healthy in 60 s")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def rss_mb(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except Exception:
            return None


def tokens_by_server(client, texts, coll, field):
    """Tokens of texts from the server's run_analyzer on coll's field, or
    None when the server has no run_analyzer."""
    out = []
    try:
        for i in range(0, len(texts), 1000):
            res = client.run_analyzer(texts[i:i + 1000], collection_name=coll, field_name=field)
            if not isinstance(res, list):
                res = [res]
            for r in res:
                toks = r.tokens if hasattr(r, "tokens") else r["tokens"]
                out.append([t if isinstance(t, str) else t["token"] for t in toks])
    except Exception as e:  # UNIMPLEMENTED or no such API: fall back
        print(f"run_analyzer unavailable ({str(e).splitlines()[0][:120]}); using tools/bm25check/tokens")
        return None
    return out


def tokens_by_package(texts, workdir):
    """Tokens of texts from Strata's analyzer package (the standard
    analyzer), through the tools/bm25check/tokens command."""
    exe = os.path.join(workdir, "tokens")
    subprocess.run(["go", "build", "-o", exe, "./tools/bm25check/tokens"], cwd=ROOT, check=True)
    inp = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    res = subprocess.run([exe], input=inp, capture_output=True, text=True, check=True)
    return [json.loads(l) for l in res.stdout.splitlines()]


class Reference:
    """bm25s over hashed tokens of the live docs (live: their ids, default
    all), plus a direct formula check. Scores are indexed by doc id; a doc
    that is not live scores 0."""

    def __init__(self, doc_tokens, live=None):
        import bm25s

        self.total = len(doc_tokens)
        self.ids = np.arange(self.total) if live is None else np.asarray(sorted(live))
        self.pos = {int(d): i for i, d in enumerate(self.ids)}
        self.docs = [[str(milvus_hash(t)) for t in doc_tokens[d]] for d in self.ids]
        self.vocab = {h for d in self.docs for h in d}
        t0 = time.perf_counter()
        self.bm = bm25s.BM25(method="lucene", k1=K1, b=B)
        self.bm.index(self.docs, show_progress=False)
        self.index_s = time.perf_counter() - t0
        self.n = len(self.docs)
        self.dl = np.array([len(d) for d in self.docs], dtype=np.float64)
        self.avgdl = float(self.dl.mean())
        self.df = Counter(h for d in self.docs for h in set(d))
        self.tf = [Counter(d) for d in self.docs]

    def scores(self, qtokens):
        """Every doc id's Milvus-scale score for a tokenized query."""
        out = np.zeros(self.total)
        q = [str(milvus_hash(t)) for t in qtokens]
        q = [h for h in q if h in self.vocab]
        if q:
            out[self.ids] = self.bm.get_scores(q).astype(np.float64) * (K1 + 1)
        return out

    def direct(self, qtokens, doc):
        """Milvus's BM25 score of doc (an id) for a tokenized query, computed
        from the definition: sum over query tokens (with repeats) of
        idf * tf*(k1+1)/(tf + k1*(1-b+b*dl/avgdl))."""
        p = self.pos.get(doc)
        if p is None:
            return 0.0
        s = 0.0
        for t in qtokens:
            h = str(milvus_hash(t))
            tf = self.tf[p].get(h, 0)
            if not tf:
                continue
            df = self.df[h]
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            s += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * self.dl[p] / self.avgdl))
        return s


def compare(ref, qtokens, queries, results):
    """Mismatches between Strata's results [[(id, score)]] and the reference."""
    bad = []
    for qi, (q, toks, hits) in enumerate(zip(queries, qtokens, results)):
        s = ref.scores(toks)
        order = np.argsort(-s, kind="stable")
        positive = int((s > 0).sum())
        want_n = min(TOPK, positive)
        kth = s[order[want_n - 1]] if want_n else 0.0
        why = []
        if len(hits) != want_n:
            why.append(f"{len(hits)} hits, reference has {want_n}")
        ids = [h[0] for h in hits]
        if len(set(ids)) != len(ids):
            why.append("duplicate ids")
        for pk, score in hits:
            r = s[pk] if 0 <= pk < ref.total else float("nan")
            if not abs(score - r) <= REL * max(abs(r), 1e-9):
                why.append(f"id {pk}: score {score:.6f}, reference {r:.6f} (direct {ref.direct(toks, pk):.6f})")
        # Every doc scoring clearly above the 10th score must be in the hits;
        # docs tied with it (within tolerance) may be swapped for each other.
        must = [int(d) for d in order[:want_n] if s[d] > kth * (1 + REL)]
        missing = [d for d in must if d not in set(ids)]
        if missing:
            why.append("missing " + ", ".join(f"{d} ({s[d]:.6f})" for d in missing[:5]))
        if hits and any(hits[i][1] < hits[i + 1][1] * (1 - REL) for i in range(len(hits) - 1)):
            why.append("hits not in descending score order")
        if why:
            bad.append({"query": qi, "text": q, "tokens": toks, "why": why,
                        "got": hits, "want": [(int(d), float(s[d])) for d in order[:want_n]]})
    return bad


def loaded_segments(uri, coll):
    """(segment id, rows) of the segments the query node serves for coll."""
    import warnings

    from pymilvus import connections, utility

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ORM API: MilvusClient has no segment listing
        connections.connect(alias="bm25check", uri=uri)
        try:
            return sorted((s.segmentID, s.num_rows) for s in utility.get_query_segment_info(coll, using="bm25check"))
        finally:
            connections.disconnect("bm25check")


def search_all(client, coll, queries):
    res = []
    for i in range(0, len(queries), 20):
        r = client.search(coll, data=queries[i:i + 20], anns_field="sparse", limit=TOPK,
                          search_params={"metric_type": "BM25", "params": {"drop_ratio_search": 0.0}},
                          output_fields=[], consistency_level="Strong")
        for hits in r:
            res.append([(int(h["id"]), float(h["distance"])) for h in hits])
    return res


def make_collection(client, name, k1=K1):
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    if client.has_collection(name):
        client.drop_collection(name)
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("text", DataType.VARCHAR, max_length=4096, enable_analyzer=True,
                     analyzer_params={"type": "standard"})
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                 input_field_names=["text"], output_field_names=["sparse"]))
    ip = client.prepare_index_params()
    ip.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                 params={"bm25_k1": k1, "bm25_b": B, "inverted_index_algo": "DAAT_MAXSCORE"})
    client.create_collection(name, schema=schema, index_params=ip, consistency_level="Strong")
    client.load_collection(name)


def insert(client, name, docs, lo, hi, batch=5000):
    for i in range(lo, hi, batch):
        j = min(hi, i + batch)
        client.insert(name, [{"id": k, "text": docs[k]} for k in range(i, j)])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", help="a running server (no restart stage)")
    ap.add_argument("--bin", help="strata binary: the script runs its own server")
    ap.add_argument("--port", type=int, default=19650)
    ap.add_argument("--mport", type=int, default=19651)
    ap.add_argument("--out", default="/tmp/bm25check")
    ap.add_argument("--corpus", default=None, help="corpus dir (default OUT/corpus)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--docs", type=int, default=0, help="use only the first N docs (0 = all)")
    ap.add_argument("--index-k1", type=float, default=K1,
                    help="bm25_k1 of Strata's index (the reference keeps 1.2): another value shows the check failing")
    a = ap.parse_args()
    from pymilvus import MilvusClient

    os.makedirs(a.out, exist_ok=True)
    docs, queries = corpusmod.load(a.corpus or os.path.join(a.out, "corpus"), a.queries)
    if a.docs:
        docs = docs[:a.docs]
    print(f"corpus: {len(docs)} docs (sha256 {corpusmod.digest(docs)}), {len(queries)} queries")

    server = None
    if a.bin:
        data = os.path.join(a.out, "data")
        shutil.rmtree(data, ignore_errors=True)
        server = Server(a.bin, a.port, a.mport, data, os.path.join(a.out, "server.log"))
        server.start()
        uri = f"http://127.0.0.1:{a.port}"
    else:
        uri = a.uri or "http://127.0.0.1:19530"
    report = {"corpus_docs": len(docs), "corpus_sha256": corpusmod.digest(docs), "queries": len(queries),
              "stages": {}}
    try:
        client = MilvusClient(uri=uri)
        make_collection(client, "bm25check_a", a.index_k1)
        t0 = time.perf_counter()
        insert(client, "bm25check_a", docs, 0, len(docs))
        report["insert_s"] = time.perf_counter() - t0

        tok_src = "run_analyzer"
        dtoks = tokens_by_server(client, docs, "bm25check_a", "text")
        qtoks = tokens_by_server(client, queries, "bm25check_a", "text") if dtoks is not None else None
        pkg_d = tokens_by_package(docs, a.out)
        pkg_q = tokens_by_package(queries, a.out)
        if dtoks is None:
            tok_src, dtoks, qtoks = "internal/analyzer (tools/bm25check/tokens)", pkg_d, pkg_q
        else:
            diff = sum(x != y for x, y in zip(dtoks + qtoks, pkg_d + pkg_q))
            report["run_analyzer_vs_package_diffs"] = diff
            print(f"run_analyzer vs internal/analyzer: {diff} of {len(dtoks) + len(qtoks)} texts differ")
        report["tokens_from"] = tok_src
        vocab = {t for d in dtoks for t in d}
        hashes = Counter(milvus_hash(t) for t in vocab)
        report["vocab"] = len(vocab)
        report["hash_collisions"] = sum(c - 1 for c in hashes.values() if c > 1)
        print(f"tokens from {tok_src}: vocab {len(vocab)}, {report['hash_collisions']} hash collisions")

        ref = Reference(dtoks)
        report["bm25s_index_s"] = ref.index_s

        def stage(label, coll):
            segs = loaded_segments(uri, coll)
            t = time.perf_counter()
            res = search_all(client, coll, queries)
            dt = time.perf_counter() - t
            bad = compare(ref, qtoks, queries, res)
            report["stages"][label] = {"mismatched_queries": len(bad), "search_s": dt, "segments": segs,
                                       "mismatches": bad[:20]}
            print(f"{label:17s} {len(queries) - len(bad)}/{len(queries)} queries match ({dt:.1f} s; "
                  f"{len(segs)} segments: {', '.join(str(r) for _, r in segs)} rows)")
            for m in bad[:5]:
                print(f"   q{m['query']} {m['text']!r}: " + "; ".join(m["why"][:3]))

        stage("growing", "bm25check_a")
        client.flush("bm25check_a")
        stage("flushed", "bm25check_a")
        client.drop_collection("bm25check_a")

        make_collection(client, "bm25check_b", a.index_k1)
        parts = [len(docs) * k // 4 for k in range(5)]
        for k in range(4):
            insert(client, "bm25check_b", docs, parts[k], parts[k + 1])
            client.flush("bm25check_b")
        stage("segments", "bm25check_b")
        job = client.compact("bm25check_b")
        for _ in range(600):
            st = client.get_compaction_state(job)
            if str(st).lower().endswith("completed"):
                break
            time.sleep(0.5)
        report["compaction_state"] = str(st)
        before = len(loaded_segments(uri, "bm25check_b"))
        for _ in range(120 if before > 1 else 0):  # until the query node serves the compacted segment
            if len(loaded_segments(uri, "bm25check_b")) < before:
                break
            time.sleep(0.5)
        stage("compacted", "bm25check_b")
        if server:
            report["rss_mb_before_restart"] = server.rss_mb()
            client.close()
            server.stop()
            server.start()
            client = MilvusClient(uri=uri)
            client.load_collection("bm25check_b")
            stage("restarted", "bm25check_b")

        # Deletes: statistics and scores over the live documents only.
        gone = [i for i in range(len(docs)) if i % 10 in (3, 6, 9)]
        for i in range(0, len(gone), 5000):
            client.delete("bm25check_b", ids=gone[i:i + 5000])
        live = sorted(set(range(len(docs))) - set(gone))
        ref = Reference(dtoks, live)
        stage("deleted", "bm25check_b")
        job = client.compact("bm25check_b")
        for _ in range(600):
            st = client.get_compaction_state(job)
            if str(st).lower().endswith("completed"):
                break
            time.sleep(0.5)
        for _ in range(20):  # a while for the query node to serve segments without the deleted rows
            if sum(r for _, r in loaded_segments(uri, "bm25check_b")) == len(live):
                break
            time.sleep(0.5)
        stage("deleted+compacted", "bm25check_b")
        client.close()
    finally:
        if server:
            server.stop()
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    bad = sum(s["mismatched_queries"] for s in report["stages"].values())
    print(f"{'OK' if not bad else 'MISMATCH'}: report in {os.path.join(a.out, 'report.json')}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
