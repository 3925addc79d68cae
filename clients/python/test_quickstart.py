"""The pymilvus MilvusClient quickstart against Strata."""

import random

import pytest
from pymilvus import DataType, MilvusClient, MilvusException

DIM = 5


def vectors(n, seed=1):
    rng = random.Random(seed)
    return [[rng.uniform(-1, 1) for _ in range(DIM)] for _ in range(n)]


def rows(n, start=0, seed=1):
    colors = ["red", "green", "blue"]
    return [
        {"id": start + i, "vector": v, "color": colors[(start + i) % 3], "n": start + i}
        for i, v in enumerate(vectors(n, seed))
    ]


def test_quickstart(client: MilvusClient, name):
    client.create_collection(collection_name=name, dimension=DIM)
    assert client.has_collection(name)
    assert name in client.list_collections()
    desc = client.describe_collection(name)
    assert desc["collection_name"] == name
    assert desc["enable_dynamic_field"] is True
    assert [f["name"] for f in desc["fields"]] == ["id", "vector"]
    assert str(client.get_load_state(name)["state"]) == "Loaded"

    data = rows(10)
    res = client.insert(collection_name=name, data=data)
    assert res["insert_count"] == 10
    assert list(res["ids"]) == list(range(10))

    hits = client.search(collection_name=name, data=[data[0]["vector"]], limit=3,
                         output_fields=["color", "n"], consistency_level="Strong")
    assert len(hits) == 1 and len(hits[0]) == 3
    top = hits[0][0]
    assert top["id"] == 0
    assert top["distance"] == pytest.approx(1.0, abs=1e-5)  # COSINE of a vector with itself
    assert top["entity"]["color"] == "red"

    two = client.search(collection_name=name, data=[data[1]["vector"], data[2]["vector"]], limit=2,
                        filter='color != "blue"', consistency_level="Strong")
    assert len(two) == 2
    assert two[0][0]["id"] == 1

    got = client.query(collection_name=name, filter="n >= 7", output_fields=["id", "color"],
                       consistency_level="Strong")
    assert sorted(r["id"] for r in got) == [7, 8, 9]

    got = client.get(collection_name=name, ids=[2, 3], output_fields=["vector", "color"])
    assert sorted(r["id"] for r in got) == [2, 3]
    assert len(got[0]["vector"]) == DIM

    assert client.delete(collection_name=name, ids=[0, 1])["delete_count"] == 2
    assert client.delete(collection_name=name, filter='color == "blue"')["delete_count"] == 3  # 2, 5, 8
    client.upsert(collection_name=name, data=[{"id": 3, "vector": data[3]["vector"], "color": "gold", "n": 3}])
    got = client.get(collection_name=name, ids=[3], output_fields=["color"], consistency_level="Strong")
    assert got[0]["color"] == "gold"
    count = client.query(collection_name=name, filter="", output_fields=["count(*)"], consistency_level="Strong")
    assert count[0]["count(*)"] == 5  # 3, 4, 6, 7, 9

    client.flush(name)
    stats = client.get_collection_stats(name)
    assert "row_count" in stats

    client.rename_collection(name, name + "_r")
    assert client.has_collection(name + "_r") and not client.has_collection(name)
    client.drop_collection(name + "_r")
    assert not client.has_collection(name + "_r")


def test_partitions(client: MilvusClient, name):
    client.create_collection(collection_name=name, dimension=DIM)
    client.create_partition(name, "p1")
    assert client.has_partition(name, "p1")
    assert client.list_partitions(name) == ["_default", "p1"]
    client.insert(collection_name=name, data=rows(4), partition_name="p1")
    client.insert(collection_name=name, data=rows(3, start=100))
    got = client.query(collection_name=name, filter="id >= 0", partition_names=["p1"], consistency_level="Strong")
    assert sorted(r["id"] for r in got) == [0, 1, 2, 3]
    client.release_partitions(name, ["p1"])
    with pytest.raises(MilvusException):
        client.drop_partition(name, "_default")
    client.release_collection(name)
    client.drop_partition(name, "p1")
    assert not client.has_partition(name, "p1")
    client.drop_collection(name)


def test_indexes_and_load_state(client: MilvusClient, name):
    client.create_collection(collection_name=name, dimension=DIM)
    assert client.list_indexes(name) == ["vector"]
    idx = client.describe_index(name, index_name="vector")
    assert idx["metric_type"] == "COSINE"
    assert idx["field_name"] == "vector"

    client.release_collection(name)
    assert str(client.get_load_state(name)["state"]) == "NotLoad"
    client.drop_index(name, "vector")
    assert client.list_indexes(name) == []
    params = client.prepare_index_params()
    params.add_index(field_name="vector", index_name="vec_hnsw", index_type="HNSW", metric_type="L2",
                     params={"M": 8, "efConstruction": 64})
    client.create_index(name, params)
    idx = client.describe_index(name, index_name="vec_hnsw")
    assert idx["index_type"] == "HNSW" and idx["metric_type"] == "L2"
    client.load_collection(name)
    assert str(client.get_load_state(name)["state"]) == "Loaded"
    client.insert(collection_name=name, data=rows(5))
    hits = client.search(collection_name=name, data=[rows(5)[4]["vector"]], limit=1,
                         search_params={"metric_type": "L2", "params": {"ef": 16}}, consistency_level="Strong")
    assert hits[0][0]["id"] == 4
    assert hits[0][0]["distance"] == pytest.approx(0.0, abs=1e-5)
    client.drop_collection(name)


def test_schema_with_varchar_pk(client: MilvusClient, name):
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, max_length=16, is_primary=True)
    schema.add_field("score", DataType.DOUBLE)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
    params = client.prepare_index_params()
    params.add_index(field_name="vec", metric_type="IP")
    client.create_collection(name, schema=schema, index_params=params)
    client.insert(name, [{"pk": f"k{i}", "score": i / 2, "vec": v} for i, v in enumerate(vectors(4))])
    assert client.delete(name, ids=["k0", "k1"])["delete_count"] == 2
    got = client.query(name, filter="score > 0", output_fields=["pk"], consistency_level="Strong")
    assert sorted(r["pk"] for r in got) == ["k2", "k3"]
    client.drop_collection(name)


def test_databases_and_aliases(uri, name):
    admin = MilvusClient(uri=uri)
    db = "db_" + name
    admin.create_database(db)
    assert db in admin.list_databases()
    c = MilvusClient(uri=uri, db_name=db)
    c.create_collection(collection_name=name, dimension=DIM)
    c.create_alias(name, "a_" + name)
    assert c.describe_alias("a_" + name)["collection_name"] == name
    assert c.list_aliases(name)["aliases"] == ["a_" + name]
    c.insert("a_" + name, rows(2))
    assert len(c.get("a_" + name, ids=[0, 1], consistency_level="Strong")) == 2
    assert name not in admin.list_collections()
    with pytest.raises(MilvusException):
        admin.drop_database(db)  # not empty
    c.drop_alias("a_" + name)
    c.drop_collection(name)
    c.close()
    admin.drop_database(db)
    assert db not in admin.list_databases()
    gone = MilvusClient(uri=uri, db_name=db)  # pymilvus 2.6 sends the database per request
    with pytest.raises(MilvusException) as e:
        gone.list_collections()
    assert e.value.code == 800
    gone.close()
    admin.close()
