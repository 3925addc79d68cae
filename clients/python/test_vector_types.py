"""Binary, float16 and int8 vectors through pymilvus (numpy arrays in, the
same bytes out, exact and indexed search)."""

import numpy as np
import pytest
from pymilvus import DataType, MilvusClient, MilvusException


def _one(v):
    """pymilvus returns a byte vector row as bytes or as a one-element list."""
    if isinstance(v, list) and len(v) == 1 and isinstance(v[0], (bytes, bytearray)):
        return bytes(v[0])
    return v


def _collection(client, name, dtype, dim, index_type, metric, params=None):
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("v", dtype, dim=dim)
    idx = client.prepare_index_params()
    idx.add_index(field_name="v", index_type=index_type, metric_type=metric, params=params or {})
    client.create_collection(name, schema=schema, index_params=idx)


def test_binary_vectors(client: MilvusClient, name):
    _collection(client, name, DataType.BINARY_VECTOR, 64, "BIN_IVF_FLAT", "HAMMING", {"nlist": 4})
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, size=(60, 8), dtype=np.uint8)
    client.insert(name, [{"id": i, "v": raw[i].tobytes()} for i in range(60)])
    client.flush(name)
    hits = client.search(name, data=[raw[7].tobytes()], anns_field="v", limit=3,
                         search_params={"metric_type": "HAMMING", "params": {"nprobe": 4}},
                         consistency_level="Strong")
    assert hits[0][0]["id"] == 7
    assert hits[0][0]["distance"] == 0
    want = [int(np.unpackbits(raw[7] ^ raw[i]).sum()) for i in range(60)]
    assert [h["distance"] for h in hits[0]] == sorted(want)[:3]
    got = client.query(name, filter="id in [3, 59]", output_fields=["v"], consistency_level="Strong")
    assert {r["id"]: _one(r["v"]) for r in got} == {3: raw[3].tobytes(), 59: raw[59].tobytes()}
    with pytest.raises(MilvusException):
        client.search(name, data=[raw[0].tobytes()], anns_field="v", limit=3,
                      search_params={"metric_type": "L2"})


def test_float16_vectors(client: MilvusClient, name):
    _collection(client, name, DataType.FLOAT16_VECTOR, 8, "HNSW", "L2", {"M": 8, "efConstruction": 32})
    rng = np.random.default_rng(2)
    vecs = rng.standard_normal((40, 8)).astype(np.float16)
    client.insert(name, [{"id": i, "v": vecs[i]} for i in range(40)])
    hits = client.search(name, data=[vecs[11]], anns_field="v", limit=2, consistency_level="Strong")
    assert hits[0][0]["id"] == 11
    assert hits[0][0]["distance"] == pytest.approx(0, abs=1e-6)
    got = client.query(name, filter="id == 5", output_fields=["v"], consistency_level="Strong")
    v = _one(got[0]["v"])
    if not isinstance(v, (bytes, bytearray)):
        v = np.asarray(v, dtype=np.float16).tobytes()
    assert v == vecs[5].tobytes()


def test_int8_vectors(client: MilvusClient, name):
    _collection(client, name, DataType.INT8_VECTOR, 16, "HNSW", "COSINE", {"M": 8, "efConstruction": 32})
    rng = np.random.default_rng(3)
    vecs = rng.integers(-128, 128, size=(30, 16), dtype=np.int8)
    client.insert(name, [{"id": i, "v": vecs[i]} for i in range(30)])
    hits = client.search(name, data=[vecs[4]], anns_field="v", limit=1, consistency_level="Strong")
    assert hits[0][0]["id"] == 4
    assert hits[0][0]["distance"] == pytest.approx(1, abs=1e-5)
    with pytest.raises(MilvusException):
        client.insert(name, [{"id": 99, "v": vecs[0][:15]}])
