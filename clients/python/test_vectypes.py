"""Binary, float16, bfloat16 and int8 vectors through pymilvus MilvusClient,
the way the Milvus docs show them: bytes / numpy packbits for binary vectors,
numpy float16, ml_dtypes bfloat16 and numpy int8 arrays; search results are
checked against brute force computed here."""

import ml_dtypes
import numpy as np
import pytest
from pymilvus import DataType, MilvusClient, MilvusException

from vecutil import check_hits, cosine, hamming, ip, jaccard, l2, wait_indexed

BIN_DIM = 128
N = 600


def binary_rows(n, dim, seed):
    """n packed binary vectors clustered around 8 centres (so that distances spread)."""
    rng = np.random.default_rng(seed)
    centres = rng.integers(0, 2, size=(8, dim), dtype=np.uint8)
    bits = centres[rng.integers(0, 8, size=n)]
    flip = rng.random((n, dim)) < 0.15
    return np.packbits(np.where(flip, 1 - bits, bits), axis=-1)


def bin_hits_check(hits, base, queries, metric, k, min_recall=1.0):
    f = hamming if metric == "HAMMING" else jaccard
    for q, hs in zip(queries, hits):
        check_hits(hs, list(range(len(base))), f(base, q), metric, k, rel=1e-5, abs_=1e-6, min_recall=min_recall)


