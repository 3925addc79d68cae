"""What the framework tests expect, computed here independently of the
server: Milvus's BM25 scores over the standard analyzer's tokens, and a
deterministic fake dense embedding."""

import hashlib
import math
import re
import struct

K1, B = 1.2, 0.75
DIM = 8


def tokens(text):
    """The standard analyzer's tokens of an ASCII text: runs of letters and
    digits, lowercased."""
    return re.findall(r"[^\W_]+", text.lower())


def bm25(docs, query, k1=K1, b=B):
    """Milvus's BM25 score of each doc for query: the sum over the query's
    tokens (with repeats) of ln(1+(N-df+0.5)/(df+0.5)) *
    tf*(k1+1)/(tf+k1*(1-b+b*dl/avgdl)), statistics over docs."""
    toks = [tokens(d) for d in docs]
    n = len(docs)
    avgdl = sum(len(t) for t in toks) / n
    out = []
    for t in toks:
        s = 0.0
        for q in tokens(query):
            tf = t.count(q)
            if tf:
                df = sum(q in u for u in toks)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avgdl))
        out.append(s)
    return out


def embed(text):
    """A fake, deterministic dense embedding: DIM floats in [-1, 1) from the
    sha256 of the text (unrelated to its meaning, so any dense ranking is
    arbitrary but fixed)."""
    h = hashlib.sha256(text.encode()).digest()
    return [v / 2**31 for v in struct.unpack(f"<{DIM}i", h[: 4 * DIM])]


def l2(a, b):
    return sum((x - y) ** 2 for x, y in zip(a, b))


def ip(a, b):
    return sum(x * y for x, y in zip(a, b))


def rrf(rankings, k=60):
    """RRF fusion of ranked id lists: {id: sum of 1/(k+rank)}."""
    out = {}
    for r in rankings:
        for i, d in enumerate(r, 1):
            out[d] = out.get(d, 0.0) + 1.0 / (k + i)
    return out


DOCS = [
    "Milvus is an open-source vector database built for scalable similarity search",
    "Strata speaks the Milvus wire protocol and keeps its segments on local disk",
    "The zebra is an African equine with distinctive black and white stripes",
    "A zebra crossing is a pedestrian crossing marked with white stripes",
    "Bananas are rich in potassium and grow in tropical climates",
    "Full text search ranks documents by BM25 relevance to the query terms",
    "Postgres is a relational database with a rich extension ecosystem",
    "The lazy dog sleeps while the quick brown fox jumps over it",
    "Zebra finches are small birds that sing complex songs",
    "Horses and donkeys are domesticated equine animals",
]
