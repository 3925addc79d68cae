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


def test_rest_binary_float16_sparse(rest, name):
    """Binary, float16 and sparse vectors over REST v2: arrays (and base64) in,
    base64 out for byte vectors, {index: value} objects for sparse ones."""
    import base64

    import numpy as np

    from vecutil import check_hits, hamming, l2, sparse_dot

    schema = {"autoId": False, "enableDynamicField": False, "fields": [
        {"fieldName": "id", "dataType": "Int64", "isPrimary": True},
        {"fieldName": "bin", "dataType": "BinaryVector", "elementTypeParams": {"dim": "32"}},
        {"fieldName": "half", "dataType": "Float16Vector", "elementTypeParams": {"dim": "4"}},
        {"fieldName": "sp", "dataType": "SparseFloatVector"},
    ]}
    index = [
        {"fieldName": "bin", "indexName": "bin", "indexType": "BIN_IVF_FLAT", "metricType": "HAMMING",
         "params": {"nlist": 4}},
        {"fieldName": "half", "indexName": "half", "indexType": "HNSW", "metricType": "L2",
         "params": {"M": 8, "efConstruction": 64}},
        {"fieldName": "sp", "indexName": "sp", "indexType": "SPARSE_INVERTED_INDEX", "metricType": "IP"},
    ]
    rest("collections/create", collectionName=name, schema=schema, indexParams=index)
    desc = rest("collections/describe", collectionName=name)
    assert [f["type"] for f in desc["fields"]] == ["Int64", "BinaryVector", "Float16Vector", "SparseFloatVector"]

    rng = np.random.default_rng(5)
    n = 60
    bins = rng.integers(0, 256, size=(n, 4), dtype=np.uint8)
    halves = rng.random((n, 4)).astype(np.float16)
    sparse = [{int(k): float(np.float32(v)) for k, v in zip(sorted(rng.choice(100, 3, replace=False)),
                                                          rng.random(3) + 0.1)} for _ in range(n)]
    data = []
    for i in range(n):
        row = {"id": i, "sp": {str(k): v for k, v in sparse[i].items()}}
        if i % 2:  # base64 of the raw bytes
            row["bin"] = base64.b64encode(bins[i].tobytes()).decode()
            row["half"] = base64.b64encode(halves[i].tobytes()).decode()
        else:  # arrays: bytes 0..255 and numbers
            row["bin"] = [int(b) for b in bins[i]]
            row["half"] = [float(x) for x in halves[i]]
        data.append(row)
    assert rest("entities/insert", collectionName=name, data=data)["insertCount"] == n

    got = rest("entities/get", collectionName=name, id=[3, 4], outputFields=["bin", "half", "sp"],
               consistencyLevel="Strong")
    assert sorted(int(r["id"]) for r in got) == [3, 4]
    for r in got:
        i = int(r["id"])
        assert base64.b64decode(r["bin"]) == bins[i].tobytes()
        assert base64.b64decode(r["half"]) == halves[i].tobytes()
        assert {int(k): v for k, v in r["sp"].items()} == sparse[i]

    def search(field, vec, params=None):
        out = rest.raw("entities/search", {"collectionName": name, "annsField": field, "data": [vec], "limit": 5,
                                           "consistencyLevel": "Strong", "searchParams": params or {}})
        assert out["code"] == 0, out
        return [{"id": int(h["id"]), "distance": h["distance"]} for h in out["data"]]

    ids = list(range(n))
    hits = search("bin", [int(b) for b in bins[7]], {"metricType": "HAMMING", "params": {"nprobe": 4}})
    check_hits(hits, ids, hamming(bins, bins[7]), "HAMMING", 5, rel=0, abs_=1e-6)
    assert hits[0] == {"id": 7, "distance": 0}
    hits = search("bin", base64.b64encode(bins[8].tobytes()).decode(), {"params": {"nprobe": 4}})
    assert hits[0]["id"] == 8
    hits = search("half", [float(x) for x in halves[9]], {"metricType": "L2", "params": {"ef": 32}})
    check_hits(hits, ids, l2(halves.astype(np.float32), halves[9].astype(np.float32)), "L2", 5, rel=1e-3,
               abs_=1e-4, min_recall=0.8)
    q = {"1": 0.5, "50": 1.0, "99": 0.25}
    hits = search("sp", q, {"params": {"drop_ratio_search": 0.0}})
    check_hits(hits, ids, sparse_dot(sparse, {int(k): v for k, v in q.items()}), "IP", 5, rel=1e-5, abs_=1e-6,
               positive_only=True)

    # 1804: Milvus REST's "fail to deal the insert data" (ErrInvalidInsertData).
    assert rest.error("entities/insert", collectionName=name,
                      data=[{**data[0], "id": 1000, "bin": [1, 2]}]) == 1804  # 2 bytes for dim 32
    assert rest.error("entities/insert", collectionName=name,
                      data=[{**data[0], "id": 1000, "half": [1.0, 2.0, 3.0]}]) == 1804
    assert rest.error("entities/insert", collectionName=name,
                      data=[{**data[0], "id": 1000, "sp": {"3": -1.0}}]) in (1804, 1100)
    assert rest.error("entities/search", collectionName=name, annsField="bin", data=[[1, 2, 3, 4]], limit=3,
                      searchParams={"metricType": "L2"}) == 1100
    rest("collections/drop", collectionName=name)