def test_binary_vectors(client: MilvusClient, name):
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=True)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("binary_vector", DataType.BINARY_VECTOR, dim=BIN_DIM)
    params = client.prepare_index_params()
    params.add_index(field_name="binary_vector", index_name="bv", index_type="BIN_FLAT", metric_type="HAMMING")
    client.create_collection(name, schema=schema, index_params=params)

    base = binary_rows(N, BIN_DIM, seed=7)
    # Half as bytes (the docs' packbits(...).tobytes()), half as numpy uint8 arrays.
    data = [{"pk": i, "binary_vector": base[i].tobytes() if i % 2 == 0 else base[i], "tag": i % 5}
            for i in range(N)]
    assert client.insert(name, data[: N // 2])["insert_count"] == N // 2
    client.flush(name)
    assert client.insert(name, data[N // 2:])["insert_count"] == N - N // 2  # growing

    got = client.get(name, ids=[0, 1, N - 1], output_fields=["binary_vector", "tag"])
    assert sorted(r["pk"] for r in got) == [0, 1, N - 1]
    for r in got:
        assert r["binary_vector"] == [base[r["pk"]].tobytes()]
        assert r["tag"] == r["pk"] % 5
    rows = client.query(name, filter="tag == 3", output_fields=["binary_vector"], consistency_level="Strong")
    assert sorted(r["pk"] for r in rows) == [i for i in range(N) if i % 5 == 3]
    assert all(r["binary_vector"] == [base[r["pk"]].tobytes()] for r in rows)

    queries = [base[3], base[400], binary_rows(1, BIN_DIM, seed=99)[0]]
    qbytes = [q.tobytes() for q in queries]
    hits = client.search(name, data=qbytes, anns_field="binary_vector", limit=10,
                         search_params={"metric_type": "HAMMING"}, output_fields=["binary_vector"],
                         consistency_level="Strong")
    bin_hits_check(hits, base, queries, "HAMMING", 10)
    assert hits[0][0].id == 3 and hits[0][0]["distance"] == 0
    assert hits[0][0]["entity"]["binary_vector"] == base[3].tobytes()

    # Filtered search: only rows with tag 1.
    hits = client.search(name, data=qbytes[:1], limit=5, filter="tag == 1", search_params={"metric_type": "HAMMING"},
                         consistency_level="Strong")
    sub = [i for i in range(N) if i % 5 == 1]
    check_hits(hits[0], sub, hamming(base[sub], queries[0]), "HAMMING", 5, rel=0, abs_=1e-6)

    # BIN_IVF_FLAT with HAMMING, built on the flushed segments; nprobe = nlist is exact.
    client.release_collection(name)
    client.drop_index(name, "bv")
    params = client.prepare_index_params()
    params.add_index(field_name="binary_vector", index_name="bv", index_type="BIN_IVF_FLAT", metric_type="HAMMING",
                     params={"nlist": 16})
    client.create_index(name, params)
    client.flush(name)
    info = wait_indexed(client, name, "bv", N)
    assert info["index_type"] == "BIN_IVF_FLAT" and info["metric_type"] == "HAMMING" and info["nlist"] == "16"
    assert info["total_rows"] == N
    client.load_collection(name)
    hits = client.search(name, data=qbytes, limit=10, search_params={"metric_type": "HAMMING", "params": {"nprobe": 16}},
                         consistency_level="Strong")
    bin_hits_check(hits, base, queries, "HAMMING", 10)
    hits = client.search(name, data=qbytes, limit=10, search_params={"params": {"nprobe": 4}},
                         consistency_level="Strong")
    bin_hits_check(hits, base, queries, "HAMMING", 10, min_recall=0.5)

    # JACCARD, exact (BIN_FLAT) and with BIN_IVF_FLAT.
    for index_type, extra in (("BIN_FLAT", {}), ("BIN_IVF_FLAT", {"nlist": 8})):
        client.release_collection(name)
        client.drop_index(name, "bv")
        params = client.prepare_index_params()
        params.add_index(field_name="binary_vector", index_name="bv", index_type=index_type, metric_type="JACCARD",
                         params=extra)
        client.create_index(name, params)
        wait_indexed(client, name, "bv", N)
        client.load_collection(name)
        hits = client.search(name, data=qbytes, limit=10,
                             search_params={"metric_type": "JACCARD", "params": {"nprobe": 8}},
                             consistency_level="Strong")
        bin_hits_check(hits, base, queries, "JACCARD", 10)
        with pytest.raises(MilvusException) as e:
            client.search(name, data=qbytes, limit=10, search_params={"metric_type": "HAMMING"})
        assert e.value.code == 1100
    client.drop_collection(name)


def test_binary_bad_input(client: MilvusClient, name):
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("bv", DataType.BINARY_VECTOR, dim=32)
    client.create_collection(name, schema=schema)
    with pytest.raises(MilvusException) as e:  # 2 bytes for a dim of 32 (4 bytes)
        client.insert(name, [{"pk": 1, "bv": b"\x01\x02"}])
    assert e.value.code == 1100 and "bv" in e.value.message
    params = client.prepare_index_params()
    params.add_index(field_name="bv", index_type="BIN_FLAT", metric_type="L2")
    with pytest.raises(MilvusException) as e:
        client.create_index(name, params)
    assert e.value.code == 1100 and "L2" in e.value.message
    params = client.prepare_index_params()
    params.add_index(field_name="bv", index_type="HNSW", metric_type="HAMMING")
    with pytest.raises(MilvusException) as e:
        client.create_index(name, params)
    assert e.value.code == 1100 and "HNSW" in e.value.message
    with pytest.raises(MilvusException) as e:  # BIN_DIM not a multiple of 8
        s = MilvusClient.create_schema(auto_id=False)
        s.add_field("pk", DataType.INT64, is_primary=True)
        s.add_field("bv", DataType.BINARY_VECTOR, dim=12)
        client.create_collection(name + "_odd", schema=s)
    assert e.value.code == 1100

    params = client.prepare_index_params()
    params.add_index(field_name="bv", index_type="BIN_FLAT", metric_type="HAMMING")
    client.create_index(name, params)
    client.load_collection(name)
    client.insert(name, [{"pk": 1, "bv": b"\x0f\x00\x00\x00"}])
    with pytest.raises(MilvusException) as e:
        client.search(name, data=[b"\x01\x02"], limit=3)
    assert e.value.code == 1100
    with pytest.raises(MilvusException) as e:
        client.search(name, data=[b"\x01\x02\x03\x04"], limit=3, search_params={"metric_type": "COSINE"})
    assert e.value.code == 1100
    with pytest.raises(MilvusException) as e:  # float query vectors on a binary field
        client.search(name, data=[[0.1] * 32], limit=3)
    assert e.value.code == 1100
    client.drop_collection(name)


DIM = 16


def float_rows(n, dim, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(8, dim))
    return centres[rng.integers(0, 8, size=n)] + 0.3 * rng.normal(size=(n, dim))


def test_half_and_int8_vectors(client: MilvusClient, name):
    """One collection with a Float16Vector (HNSW, L2), a BFloat16Vector (IVF_FLAT, IP)
    and an Int8Vector (HNSW, COSINE) field, searched one field at a time."""
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, max_length=16, is_primary=True)
    schema.add_field("n", DataType.INT64)
    schema.add_field("f16", DataType.FLOAT16_VECTOR, dim=DIM)
    schema.add_field("bf16", DataType.BFLOAT16_VECTOR, dim=DIM)
    schema.add_field("i8", DataType.INT8_VECTOR, dim=DIM)
    params = client.prepare_index_params()
    params.add_index(field_name="f16", index_type="HNSW", metric_type="L2", params={"M": 16, "efConstruction": 128})
    params.add_index(field_name="bf16", index_type="IVF_FLAT", metric_type="IP", params={"nlist": 8})
    params.add_index(field_name="i8", index_type="HNSW", metric_type="COSINE", params={"M": 16, "efConstruction": 128})
    client.create_collection(name, schema=schema, index_params=params)
    assert sorted(client.list_indexes(name)) == ["bf16", "f16", "i8"]

    base = float_rows(N, DIM, seed=3)
    f16 = base.astype(np.float16)
    bf16 = base.astype(ml_dtypes.bfloat16)
    i8 = np.clip(np.round(base * 40), -128, 127).astype(np.int8)
    ids = [f"k{i}" for i in range(N)]
    data = [{"pk": ids[i], "n": i, "f16": f16[i], "bf16": bf16[i], "i8": i8[i]} for i in range(N)]
    client.insert(name, data[:400])
    client.flush(name)
    client.insert(name, data[400:])
    for idx in ("f16", "bf16", "i8"):
        wait_indexed(client, name, idx, 400)

    got = client.get(name, ids=["k0", "k599"], output_fields=["f16", "bf16", "i8", "n"])
    assert sorted(r["pk"] for r in got) == ["k0", "k599"]
    for r in got:
        i = r["n"]
        # pymilvus returns the raw little-endian bytes of byte vectors, as from Milvus.
        assert r["f16"] == [f16[i].tobytes()]
        assert r["bf16"] == [bf16[i].tobytes()]
        assert r["i8"] == [i8[i].tobytes()]
        assert np.array_equal(np.frombuffer(r["f16"][0], dtype=np.float16), f16[i])
        assert np.array_equal(np.frombuffer(r["bf16"][0], dtype=ml_dtypes.bfloat16), bf16[i])
    rows = client.query(name, filter="n >= 595", output_fields=["i8"], consistency_level="Strong")
    assert sorted(int(r["pk"][1:]) for r in rows) == list(range(595, 600))
    assert all(np.array_equal(np.frombuffer(r["i8"][0], dtype=np.int8), i8[int(r["pk"][1:])]) for r in rows)

    qi = [5, 450, 123]
    noise = np.random.default_rng(11).normal(scale=0.2, size=(len(qi), DIM))
    qs = base[qi] + noise
    cases = [
        ("f16", "L2", qs.astype(np.float16), f16, l2, {"ef": 64}),
        ("bf16", "IP", qs.astype(ml_dtypes.bfloat16), bf16, ip, {"nprobe": 8}),
        ("i8", "COSINE", np.clip(np.round(qs * 40), -128, 127).astype(np.int8), i8, cosine, {"ef": 64}),
    ]
    for field, metric, queries, stored, score, sp in cases:
        hits = client.search(name, data=list(queries), anns_field=field, limit=10,
                             search_params={"metric_type": metric, "params": sp}, output_fields=["n"],
                             consistency_level="Strong")
        assert len(hits) == len(qi)
        stored32 = stored.astype(np.float32)
        for q, hs in zip(queries, hits):
            assert all(h["entity"]["n"] == int(h.id[1:]) for h in hs)
            check_hits(hs, ids,
                       score(stored32, q.astype(np.float32)), metric, 10, rel=2e-3, abs_=2e-3, min_recall=0.9)
        # Filtered search on the same field.
        hits = client.search(name, data=[queries[0]], anns_field=field, limit=5, filter="n < 100",
                             search_params={"metric_type": metric, "params": sp}, consistency_level="Strong")
        check_hits(hits[0], ids[:100], score(stored32[:100], queries[0].astype(np.float32)), metric, 5,
                   rel=2e-3, abs_=2e-3, min_recall=0.8)

    # float32 query vectors on a Float16Vector field
    hits = client.search(name, data=[qs[0].astype(np.float32).tolist()], anns_field="f16", limit=5,
                         search_params={"metric_type": "L2", "params": {"ef": 64}}, consistency_level="Strong")
    check_hits(hits[0], ids, l2(f16.astype(np.float32), qs[0].astype(np.float16).astype(np.float32)), "L2", 5,
               rel=5e-3, abs_=5e-3, min_recall=0.8)

    # Upsert keeps the vectors exact.
    v = np.full(DIM, 0.5, dtype=np.float16)
    client.upsert(name, [{"pk": "k1", "n": 1, "f16": v, "bf16": bf16[1], "i8": np.full(DIM, -7, np.int8)}])
    got = client.get(name, ids=["k1"], output_fields=["f16", "i8"], consistency_level="Strong")
    assert got[0]["f16"] == [v.tobytes()] and got[0]["i8"] == [np.full(DIM, -7, np.int8).tobytes()]
    client.drop_collection(name)


def test_half_and_int8_bad_input(client: MilvusClient, name):
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("f16", DataType.FLOAT16_VECTOR, dim=4)
    schema.add_field("i8", DataType.INT8_VECTOR, dim=4)
    params = client.prepare_index_params()
    params.add_index(field_name="f16", index_type="FLAT", metric_type="L2")
    params.add_index(field_name="i8", index_type="HNSW", metric_type="IP", params={"M": 8, "efConstruction": 32})
    client.create_collection(name, schema=schema, index_params=params)
    good = {"pk": 1, "f16": np.zeros(4, np.float16), "i8": np.zeros(4, np.int8)}
    client.insert(name, [good])
    with pytest.raises(MilvusException) as e:
        client.insert(name, [{**good, "f16": np.zeros(3, np.float16)}])
    assert e.value.code == 1100 and "f16" in e.value.message
    with pytest.raises(MilvusException) as e:
        client.insert(name, [{**good, "i8": np.zeros(5, np.int8)}])
    assert e.value.code == 1100 and "i8" in e.value.message
    with pytest.raises(MilvusException) as e:
        client.search(name, data=[np.zeros(3, np.float16)], anns_field="f16", limit=2)
    assert e.value.code == 1100
    with pytest.raises(MilvusException) as e:
        client.search(name, data=[np.zeros(4, np.float16)], anns_field="f16", limit=2,
                      search_params={"metric_type": "HAMMING"})
    assert e.value.code == 1100
    with pytest.raises(MilvusException) as e:  # float16 query vectors on an int8 field
        client.search(name, data=[np.zeros(4, np.float16)], anns_field="i8", limit=2)
    assert e.value.code == 1100
    client.release_collection(name)
    client.drop_index(name, "f16")
    params = client.prepare_index_params()
    params.add_index(field_name="f16", index_type="HNSW", metric_type="JACCARD", params={"M": 8, "efConstruction": 32})
    with pytest.raises(MilvusException) as e:
        client.create_index(name, params)
    assert e.value.code == 1100
    params = client.prepare_index_params()
    params.add_index(field_name="f16", index_type="BIN_FLAT", metric_type="L2")
    with pytest.raises(MilvusException) as e:
        client.create_index(name, params)
    assert e.value.code == 1100
    client.drop_collection(name)


def test_alter_index_properties(client: MilvusClient, name):
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("bv", DataType.BINARY_VECTOR, dim=64)
    schema.add_field("f16", DataType.FLOAT16_VECTOR, dim=8)
    params = client.prepare_index_params()
    params.add_index(field_name="bv", index_name="bv_idx", index_type="BIN_IVF_FLAT", metric_type="JACCARD",
                     params={"nlist": 4})
    params.add_index(field_name="f16", index_name="f16_idx", index_type="HNSW", metric_type="IP",
                     params={"M": 8, "efConstruction": 64})
    client.create_collection(name, schema=schema, index_params=params)
    base = binary_rows(50, 64, seed=5)
    halves = float_rows(50, 8, seed=5).astype(np.float16)
    client.insert(name, [{"pk": i, "bv": base[i].tobytes(), "f16": halves[i]} for i in range(50)])
    client.flush(name)
    wait_indexed(client, name, "bv_idx", 50)

    with pytest.raises(MilvusException) as e:  # Milvus: release the collection first
        client.alter_index_properties(name, "bv_idx", properties={"mmap.enabled": True})
    assert e.value.code == 104
    client.release_collection(name)
    client.alter_index_properties(name, "bv_idx", properties={"mmap.enabled": True})
    info = client.describe_index(name, "bv_idx")
    assert info["mmap.enabled"] == "True"
    assert info["index_type"] == "BIN_IVF_FLAT" and info["nlist"] == "4" and info["metric_type"] == "JACCARD"
    assert "mmap.enabled" not in client.describe_index(name, "f16_idx")
    with pytest.raises(MilvusException) as e:
        client.alter_index_properties(name, "bv_idx", properties={"nlist": 8})
    assert e.value.code == 1100
    with pytest.raises(MilvusException):
        client.alter_index_properties(name, "no_such_index", properties={"mmap.enabled": True})
    client.load_collection(name)
    hits = client.search(name, data=[base[7].tobytes()], anns_field="bv", limit=3,
                         search_params={"metric_type": "JACCARD", "params": {"nprobe": 4}})
    assert hits[0][0].id == 7 and hits[0][0]["distance"] == 0
    client.release_collection(name)
    client.drop_index_properties(name, "bv_idx", property_keys=["mmap.enabled"])
    assert "mmap.enabled" not in client.describe_index(name, "bv_idx")
    client.drop_collection(name)
