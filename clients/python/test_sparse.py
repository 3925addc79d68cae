"""Sparse float vectors through pymilvus MilvusClient as the Milvus docs show
them: rows as {index: value} dicts and as scipy CSR rows, SPARSE_INVERTED_INDEX
and SPARSE_WAND under IP, drop_ratio_build / drop_ratio_search; results are
checked against brute-force inner products computed here."""

import numpy as np
import pytest
from pymilvus import DataType, MilvusClient, MilvusException
from scipy.sparse import csr_matrix

from vecutil import check_hits, sparse_dot, wait_indexed

N = 500
VOCAB = 2000


def sparse_rows(n, seed, nnz=(5, 40)):
    """n dict rows over VOCAB dimensions; a few popular dimensions make posting lists uneven."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        k = int(rng.integers(*nnz))
        popular = rng.choice(50, size=k // 3, replace=False)
        rest = rng.choice(VOCAB, size=k - k // 3, replace=False)
        idx = sorted(set(int(i) for i in np.concatenate([popular, rest])))
        vals = rng.random(len(idx)).astype(np.float32) + np.float32(0.01)
        rows.append({i: float(v) for i, v in zip(idx, vals)})
    return rows


def to_csr(rows):
    data, indices, indptr = [], [], [0]
    for r in rows:
        for k in sorted(r):
            indices.append(k)
            data.append(r[k])
        indptr.append(len(indices))
    return csr_matrix((np.array(data, dtype=np.float32), np.array(indices), np.array(indptr)),
                      shape=(len(rows), VOCAB))


def f32(row):
    return {k: float(np.float32(v)) for k, v in row.items()}


def create(client, name, index_type, params=None):
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=True)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("sparse_vector", DataType.SPARSE_FLOAT_VECTOR)
    ip = client.prepare_index_params()
    ip.add_index(field_name="sparse_vector", index_name="sparse_idx", index_type=index_type, metric_type="IP",
                 params=params or {})
    client.create_collection(name, schema=schema, index_params=ip)


@pytest.mark.parametrize("index_type,build", [
    ("SPARSE_INVERTED_INDEX", {"inverted_index_algo": "DAAT_MAXSCORE"}),
    ("SPARSE_WAND", {"drop_ratio_build": 0.0}),
    ("SPARSE_INVERTED_INDEX", {"drop_ratio_build": 0.2}),
])
def test_sparse_vectors(client: MilvusClient, name, index_type, build):
    create(client, name, index_type, build)
    rows = sparse_rows(N, seed=21)
    base = [f32(r) for r in rows]
    csr = to_csr(rows)
    # The first half as dicts, the second as scipy CSR rows (1×VOCAB matrices).
    data = [{"pk": i, "sparse_vector": rows[i] if i < N // 2 else csr[i], "g": i % 4} for i in range(N)]
    assert client.insert(name, data[:300])["insert_count"] == 300
    client.flush(name)
    client.insert(name, data[300:])  # stays growing
    info = wait_indexed(client, name, "sparse_idx", 300)
    assert info["index_type"] == index_type and info["metric_type"] == "IP"

    got = client.get(name, ids=[0, 299, 499], output_fields=["sparse_vector", "g"])
    assert sorted(r["pk"] for r in got) == [0, 299, 499]
    for r in got:
        assert r["sparse_vector"] == base[r["pk"]]
    q = client.query(name, filter="g == 2 and pk > 450", output_fields=["sparse_vector"], consistency_level="Strong")
    assert sorted(r["pk"] for r in q) == [i for i in range(451, N) if i % 4 == 2]
    assert all(r["sparse_vector"] == base[r["pk"]] for r in q)

    queries = [rows[10], rows[420], sparse_rows(1, seed=77)[0], {3: 0.7, 17: 0.2, VOCAB - 1: 1.0}]
    ids = list(range(N))
    exact = build.get("drop_ratio_build", 0) == 0
    for drop in (0.0, 0.3):
        hits = client.search(name, data=queries, anns_field="sparse_vector", limit=10,
                             search_params={"metric_type": "IP", "params": {"drop_ratio_search": drop}},
                             output_fields=["g"], consistency_level="Strong")
        assert len(hits) == len(queries)
        for qq, hs in zip(queries, hits):
            # Only rows sharing a dimension with the query score > 0 and are hits.
            check_hits(hs, ids, sparse_dot(base, f32(qq)), "IP", 10, rel=1e-5, abs_=1e-6,
                       min_recall=1.0 if exact and drop == 0 else 0.7, positive_only=True)
            assert all(h["entity"]["g"] == h.id % 4 for h in hs)
    # Searching with scipy rows as the query vectors.
    hits = client.search(name, data=[csr[10], csr[420]], limit=5, consistency_level="Strong")
    assert hits[0][0].id == 10 and hits[1][0].id == 420
    # Filtered search.
    hits = client.search(name, data=[queries[2]], limit=5, filter="g == 1", consistency_level="Strong",
                         search_params={"params": {"drop_ratio_search": 0.0}})
    sub = [i for i in range(N) if i % 4 == 1]
    check_hits(hits[0], sub, sparse_dot([base[i] for i in sub], f32(queries[2])), "IP", 5, rel=1e-5, abs_=1e-6,
               min_recall=1.0 if exact else 0.6, positive_only=True)

    # Deletes and upserts are seen by the index path.
    client.delete(name, ids=[10])
    client.upsert(name, [{"pk": 420, "sparse_vector": {5: 1.0}, "g": 0}])
    hits = client.search(name, data=[rows[10], {5: 2.0}], limit=3, consistency_level="Strong")
    assert 10 not in [h.id for h in hits[0]]
    assert hits[1][0].id == 420 and hits[1][0].distance == pytest.approx(2.0)
    client.drop_collection(name)


def test_sparse_bad_input(client: MilvusClient, name):
    create(client, name, "SPARSE_INVERTED_INDEX")
    client.insert(name, [{"pk": 1, "sparse_vector": {1: 0.5}}])
    # pymilvus itself refuses NaN values and indices >= 2^32-1; negative values reach the server.
    with pytest.raises(MilvusException) as e:
        client.insert(name, [{"pk": 2, "sparse_vector": {1: -0.5}}])
    assert e.value.code == 1100 and "sparse_vector" in e.value.message
    with pytest.raises(MilvusException) as e:
        client.search(name, data=[{1: 1.0}], limit=3, search_params={"metric_type": "L2"})
    assert e.value.code == 1100
    for drop in (1.0, -0.1):
        with pytest.raises(MilvusException) as e:
            client.search(name, data=[{1: 1.0}], limit=3, search_params={"params": {"drop_ratio_search": drop}})
        assert e.value.code == 1100 and "drop_ratio_search" in e.value.message
    with pytest.raises(MilvusException) as e:  # dense query vectors on a sparse field
        client.search(name, data=[[0.1, 0.2]], limit=3)
    assert e.value.code == 1100

    client.release_collection(name)
    client.drop_index(name, "sparse_idx")
    for index_type, metric, params in (("SPARSE_WAND", "L2", {}), ("HNSW", "IP", {"M": 8, "efConstruction": 32}),
                                       ("SPARSE_INVERTED_INDEX", "IP", {"drop_ratio_build": 1.5}),
                                       ("SPARSE_INVERTED_INDEX", "IP", {"inverted_index_algo": "NOPE"})):
        ip = client.prepare_index_params()
        ip.add_index(field_name="sparse_vector", index_type=index_type, metric_type=metric, params=params)
        with pytest.raises(MilvusException) as e:
            client.create_index(name, ip)
        assert e.value.code == 1100, (index_type, metric, params)
    with pytest.raises(MilvusException) as e:  # a sparse field takes no dim
        s = MilvusClient.create_schema(auto_id=False)
        s.add_field("pk", DataType.INT64, is_primary=True)
        s.add_field("sv", DataType.SPARSE_FLOAT_VECTOR, dim=8)
        client.create_collection(name + "_dim", schema=s)
    assert e.value.code == 1100
    client.drop_collection(name)