def test_rest_hybrid_search_matches_grpc(client, uri, name):
    """entities/hybrid_search (and advanced_search) over REST v2 returns the
    same fused hits and scores as pymilvus's gRPC hybrid_search on the same
    data, for RRF and Weighted rankers; plus REST search parity: offset,
    radius/range_filter, groupingField and search by primary key."""
    import numpy as np
    from pymilvus import AnnSearchRequest, DataType, MilvusClient, RRFRanker, WeightedRanker

    dim = 6
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("g", DataType.INT64)
    schema.add_field("v1", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("v2", DataType.FLOAT_VECTOR, dim=dim)
    params = client.prepare_index_params()
    params.add_index(field_name="v1", index_type="FLAT", metric_type="L2")
    params.add_index(field_name="v2", index_type="FLAT", metric_type="IP")
    client.create_collection(name, schema=schema, index_params=params)
    rng = np.random.default_rng(11)
    v1 = rng.normal(size=(200, dim)).astype(np.float32)
    v2 = rng.normal(size=(200, dim)).astype(np.float32)
    client.insert(name, [{"id": i, "g": i % 4, "v1": v1[i].tolist(), "v2": v2[i].tolist()} for i in range(200)])
    rest = Rest(uri, {"Accept-Type-Allow-Int64": "true"})
    q1, q2 = rng.normal(size=(2, dim)).astype(np.float32).tolist(), rng.normal(size=(2, dim)).astype(np.float32).tolist()

    def grpc(ranker, limit, offset=0, expr=""):
        reqs = [AnnSearchRequest(data=q1, anns_field="v1", param={"metric_type": "L2"}, limit=15, expr=expr),
                AnnSearchRequest(data=q2, anns_field="v2", param={"metric_type": "IP"}, limit=15, expr=expr)]
        res = client.hybrid_search(name, reqs, ranker, limit=limit, offset=offset, output_fields=["g"],
                                   consistency_level="Strong")
        return [[(h["id"], h["distance"], h["entity"]["g"]) for h in hits] for hits in res]

    def via_rest(path, rerank, limit, offset=0, expr=""):
        subs = [{"data": q1, "annsField": "v1", "limit": 15, "filter": expr, "params": {"metricType": "L2"}},
                {"data": q2, "annsField": "v2", "limit": 15, "filter": expr, "params": {"metricType": "IP"}}]
        out = rest.raw(path, {"collectionName": name, "search": subs, "rerank": rerank, "limit": limit,
                              "offset": offset, "outputFields": ["g"], "consistencyLevel": "Strong"})
        assert out["code"] == 0, out
        flat = [(h["id"], h["distance"], h["g"]) for h in out["data"]]
        groups, at = [], 0
        for k in out["topks"]:
            groups.append(flat[at:at + k])
            at += k
        return groups

    def same(a, b):
        assert [[(i, g) for i, _, g in q] for q in a] == [[(i, g) for i, _, g in q] for q in b]
        for qa, qb in zip(a, b):
            for (_, da, _), (_, db, _) in zip(qa, qb):
                assert abs(da - db) <= 1e-6 * max(1.0, abs(db))

    cases = [
        (RRFRanker(), {"strategy": "rrf", "params": {"k": 60}}),
        (RRFRanker(k=5), {"strategy": "rrf", "params": {"k": 5}}),
        # pymilvus's WeightedRanker sends norm_score=True unless told otherwise; the server's default is false.
        (WeightedRanker(0.3, 0.7), {"strategy": "weighted", "params": {"weights": [0.3, 0.7], "norm_score": True}}),
        (WeightedRanker(0.6, 0.4, norm_score=False),
         {"strategy": "weighted", "params": {"weights": [0.6, 0.4], "norm_score": False}}),
    ]
    for ranker, rerank in cases:
        want = grpc(ranker, 8)
        assert [len(q) for q in want] == [8, 8]
        same(via_rest("entities/hybrid_search", rerank, 8), want)
        same(via_rest("entities/advanced_search", rerank, 8), want)
        same(via_rest("entities/hybrid_search", rerank, 5, offset=3), grpc(ranker, 5, offset=3))
        same(via_rest("entities/hybrid_search", rerank, 6, expr="g in [1, 2]"), grpc(ranker, 6, expr="g in [1, 2]"))

    assert rest.error("entities/hybrid_search", collectionName=name) == 1802
    assert rest.error("entities/hybrid_search", collectionName=name, search=[{"data": q1, "annsField": "v1"}],
                      rerank={"strategy": "weighted", "params": {"weights": [0.5, 0.5]}}) == 1100
    assert rest.error("entities/hybrid_search", collectionName=name, search=[{"data": q1, "annsField": "v1"}],
                      rerank={"strategy": "nope"}) == 1100

    # Search parity with gRPC search: offset, range search, grouping.
    def rest_search(**extra):
        body = {"collectionName": name, "data": [q1[0]], "annsField": "v1", "consistencyLevel": "Strong", **extra}
        return [(h["id"], h["distance"]) for h in rest("entities/search", **body)]

    def grpc_search(limit, **kw):
        res = client.search(name, [q1[0]], anns_field="v1", limit=limit, consistency_level="Strong", **kw)
        return [(h["id"], h["distance"]) for h in res[0]]

    def close(a, b):
        assert [i for i, _ in a] == [i for i, _ in b]
        assert all(abs(x - y) <= 1e-5 * max(1.0, abs(y)) for (_, x), (_, y) in zip(a, b))

    close(rest_search(limit=5, offset=4), grpc_search(5, offset=4))
    rng_params = {"metric_type": "L2", "params": {"radius": 12.0, "range_filter": 4.0}}
    ranged = grpc_search(50, search_params=rng_params)
    assert ranged and all(4.0 <= d < 12.0 for _, d in ranged)
    close(rest_search(limit=50, searchParams={"metricType": "L2", "params": {"radius": 12.0, "range_filter": 4.0}}),
          ranged)
    close(rest_search(limit=3, groupingField="g", groupSize=2),
          grpc_search(3, group_by_field="g", group_size=2))

    # Search by primary key: the stored vector of row 7.
    by_id = rest("entities/search", collectionName=name, ids=[7], annsField="v1", limit=4, consistencyLevel="Strong")
    by_vec = rest("entities/search", collectionName=name, data=[v1[7].tolist()], annsField="v1", limit=4,
                  consistencyLevel="Strong")
    assert [h["id"] for h in by_id] == [h["id"] for h in by_vec] and by_id[0]["id"] == 7
    client.drop_collection(name)
