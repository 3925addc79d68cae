"""REST v2 over plain HTTP (requests), on the same address as gRPC."""

import pytest
import requests


class Rest:
    def __init__(self, base, headers=None):
        self.base = base.rstrip("/")
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def raw(self, path, body):
        r = requests.post(f"{self.base}/v2/vectordb/{path}", json=body, headers=self.headers, timeout=30)
        assert r.status_code == 200, r.text
        return r.json()

    def __call__(self, path, **body):
        out = self.raw(path, body)
        assert out["code"] == 0, out
        return out.get("data")

    def error(self, path, **body):
        out = self.raw(path, body)
        assert out["code"] != 0, out
        return out["code"]


@pytest.fixture()
def rest(uri):
    return Rest(uri, {"Authorization": "Bearer root:Milvus"})


def test_rest_core_flow(rest, name):
    rest("collections/create", collectionName=name, dimension=3, metricType="L2")
    assert name in rest("collections/list")
    assert rest("collections/has", collectionName=name) == {"has": True}
    desc = rest("collections/describe", collectionName=name)
    assert desc["collectionName"] == name and desc["load"] == "LoadStateLoaded"
    assert [f["type"] for f in desc["fields"]] == ["Int64", "FloatVector"]
    assert rest("collections/get_load_state", collectionName=name)["loadState"] == "LoadStateLoaded"

    data = [{"id": i, "vector": [float(i), 0.0, 1.0], "tag": "even" if i % 2 == 0 else "odd"} for i in range(6)]
    ins = rest("entities/insert", collectionName=name, data=data)
    assert ins["insertCount"] == 6
    assert ins["insertIds"] == [str(i) for i in range(6)]  # int64 as strings by default

    out = rest.raw("entities/search", {"collectionName": name, "data": [[0.0, 0.0, 1.0], [5.0, 0.0, 1.0]],
                                       "limit": 2, "outputFields": ["tag"], "consistencyLevel": "Strong"})
    assert out["code"] == 0 and out["topks"] == [2, 2]
    assert [h["id"] for h in out["data"]] == ["0", "1", "5", "4"]
    assert out["data"][0]["distance"] == 0.0 and out["data"][0]["tag"] == "even"

    q = rest("entities/query", collectionName=name, filter='tag == "odd"', outputFields=["id"],
             consistencyLevel="Strong")
    assert sorted(int(r["id"]) for r in q) == [1, 3, 5]
    g = rest("entities/get", collectionName=name, id=[4], outputFields=["tag"], consistencyLevel="Strong")
    assert g == [{"id": "4", "tag": "even"}]

    rest("entities/upsert", collectionName=name, data=[{"id": 4, "vector": [4.0, 0.0, 1.0], "tag": "four"}])
    g = rest("entities/get", collectionName=name, id=4, outputFields=["tag"], consistencyLevel="Strong")
    assert g[0]["tag"] == "four"
    rest("entities/delete", collectionName=name, filter="id in [0, 1]")
    rest("entities/delete", collectionName=name, id=[2])
    cnt = rest("entities/query", collectionName=name, outputFields=["count(*)"], consistencyLevel="Strong")
    assert int(cnt[0]["count(*)"]) == 3

    rest("partitions/create", collectionName=name, partitionName="p1")
    assert rest("partitions/list", collectionName=name) == ["_default", "p1"]
    assert rest("indexes/list", collectionName=name) == ["vector"]
    assert rest("indexes/describe", collectionName=name, indexName="vector")[0]["metricType"] == "L2"
    rest("collections/flush", collectionName=name)
    assert "rowCount" in rest("collections/get_stats", collectionName=name)
    rest("collections/release", collectionName=name)
    assert rest("collections/get_load_state", collectionName=name) == {"loadState": "LoadStateNotLoad"}
    rest("collections/drop", collectionName=name)
    assert rest("collections/has", collectionName=name) == {"has": False}


def test_rest_int64_header_and_errors(uri, name):
    rest = Rest(uri, {"Accept-Type-Allow-Int64": "true"})
    rest("collections/create", collectionName=name, dimension=2)
    ins = rest("entities/insert", collectionName=name, data=[{"id": 9007199254740993, "vector": [1, 2]}])
    assert ins["insertIds"] == [9007199254740993]
    r = requests.post(f"{uri}/v2/vectordb/collections/describe", data="{not json", timeout=10)
    assert r.status_code == 200 and r.json()["code"] == 1801
    assert rest.error("collections/describe") == 1802
    assert rest.error("collections/describe", collectionName="nope_" + name) == 100
    assert rest.error("collections/list", dbName="no_such_db") == 800
    rest("collections/drop", collectionName=name)


def test_rest_databases_and_aliases(uri, name):
    rest = Rest(uri)
    db = "db_" + name
    rest("databases/create", dbName=db)
    assert db in rest("databases/list")
    inside = Rest(uri, {"DB-Name": db})
    inside("collections/create", collectionName=name, dimension=2)
    inside("aliases/create", aliasName="a_" + name, collectionName=name)
    assert inside("aliases/list") == ["a_" + name]
    assert inside("aliases/describe", aliasName="a_" + name)["collectionName"] == name
    inside("entities/insert", collectionName="a_" + name, data=[{"id": 1, "vector": [1, 2]}])
    assert rest.error("databases/drop", dbName=db) != 0
    inside("aliases/drop", aliasName="a_" + name)
    inside("collections/drop", collectionName=name)
    rest("databases/drop", dbName=db)
    assert db not in rest("databases/list")
