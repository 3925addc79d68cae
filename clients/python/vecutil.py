"""Helpers for the vector-type suites: brute-force scoring with numpy and
checks of search results against it."""

import time

import numpy as np
from pymilvus import MilvusClient


def popcount(a):
    """Set bits per row of a uint8 array (..., nbytes)."""
    return np.unpackbits(a, axis=-1).sum(axis=-1)


def hamming(base, q):
    return popcount(np.bitwise_xor(base, q)).astype(np.float64)


def jaccard(base, q):
    inter = popcount(np.bitwise_and(base, q)).astype(np.float64)
    union = popcount(np.bitwise_or(base, q)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = 1.0 - inter / union
    return np.where(union == 0, 0.0, d)


def l2(base, q):
    diff = base.astype(np.float64) - np.asarray(q, dtype=np.float64)
    return (diff * diff).sum(axis=1)  # Milvus reports squared L2


def ip(base, q):
    return base.astype(np.float64) @ np.asarray(q, dtype=np.float64)


def cosine(base, q):
    b = base.astype(np.float64)
    qq = np.asarray(q, dtype=np.float64)
    return (b @ qq) / (np.linalg.norm(b, axis=1) * np.linalg.norm(qq))


def sparse_dot(rows, q):
    """Inner products of dict rows {index: value} with the dict q."""
    return np.array([sum(v * q.get(k, 0.0) for k, v in r.items()) for r in rows], dtype=np.float64)


# Whether a bigger score is better, per metric.
LARGER_IS_BETTER = {"IP": True, "COSINE": True, "L2": False, "HAMMING": False, "JACCARD": False}


def hit_id(h):
    """The primary key of a hit: pymilvus keys it by the pk field's name (Hit.id)."""
    return h.id if hasattr(type(h), "id") else h["id"]


def check_hits(hits, ids, scores, metric, k, rel=1e-3, abs_=1e-4, min_recall=1.0, positive_only=False):
    """Checks one query's hits against brute-force scores of every row.

    Every hit's distance must equal the brute-force score of its id; the
    returned distances must be sorted best first; and the share of the true
    top-k distances reached (recall, counted on distances so that ties do not
    matter) must be at least min_recall. Returns that recall."""
    by_id = dict(zip(ids, scores))
    larger = LARGER_IS_BETTER[metric]
    got = [h["distance"] for h in hits]
    for h in hits:
        want = by_id[hit_id(h)]
        assert abs(h["distance"] - want) <= abs_ + rel * abs(want), (h, want)
    assert got == sorted(got, reverse=larger), got
    order = np.argsort(-scores if larger else scores, kind="stable")
    cand = [scores[i] for i in order if not positive_only or scores[i] > 0][:k]
    assert len(hits) == len(cand), (len(hits), len(cand))
    if not cand:
        return 1.0
    kth = cand[-1]
    tol = abs_ + rel * abs(kth)
    reached = sum(1 for d in got if (d >= kth - tol if larger else d <= kth + tol))
    recall = reached / len(cand)
    assert recall >= min_recall, (recall, got, cand)
    return recall


def wait_indexed(client: MilvusClient, name, index_name, rows, attempts=300):
    """Polls describe_index until `rows` rows are indexed (bounded, ~60 s)."""
    info = None
    for _ in range(attempts):
        info = client.describe_index(name, index_name=index_name)
        if info["indexed_rows"] >= rows and info["pending_index_rows"] == 0 and info["state"] == "Finished":
            return info
        time.sleep(0.2)
    raise AssertionError(f"index {index_name} of {name} not built: {info}")
