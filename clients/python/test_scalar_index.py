"""Scalar indexes (INVERTED, STL_SORT, BITMAP, Trie) through pymilvus: every
filter gives the same query, count and search results with the indexes as
without them (the same data, scanned)."""

import numpy as np
import pytest
from pymilvus import DataType, MilvusClient, MilvusException

from vecutil import wait_indexed

N = 1200
DIM = 8

FILTERS = [
    "n == 17", "n != 17 and n < 40", "n in [1, 5, 999, 5000]", "n >= 100 and n < 130", "n > 1190 or n <= 2",
    "cat == 3", "cat in [0, 6]", "cat != 2 and n < 50",
    "price > 50.5", "price <= 10.0 and price >= 9.0", "not (price < 90)",
    'tag == "t7"', 'tag in ["t1", "t9", "zz"]', 'tag like "t1%"', 'tag > "t5"', 'tag != "t3" and n < 30',
    'name like "name_11%"', 'name == "name_42"', 'name in ["name_1", "name_2"]', 'name >= "name_99"',
    "flag == true", "flag == false and cat == 1", "flag != true and n < 20",
    "array_contains(labels, 4)", "array_contains_any(labels, [1, 9])", "array_contains_all(labels, [2, 3])",
    "n % 7 == 0 and tag == \"t2\"",
]

INDEXES = [  # field, index_type
    ("n", "STL_SORT"),
    ("cat", "BITMAP"),
    ("price", "INVERTED"),
    ("tag", "INVERTED"),
    ("name", "Trie"),
    ("flag", "BITMAP"),
    ("labels", "INVERTED"),
]


def rows(n, start=0):
    rng = np.random.default_rng(start + 1)
    out = []
    for i in range(start, start + n):
        out.append({
            "id": i, "vec": rng.random(DIM).tolist(), "n": i, "cat": i % 7, "price": float(i % 101) + 0.5,
            "tag": f"t{i % 11}", "name": f"name_{i}", "flag": i % 3 == 0,
            "labels": [int(x) for x in rng.integers(0, 10, size=int(rng.integers(0, 4)))],
        })
    return out


def snapshot(client, name, query_vec):
    """Query ids, count(*) and filtered search hits for every filter."""
    out = {}
    for f in FILTERS:
        ids = sorted(r["id"] for r in client.query(name, filter=f, output_fields=["id"], limit=16384,
                                                   consistency_level="Strong"))
        cnt = client.query(name, filter=f, output_fields=["count(*)"], consistency_level="Strong")[0]["count(*)"]
        hits = client.search(name, data=[query_vec], limit=10, filter=f, consistency_level="Strong",
                             search_params={"metric_type": "L2"})
        out[f] = (ids, cnt, [(h.id, round(h.distance, 5)) for h in hits[0]])
    return out


def test_scalar_indexes_match_scan(client: MilvusClient, name):
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("n", DataType.INT64)
    schema.add_field("cat", DataType.INT32)
    schema.add_field("price", DataType.DOUBLE)
    schema.add_field("tag", DataType.VARCHAR, max_length=16)
    schema.add_field("name", DataType.VARCHAR, max_length=32)
    schema.add_field("flag", DataType.BOOL)
    schema.add_field("labels", DataType.ARRAY, element_type=DataType.INT64, max_capacity=8)
    params = client.prepare_index_params()
    params.add_index(field_name="vec", index_type="FLAT", metric_type="L2")
    client.create_collection(name, schema=schema, index_params=params)
    client.insert(name, rows(800))
    client.flush(name)
    client.insert(name, rows(N - 800, start=800))  # growing rows are scanned either way
    client.delete(name, ids=[5, 17, 1191])
    q = [0.5] * DIM

    before = snapshot(client, name, q)
    assert before["n == 17"][0] == [] and before["n in [1, 5, 999, 5000]"][0] == [1, 999]
    assert before['name == "name_42"'][0] == [42]

    # Create the indexes on the loaded collection, as Milvus allows for scalar fields.
    for field, index_type in INDEXES:
        p = client.prepare_index_params()
        p.add_index(field_name=field, index_name=f"{field}_idx", index_type=index_type)
        client.create_index(name, p)
    for field, index_type in INDEXES:
        info = wait_indexed(client, name, f"{field}_idx", 800)
        assert info["index_type"] == index_type and info["field_name"] == field
    assert sorted(client.list_indexes(name)) == sorted(["vec"] + [f"{f}_idx" for f, _ in INDEXES])
    after = snapshot(client, name, q)
    for f in FILTERS:
        assert after[f] == before[f], f

    # After a reload (indexes attached at load) and with every row flushed.
    client.release_collection(name)
    client.flush(name)
    for field, _ in INDEXES:
        wait_indexed(client, name, f"{field}_idx", N)
    client.load_collection(name)
    again = snapshot(client, name, q)
    for f in FILTERS:
        assert again[f] == before[f], f

    # STL_SORT on a VarChar field (Milvus 2.6) answers like the Trie on the same field.
    client.release_collection(name)
    client.drop_index(name, "name_idx")
    p = client.prepare_index_params()
    p.add_index(field_name="name", index_name="name_idx", index_type="STL_SORT")
    client.create_index(name, p)
    wait_indexed(client, name, "name_idx", N)
    client.load_collection(name)
    sorted_name = snapshot(client, name, q)
    for f in FILTERS:
        assert sorted_name[f] == before[f], f
    client.drop_collection(name)


def test_scalar_index_bad_input(client: MilvusClient, name):
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("n", DataType.INT64)
    schema.add_field("price", DataType.DOUBLE)
    schema.add_field("meta", DataType.JSON)
    client.create_collection(name, schema=schema)
    for field, index_type, params in (("n", "Trie", {}), ("price", "BITMAP", {}), ("id", "BITMAP", {}),
                                      ("meta", "STL_SORT", {}), ("n", "HNSW", {}), ("vec", "STL_SORT", {}),
                                      ("n", "BITMAP", {"bitmap_cardinality_limit": 5000})):
        p = client.prepare_index_params()
        p.add_index(field_name=field, index_type=index_type, params=params)
        with pytest.raises(MilvusException) as e:
            client.create_index(name, p)
        assert e.value.code == 1100, (field, index_type)
        assert field in e.value.message or index_type in e.value.message or "cardinality" in e.value.message
    client.drop_collection(name)
