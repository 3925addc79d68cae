"""hybrid_search over a dense and a sparse field (the Milvus docs' multi-vector
flow) with RRFRanker and WeightedRanker; the fused results are checked against
a fusion of brute-force sub-search results computed here."""

import math

import numpy as np
import pytest
from pymilvus import AnnSearchRequest, DataType, MilvusClient, MilvusException, RRFRanker, WeightedRanker

from vecutil import check_hits, l2, sparse_dot

N = 300
DIM = 8
L = 20  # limit of each sub-search


def make(client, name):
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, max_length=8, is_primary=True)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("g", DataType.INT64)
    params = client.prepare_index_params()
    params.add_index(field_name="dense", index_type="FLAT", metric_type="L2")
    params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
    client.create_collection(name, schema=schema, index_params=params)
    rng = np.random.default_rng(4)
    dense = rng.normal(size=(N, DIM)).astype(np.float32)
    sparse = []
    for _ in range(N):
        idx = sorted(set(int(i) for i in rng.choice(60, size=6, replace=False)))
        sparse.append({i: float(np.float32(v)) for i, v in zip(idx, rng.random(len(idx)) + 0.05)})
    rows = [{"pk": f"p{i}", "dense": dense[i].tolist(), "sparse": sparse[i], "g": i % 3} for i in range(N)]
    client.insert(name, rows[:200])
    client.flush(name)
    client.insert(name, rows[200:])
    return dense, sparse


def top(scores, k, larger, allowed=None):
    """Indices of the k best rows (stable)."""
    idx = [i for i in range(len(scores)) if allowed is None or allowed(i)]
    idx.sort(key=lambda i: -scores[i] if larger else scores[i])
    return [i for i in idx if not larger or scores[i] > 0][:k]


def fuse(lists, strategy, k=60, weights=None, norm=True):
    """lists: [(metric, [(row, score), ...])] -> {row: fused score}."""
    metrics = {m for m, _ in lists}
    mixed = "L2" in metrics and metrics & {"IP", "COSINE"}
    out = {}
    for i, (metric, hits) in enumerate(lists):
        for rank, (row, s) in enumerate(hits, 1):
            if strategy == "rrf":
                v = 1 / (k + rank)
            else:
                if norm or (mixed and metric == "L2"):
                    v = 1 - 2 * math.atan(s) / math.pi if metric == "L2" else 0.5 + math.atan(s) / math.pi
                else:
                    v = s
                v *= weights[i]
            out[row] = out.get(row, 0.0) + v
    return out


def test_hybrid_search(client: MilvusClient, name):
    dense, sparse = make(client, name)
    ids = [f"p{i}" for i in range(N)]
    qd = [dense[7] + 0.1, np.full(DIM, 0.2, dtype=np.float32)]
    qs = [sparse[7], {1: 0.5, 2: 0.5, 30: 1.0}]
    dist = [l2(dense, q) for q in qd]
    dots = [sparse_dot(sparse, q) for q in qs]

    def sub_lists(q, filt=None):
        allowed = (lambda i: i % 3 == 1) if filt else None
        return [("L2", [(i, dist[q][i]) for i in top(dist[q], L, False, allowed)]),
                ("IP", [(i, dots[q][i]) for i in top(dots[q], L, True, allowed)])]

    cases = [
        (RRFRanker(), dict(strategy="rrf")),
        (RRFRanker(10), dict(strategy="rrf", k=10)),
        (WeightedRanker(0.3, 0.7), dict(strategy="weighted", weights=[0.3, 0.7])),
        (WeightedRanker(0.6, 0.4, norm_score=False), dict(strategy="weighted", weights=[0.6, 0.4], norm=False)),
    ]
    for filt in (None, "g == 1"):
        reqs = [AnnSearchRequest(data=[v.tolist() for v in qd], anns_field="dense", param={"metric_type": "L2"},
                                 limit=L, expr=filt),
                AnnSearchRequest(data=qs, anns_field="sparse", param={"metric_type": "IP"}, limit=L, expr=filt)]
        for ranker, spec in cases:
            res = client.hybrid_search(name, reqs, ranker, limit=10, output_fields=["g", "dense"],
                                       consistency_level="Strong")
            assert len(res) == 2
            for q, hits in enumerate(res):
                fused = fuse(sub_lists(q, filt), **spec)
                scores = np.array([fused.get(i, 0.0) for i in range(N)])
                check_hits(hits, ids, scores, "IP", 10, rel=1e-5, abs_=1e-6, positive_only=True)
                for h in hits:
                    i = int(h.id[1:])
                    assert h["entity"]["g"] == i % 3
                    assert h["entity"]["dense"] == pytest.approx(dense[i].tolist())
                    if filt:
                        assert i % 3 == 1

    # offset pages through the fused list; round_decimal rounds the scores.
    reqs = [AnnSearchRequest(data=[qd[0].tolist()], anns_field="dense", param={}, limit=L),
            AnnSearchRequest(data=[qs[0]], anns_field="sparse", param={}, limit=L)]
    full = client.hybrid_search(name, reqs, RRFRanker(), limit=10, consistency_level="Strong")[0]
    page = client.hybrid_search(name, reqs, RRFRanker(), limit=5, offset=5, consistency_level="Strong")[0]
    assert [h.id for h in page] == [h.id for h in full[5:10]]
    rounded = client.hybrid_search(name, reqs, RRFRanker(), limit=3, round_decimal=2, consistency_level="Strong")[0]
    assert all(h.distance == round(h.distance, 2) for h in rounded)

    with pytest.raises(MilvusException) as e:  # 3 weights for 2 sub-searches
        client.hybrid_search(name, reqs, WeightedRanker(0.2, 0.3, 0.5), limit=3)
    assert e.value.code == 1100
    with pytest.raises(MilvusException) as e:
        client.hybrid_search(name, reqs, WeightedRanker(0.2, 1.5), limit=3)
    assert e.value.code == 1100
    with pytest.raises(MilvusException) as e:  # nq 2 and nq 1
        client.hybrid_search(name, [AnnSearchRequest(data=[v.tolist() for v in qd], anns_field="dense", param={},
                                                     limit=L), reqs[1]], RRFRanker(), limit=3)
    assert e.value.code == 1100
    with pytest.raises(MilvusException) as e:  # a sub-search error is the hybrid search's error
        client.hybrid_search(name, [reqs[0], AnnSearchRequest(data=[qs[0]], anns_field="sparse",
                                                               param={"metric_type": "L2"}, limit=L)],
                             RRFRanker(), limit=3)
    assert e.value.code == 1100
    # group_by_field groups the fused hits: limit groups, group_size hits each, best group first.
    grouped = client.hybrid_search(name, reqs, RRFRanker(), limit=2, group_by_field="g", group_size=2,
                                   output_fields=["g"], consistency_level="Strong")[0]
    groups = [h["entity"]["g"] for h in grouped]
    assert len(grouped) == 4 and groups[0] == groups[1] and groups[2] == groups[3] and groups[0] != groups[2]
    client.drop_collection(name)
