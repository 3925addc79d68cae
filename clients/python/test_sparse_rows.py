"""Sparse float vectors through pymilvus (rows as dicts, empty rows): dict rows in, dict rows out, the
sparse index types, search with dict queries, and the errors for bad input."""

import random

import pytest
from pymilvus import DataType, MilvusClient, MilvusException


def docs(n, seed=3, vocab=300):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        vec = {rng.randrange(vocab): round(rng.uniform(0.01, 2), 3) for _ in range(rng.randrange(1, 12))}
        if i % 50 == 0:
            vec = {}
        out.append({"id": i, "sv": vec})
    return out


def exact(rows, q, k):
    scored = []
    for r in rows:
        s = sum(v * r["sv"].get(d, 0.0) for d, v in q.items())
        if s > 0:
            scored.append((-s, r["id"]))
    scored.sort()
    return [i for _, i in scored[:k]]


def create(client: MilvusClient, name, index_type, **params):
    schema = client.create_schema()
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("sv", DataType.SPARSE_FLOAT_VECTOR)
    index = client.prepare_index_params()
    index.add_index(field_name="sv", index_type=index_type, metric_type="IP", params=params)
    client.create_collection(collection_name=name, schema=schema, index_params=index)


@pytest.mark.parametrize("index_type", ["SPARSE_INVERTED_INDEX", "SPARSE_WAND", "AUTOINDEX"])
def test_sparse_roundtrip_and_search(client: MilvusClient, name, index_type):
    create(client, name, index_type, drop_ratio_build=0.0)
    rows = docs(400)
    assert client.insert(collection_name=name, data=rows)["insert_count"] == 400
    client.flush(name)
    got = client.query(collection_name=name, filter="id in [0, 1, 2, 399]", output_fields=["sv"],
                       consistency_level="Strong")
    by_id = {r["id"]: r["sv"] for r in got}
    for i in (0, 1, 2, 399):
        want = {d: pytest.approx(v, rel=1e-6) for d, v in rows[i]["sv"].items()}
        assert by_id[i] == want
    rng = random.Random(9)
    for _ in range(10):
        q = {rng.randrange(300): 1.0 for _ in range(5)}
        res = client.search(collection_name=name, data=[q], anns_field="sv", limit=10,
                            search_params={"params": {"drop_ratio_search": 0.0}}, consistency_level="Strong")
        assert [h["id"] for h in res[0]] == exact(rows, q, 10)
    desc = client.describe_index(name, "sv")
    assert desc["metric_type"] == "IP"


def test_sparse_bad_input(client: MilvusClient, name):
    create(client, name, "SPARSE_INVERTED_INDEX")
    with pytest.raises(MilvusException, match="negative value"):
        client.insert(collection_name=name, data=[{"id": 1, "sv": {3: -1.0}}])
    client.insert(collection_name=name, data=[{"id": 1, "sv": {3: 1.0}}])
    with pytest.raises(MilvusException, match="drop_ratio_search"):
        client.search(collection_name=name, data=[{3: 1.0}], anns_field="sv", limit=3,
                      search_params={"params": {"drop_ratio_search": 1.5}})
    with pytest.raises(MilvusException, match="IP"):
        client.search(collection_name=name, data=[{3: 1.0}], anns_field="sv", limit=3,
                      search_params={"metric_type": "L2"})
    client.release_collection(name)
    client.drop_index(name, "sv")
    index = client.prepare_index_params()
    index.add_index(field_name="sv", index_type="SPARSE_WAND", metric_type="IP", params={"drop_ratio_build": 1})
    with pytest.raises(MilvusException, match=r"drop_ratio_build: 1, must be in range \[0, 1\)"):
        client.create_index(name, index)
