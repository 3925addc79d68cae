"""The BM25 check's corpus and queries, from the package descriptions that
`apt-cache dumpavail` prints on this machine.

Document i is the short Description of the i-th stanza (in dumpavail's order)
that has one; its id is i. Queries are derived deterministically from the
corpus: the first 3 to 7 words of the descriptions of docs picked by a seeded
generator (natural-language phrases such as "library for parsing XML files").

    python3 tools/bm25check/corpus.py --out /tmp/bm25corpus   # corpus.jsonl, queries.jsonl
"""

import argparse
import hashlib
import json
import os
import random
import subprocess


def dumpavail_descriptions(text):
    """The Description line of each stanza of text (apt-cache dumpavail's
    output), in order; stanzas without one are skipped."""
    docs = []
    for stanza in text.split("\n\n"):
        for line in stanza.split("\n"):
            if line.startswith("Description: "):
                d = line[len("Description: "):].strip()
                if d:
                    docs.append(d)
                break
    return docs


def make_queries(docs, n, seed=12):
    """n queries: the first 3..7 words of the descriptions of docs chosen
    with a seeded generator (distinct query strings)."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        words = docs[rng.randrange(len(docs))].split()
        q = " ".join(words[: rng.randint(3, 7)])
        if len(words) >= 3 and q not in seen:
            seen.add(q)
            out.append(q)
    return out


def load(out_dir, n_queries=200):
    """Writes (if missing) and reads out_dir/corpus.jsonl and queries.jsonl;
    returns (docs, queries)."""
    os.makedirs(out_dir, exist_ok=True)
    cpath = os.path.join(out_dir, "corpus.jsonl")
    qpath = os.path.join(out_dir, "queries.jsonl")
    if not os.path.exists(cpath):
        text = subprocess.run(["apt-cache", "dumpavail"], check=True, capture_output=True, text=True).stdout
        docs = dumpavail_descriptions(text)
        with open(cpath + ".tmp", "w") as f:
            for i, d in enumerate(docs):
                f.write(json.dumps({"id": i, "text": d}) + "\n")
        os.replace(cpath + ".tmp", cpath)
    with open(cpath) as f:
        docs = [json.loads(l)["text"] for l in f]
    if not os.path.exists(qpath):
        with open(qpath, "w") as f:
            for q in make_queries(docs, n_queries):
                f.write(json.dumps({"text": q}) + "\n")
    with open(qpath) as f:
        queries = [json.loads(l)["text"] for l in f][:n_queries]
    return docs, queries


def digest(docs):
    """A short sha256 of the corpus, to tell two runs' corpora apart."""
    h = hashlib.sha256()
    for d in docs:
        h.update(d.encode() + b"\n")
    return h.hexdigest()[:16]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/bm25corpus")
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    docs, queries = load(a.out, a.queries)
    print(f"{len(docs)} docs (sha256 {digest(docs)}), {len(queries)} queries in {a.out}")
    for q in queries[:5]:
        print("  e.g.", q)
