"""Side by side: the same pymilvus MilvusClient flows against Strata and against
milvus-lite, with a field-by-field comparison report in markdown.

    python compare_lite.py --strata http://127.0.0.1:19530 --lite-db /tmp/x.db --report out.md

Each step's response is normalised (collection names replaced by placeholders,
floats rounded, enums by name, timestamps and ids that differ by construction
dropped), flattened to dotted paths and compared. Errors are recorded as their
code and message. Differences are reported, not failed on: the exit status is
non-zero only when the script itself breaks (or with --strict, when any step
differs). milvus-lite is optional; nothing in CI depends on it
(.ci/clients.sh runs this only with STRATA_CLIENT_SUITES containing "lite").
"""

import argparse
import enum
import json
import logging
import random
import struct
import sys
import time
import uuid

from pymilvus import DataType, MilvusClient, MilvusException

DIM = 4
STRONG = {"consistency_level": "Strong"}

# Keys that differ between two servers by construction, not by behaviour.
VOLATILE = {"collection_id", "created_timestamp", "update_timestamp", "timestamp", "cost", "session_ts",
            "recalls"}


def vectors(n, seed):
    rng = random.Random(seed)
    return [[round(rng.uniform(-1, 1), 4) for _ in range(DIM)] for _ in range(n)]


def quick_rows(n, start=0, seed=1):
    colors = ["red", "green", "blue"]
    return [{"id": start + i, "vector": v, "color": colors[(start + i) % 3], "n": start + i}
            for i, v in enumerate(vectors(n, seed))]


# Placeholders of the collections the flows create.
COLLECTIONS = ("Q", "S", "V", "A", "SP", "B", "H", "X")


def sparse_rows():
    """8 sparse rows as {index: value} dicts (values exact in float32)."""
    return [{"pk": i, "sv": {j: (i + j + 1) / 8 for j in range(i % 4, 12, 1 + i % 3)}, "g": i % 2} for i in range(8)]


def float16_bytes(values):
    """Little-endian IEEE half-precision bytes (no numpy: the lite environment pins only pymilvus's deps)."""
    return b"".join(struct.pack("<e", v) for v in values)


def schema_rows(n, seed=2):
    return [{"pk": 1000 + i, "title": f"t{i}", "score": i / 4, "emb": v} for i, v in enumerate(vectors(n, seed))]


class Target:
    def __init__(self, label, client, names):
        self.label = label
        self.c = client
        self.names = names  # placeholder -> real collection name

    def real(self, placeholder):
        return self.names[placeholder]


def normalise(value, target):
    """JSON-able, with real collection names replaced by their placeholders."""
    back = {v: k for k, v in target.names.items()}
    return _norm(value, back)


def _norm(v, back):
    if isinstance(v, MilvusException):
        return {"error": {"code": v.code, "message": _names(str(v.message), back)}}
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return round(v, 4)
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        return _names(v, back)
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return {str(k): _norm(x, back) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))
                if str(k) not in VOLATILE}
    if hasattr(v, "items") and callable(v.items):
        return _norm(dict(v.items()), back)
    if isinstance(v, (list, tuple)) or hasattr(v, "__iter__"):
        return [_norm(x, back) for x in list(v)]
    if hasattr(v, "item"):  # numpy scalars
        return _norm(v.item(), back)
    return _names(str(v), back)


def _names(s, back):
    for real, placeholder in back.items():
        s = s.replace(real, placeholder)
    return s


def flatten(v, prefix=""):
    out = {}
    if isinstance(v, dict) and v:
        for k, x in v.items():
            out.update(flatten(x, f"{prefix}.{k}" if prefix else k))
    elif isinstance(v, list) and v and any(isinstance(x, (dict, list)) for x in v):
        for i, x in enumerate(v):
            out.update(flatten(x, f"{prefix}[{i}]"))
    else:
        out[prefix or "(value)"] = v
    return out


# --- the flows -----------------------------------------------------------------
# Each step is (title, function(target) -> response). A step that raises
# MilvusException records the error; the same flow runs on both targets.

def sort_rows(rows, key):
    return sorted(rows, key=lambda r: r.get(key))


def sorted_hits(res):
    return [[dict(h) for h in hits] for hits in res]


def steps():
    s = []

    def step(title):
        def deco(fn):
            s.append((title, fn))
            return fn
        return deco

    # quick-setup collection "Q"
    @step("create_collection(Q, dimension=4)")
    def _(t):
        return t.c.create_collection(t.real("Q"), dimension=DIM)

    @step("describe_collection(Q)")
    def _(t):
        return t.c.describe_collection(t.real("Q"))

    @step("get_load_state(Q)")
    def _(t):
        return t.c.get_load_state(t.real("Q"))

    @step("list_indexes(Q) / describe_index(Q, vector)")
    def _(t):
        return {"list": t.c.list_indexes(t.real("Q")), "describe": t.c.describe_index(t.real("Q"), "vector")}

    @step("insert(Q, 10 rows with dynamic keys)")
    def _(t):
        return t.c.insert(t.real("Q"), quick_rows(10))

    @step("upsert(Q, id 3 existing + id 50 new)")
    def _(t):
        rows = [{"id": 3, "vector": vectors(1, 9)[0], "color": "gold", "n": 3},
                {"id": 50, "vector": vectors(1, 10)[0], "color": "gold", "n": 50}]
        return t.c.upsert(t.real("Q"), rows)

    @step("query(Q, n >= 7, output id,color)")
    def _(t):
        return sort_rows(t.c.query(t.real("Q"), filter="n >= 7", output_fields=["id", "color"], **STRONG), "id")

    @step("query(Q, default output fields, id in [0,1])")
    def _(t):
        return sort_rows(t.c.query(t.real("Q"), filter="id in [0, 1]", **STRONG), "id")

    @step("query(Q, count(*))")
    def _(t):
        return t.c.query(t.real("Q"), filter="", output_fields=["count(*)"], **STRONG)

    @step("query(Q, color like 'g%', limit 2)")
    def _(t):
        return sort_rows(t.c.query(t.real("Q"), filter='color like "g%"', output_fields=["id"], limit=2, **STRONG), "id")

    @step("get(Q, ids [2, 3, 999], output vector,color)")
    def _(t):
        return sort_rows(t.c.get(t.real("Q"), ids=[2, 3, 999], output_fields=["vector", "color"], **STRONG), "id")

    @step("search(Q, 1 vector, limit 3, output color,n)")
    def _(t):
        return sorted_hits(t.c.search(t.real("Q"), [quick_rows(10)[0]["vector"]], limit=3,
                                      output_fields=["color", "n"], **STRONG))

    @step("search(Q, 2 vectors, filter color != 'blue', limit 2)")
    def _(t):
        rows = quick_rows(10)
        return sorted_hits(t.c.search(t.real("Q"), [rows[1]["vector"], rows[2]["vector"]], limit=2,
                                      filter='color != "blue"', **STRONG))

    @step("search(Q, offset 2, limit 2, output *)")
    def _(t):
        return sorted_hits(t.c.search(t.real("Q"), [quick_rows(10)[5]["vector"]], limit=2,
                                      search_params={"offset": 2}, output_fields=["*"], **STRONG))

    @step("search(Q, filter matching nothing)")
    def _(t):
        return sorted_hits(t.c.search(t.real("Q"), [quick_rows(10)[5]["vector"]], limit=2, filter="n > 1000", **STRONG))

    @step("query(Q, n % 2 == 0 and color in [red, green], offset 1, limit 2)")
    def _(t):
        return t.c.query(t.real("Q"), filter='n % 2 == 0 and color in ["red", "green"]', output_fields=["id", "n"],
                         offset=1, limit=2, **STRONG)

    @step("query(Q, id in [])")
    def _(t):
        return t.c.query(t.real("Q"), filter="id in []", output_fields=["id"], **STRONG)

    @step("query(Q, dynamic key that no row has)")
    def _(t):
        return sort_rows(t.c.query(t.real("Q"), filter="id < 2", output_fields=["id", "nosuchkey"], **STRONG), "id")

    @step("delete(Q, ids [0, 1])")
    def _(t):
        return t.c.delete(t.real("Q"), ids=[0, 1])

    @step("delete(Q, ids [777, 778] that do not exist)")
    def _(t):
        return t.c.delete(t.real("Q"), ids=[777, 778])

    @step("delete(Q, filter color == 'blue')")
    def _(t):
        return t.c.delete(t.real("Q"), filter='color == "blue"')

    @step("query(Q, count(*)) after deletes")
    def _(t):
        return t.c.query(t.real("Q"), filter="", output_fields=["count(*)"], **STRONG)

    @step("flush(Q) + get_collection_stats(Q)")
    def _(t):
        t.c.flush(t.real("Q"))
        return t.c.get_collection_stats(t.real("Q"))

    @step("partitions: create p1, list, has")
    def _(t):
        t.c.create_partition(t.real("Q"), "p1")
        return {"list": t.c.list_partitions(t.real("Q")), "has": t.c.has_partition(t.real("Q"), "p1")}

    @step("insert(Q, partition p1) + query(partition_names=[p1])")
    def _(t):
        t.c.insert(t.real("Q"), quick_rows(2, start=200), partition_name="p1")
        return sort_rows(t.c.query(t.real("Q"), filter="id >= 0", output_fields=["id"], partition_names=["p1"],
                                   **STRONG), "id")

    # schema collection "S": Int64 pk, VarChar, Double, vector; L2 HNSW index; no dynamic field
    @step("create_collection(S, schema Int64 pk + VarChar + Double + vector, HNSW L2)")
    def _(t):
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("title", DataType.VARCHAR, max_length=32)
        schema.add_field("score", DataType.DOUBLE)
        schema.add_field("emb", DataType.FLOAT_VECTOR, dim=DIM)
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="emb", index_type="HNSW", metric_type="L2", params={"M": 8, "efConstruction": 64})
        return t.c.create_collection(t.real("S"), schema=schema, index_params=idx)

    @step("describe_collection(S)")
    def _(t):
        return t.c.describe_collection(t.real("S"))

    @step("describe_index(S, emb)")
    def _(t):
        return t.c.describe_index(t.real("S"), "emb")

    @step("insert(S, 6 rows)")
    def _(t):
        return t.c.insert(t.real("S"), schema_rows(6))

    @step("search(S, L2, filter score >= 0.5, output title)")
    def _(t):
        return sorted_hits(t.c.search(t.real("S"), [schema_rows(6)[5]["emb"]], limit=3, filter="score >= 0.5",
                                      output_fields=["title"], search_params={"params": {"ef": 16}}, **STRONG))

    @step("query(S, title in [t1, t2], output *)")
    def _(t):
        return sort_rows(t.c.query(t.real("S"), filter='title in ["t1", "t2"]', output_fields=["*"], **STRONG), "pk")

    @step("ERR query(S, output field that does not exist, no dynamic field)")
    def _(t):
        return t.c.query(t.real("S"), filter="pk > 0", output_fields=["nosuch"], **STRONG)

    @step("search(S, output *) + query(S, pk in [1000], output emb)")
    def _(t):
        return {"search": sorted_hits(t.c.search(t.real("S"), [schema_rows(6)[0]["emb"]], limit=1,
                                                 output_fields=["*"], **STRONG)),
                "query": t.c.query(t.real("S"), filter="pk in [1000]", output_fields=["emb"], **STRONG)}

    # VarChar pk "V"
    @step("create_collection(V, VarChar pk, IP)")
    def _(t):
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.VARCHAR, max_length=16, is_primary=True)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="vec", metric_type="IP")
        return t.c.create_collection(t.real("V"), schema=schema, index_params=idx)

    @step("insert(V) + delete(V, ids [k0, k1]) + upsert(V, k2)")
    def _(t):
        vs = vectors(4, 3)
        ins = t.c.insert(t.real("V"), [{"pk": f"k{i}", "vec": v} for i, v in enumerate(vs)])
        dele = t.c.delete(t.real("V"), ids=["k0", "k1"])
        up = t.c.upsert(t.real("V"), [{"pk": "k2", "vec": vs[3]}])
        return {"insert": ins, "delete": dele, "upsert": up}

    @step("search(V, IP, limit 4)")
    def _(t):
        return sorted_hits(t.c.search(t.real("V"), [vectors(4, 3)[3]], limit=4, **STRONG))

    # auto_id collection "A"
    @step("create_collection(A, auto_id=True) + insert 2 rows without id")
    def _(t):
        t.c.create_collection(t.real("A"), dimension=DIM, auto_id=True)
        res = t.c.insert(t.real("A"), [{"vector": v} for v in vectors(2, 4)])
        return {"insert_count": res["insert_count"], "ids_len": len(res["ids"]),
                "ids_are_int": all(isinstance(i, int) for i in res["ids"])}

    # bad inputs
    @step("ERR describe_collection(missing)")
    def _(t):
        return t.c.describe_collection(t.real("MISSING"))

    @step("ERR has_collection(missing)")
    def _(t):
        return t.c.has_collection(t.real("MISSING"))

    @step("ERR insert(Q, wrong dimension)")
    def _(t):
        return t.c.insert(t.real("Q"), [{"id": 900, "vector": [0.1, 0.2]}])

    @step("ERR insert(S, missing field title)")
    def _(t):
        return t.c.insert(t.real("S"), [{"pk": 1, "score": 1.0, "emb": vectors(1, 5)[0]}])

    @step("ERR insert(S, string into Double)")
    def _(t):
        return t.c.insert(t.real("S"), [{"pk": 1, "title": "x", "score": "high", "emb": vectors(1, 5)[0]}])

    @step("ERR insert(S, VarChar longer than max_length)")
    def _(t):
        return t.c.insert(t.real("S"), [{"pk": 1, "title": "x" * 40, "score": 1.0, "emb": vectors(1, 5)[0]}])

    @step("ERR query(Q, syntax error)")
    def _(t):
        return t.c.query(t.real("Q"), filter="n >>= 3", **STRONG)

    @step("ERR query(S, unknown field)")
    def _(t):
        return t.c.query(t.real("S"), filter="nosuch > 3", **STRONG)

    @step("ERR query(Q, empty filter without limit)")
    def _(t):
        return t.c.query(t.real("Q"), filter="", output_fields=["id"], **STRONG)

    @step("ERR search(Q, limit 0)")
    def _(t):
        return t.c.search(t.real("Q"), [vectors(1, 6)[0]], limit=0, **STRONG)

    @step("ERR search(Q, limit 16385)")
    def _(t):
        return t.c.search(t.real("Q"), [vectors(1, 6)[0]], limit=16385, **STRONG)

    @step("ERR search(Q, wrong query dimension)")
    def _(t):
        return t.c.search(t.real("Q"), [[0.1, 0.2]], limit=1, **STRONG)

    @step("ERR create_collection(Q) again with another dimension")
    def _(t):
        return t.c.create_collection(t.real("Q"), dimension=8)

    @step("ERR drop_partition(Q, _default)")
    def _(t):
        return t.c.drop_partition(t.real("Q"), "_default")

    @step("ERR create_partition(Q, p1) again")
    def _(t):
        return t.c.create_partition(t.real("Q"), "p1")

    @step("ERR query on a released collection")
    def _(t):
        t.c.release_collection(t.real("S"))
        return t.c.query(t.real("S"), filter="pk > 0", **STRONG)

    @step("get_load_state(S) after release")
    def _(t):
        return t.c.get_load_state(t.real("S"))

    @step("ERR describe_index(Q, missing index)")
    def _(t):
        return t.c.describe_index(t.real("Q"), "nosuch")

    @step("ERR drop_index(S, emb) while loaded elsewhere? (S released)")
    def _(t):
        return t.c.drop_index(t.real("S"), "emb")

    # sparse collection "SP": SPARSE_INVERTED_INDEX under IP, rows as {index: value} dicts
    @step("create_collection(SP, Int64 pk + SparseFloatVector, SPARSE_INVERTED_INDEX IP)")
    def _(t):
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("sv", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("g", DataType.INT64)
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="sv", index_name="sv", index_type="SPARSE_INVERTED_INDEX", metric_type="IP",
                      params={"inverted_index_algo": "DAAT_MAXSCORE"})
        return t.c.create_collection(t.real("SP"), schema=schema, index_params=idx)

    @step("describe_collection(SP) + describe_index(SP, sv)")
    def _(t):
        return {"collection": t.c.describe_collection(t.real("SP")), "index": t.c.describe_index(t.real("SP"), "sv")}

    @step("insert(SP, 8 sparse rows)")
    def _(t):
        return t.c.insert(t.real("SP"), sparse_rows())

    @step("get(SP, ids [0, 5], output sv)")
    def _(t):
        return sort_rows(t.c.get(t.real("SP"), ids=[0, 5], output_fields=["sv"], **STRONG), "pk")

    @step("search(SP, 2 sparse queries, limit 3, drop_ratio_search 0)")
    def _(t):
        return sorted_hits(t.c.search(t.real("SP"), anns_field="sv", data=[{1: 1.0, 7: 0.5}, {3: 2.0}], limit=3, output_fields=["g"],
                                      search_params={"params": {"drop_ratio_search": 0.0}}, **STRONG))

    @step("search(SP, drop_ratio_search 0.5, filter g == 1)")
    def _(t):
        return sorted_hits(t.c.search(t.real("SP"), anns_field="sv", data=[{1: 1.0, 2: 0.1, 7: 0.5}], limit=3, filter="g == 1",
                                      search_params={"params": {"drop_ratio_search": 0.5}}, **STRONG))

    @step("search(SP, query sharing no dimension)")
    def _(t):
        return sorted_hits(t.c.search(t.real("SP"), anns_field="sv", data=[{999: 1.0}], limit=3, **STRONG))

    @step("ERR insert(SP, negative sparse value)")
    def _(t):
        return t.c.insert(t.real("SP"), [{"pk": 100, "sv": {1: -1.0}, "g": 0}])

    @step("ERR search(SP, metric L2)")
    def _(t):
        return t.c.search(t.real("SP"), anns_field="sv", data=[{1: 1.0}], limit=3, search_params={"metric_type": "L2"}, **STRONG)

    @step("ERR search(SP, drop_ratio_search 1.5)")
    def _(t):
        return t.c.search(t.real("SP"), anns_field="sv", data=[{1: 1.0}], limit=3, search_params={"params": {"drop_ratio_search": 1.5}},
                          **STRONG)

    @step("release(SP) + drop_index + create_index(SP, SPARSE_WAND) + load + search")
    def _(t):
        t.c.release_collection(t.real("SP"))
        t.c.drop_index(t.real("SP"), "sv")
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="sv", index_name="sv", index_type="SPARSE_WAND", metric_type="IP")
        t.c.create_index(t.real("SP"), idx)
        t.c.load_collection(t.real("SP"))
        return sorted_hits(t.c.search(t.real("SP"), anns_field="sv", data=[{1: 1.0, 7: 0.5}], limit=3, **STRONG))

    @step("ERR create_index(SP, sparse with metric L2)")
    def _(t):
        t.c.release_collection(t.real("SP"))
        t.c.drop_index(t.real("SP"), "sv")
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="sv", index_name="sv", index_type="SPARSE_INVERTED_INDEX", metric_type="L2")
        return t.c.create_index(t.real("SP"), idx)

    # binary collection "B" (HAMMING, BIN_FLAT), float16 "H"
    @step("create_collection(B, BinaryVector dim 16, BIN_FLAT HAMMING) + insert + search")
    def _(t):
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("bv", DataType.BINARY_VECTOR, dim=16)
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="bv", index_type="BIN_FLAT", metric_type="HAMMING")
        t.c.create_collection(t.real("B"), schema=schema, index_params=idx)
        t.c.insert(t.real("B"), [{"pk": i, "bv": bytes([i, 255 - i])} for i in range(6)])
        return {"get": t.c.get(t.real("B"), ids=[2], output_fields=["bv"], **STRONG),
                "search": sorted_hits(t.c.search(t.real("B"), [bytes([3, 250])], limit=3, **STRONG))}

    @step("create_collection(H, Float16Vector dim 4, FLAT L2) + insert + get")
    def _(t):
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("hv", DataType.FLOAT16_VECTOR, dim=4)
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="hv", index_type="FLAT", metric_type="L2")
        t.c.create_collection(t.real("H"), schema=schema, index_params=idx)
        # little-endian float16 bytes of [1, 2, 3, 4] * (i + 1) / 4, exact in float16
        rows = [{"pk": i, "hv": float16_bytes([(j + 1) * (i + 1) / 4 for j in range(4)])} for i in range(4)]
        t.c.insert(t.real("H"), rows)
        # float32 query values on a Float16Vector field
        return {"get": t.c.get(t.real("H"), ids=[1], output_fields=["hv"], **STRONG),
                "search": sorted_hits(t.c.search(t.real("H"), [[0.5, 1, 1.5, 2]], limit=2, **STRONG))}

    # scalar indexes on "X"
    @step("create_collection(X, INVERTED on tag) + insert 12 rows")
    def _(t):
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
        schema.add_field("n", DataType.INT64)
        schema.add_field("cat", DataType.INT32)
        schema.add_field("tag", DataType.VARCHAR, max_length=16)
        schema.add_field("name", DataType.VARCHAR, max_length=16)
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="vec", index_type="FLAT", metric_type="L2")
        idx.add_index(field_name="tag", index_name="tag_idx", index_type="INVERTED")
        t.c.create_collection(t.real("X"), schema=schema, index_params=idx)
        return t.c.insert(t.real("X"), [{"pk": i, "vec": v, "n": i, "cat": i % 3, "tag": f"t{i % 4}",
                                         "name": f"name{i}"} for i, v in enumerate(vectors(12, 8))])

    for field, index_type in (("n", "STL_SORT"), ("cat", "BITMAP"), ("name", "Trie")):
        @step(f"create_index(X, {field}, {index_type}) + describe_index")
        def _(t, field=field, index_type=index_type):
            idx = t.c.prepare_index_params()
            idx.add_index(field_name=field, index_name=f"{field}_idx", index_type=index_type)
            t.c.create_index(t.real("X"), idx)
            return t.c.describe_index(t.real("X"), f"{field}_idx")

    @step("list_indexes(X) + describe_index(X, tag_idx)")
    def _(t):
        return {"list": sorted(t.c.list_indexes(t.real("X"))), "tag": t.c.describe_index(t.real("X"), "tag_idx")}

    @step("query(X) with filters on every indexed field")
    def _(t):
        out = {}
        for f in ("n >= 3 and n < 7", "cat == 1", 'tag in ["t0", "t3"]', 'name like "name1%"', "cat != 2 and n > 8"):
            out[f] = sorted(r["pk"] for r in t.c.query(t.real("X"), filter=f, output_fields=["pk"], **STRONG))
        return out

    @step("ERR create_index(X, Trie on Int64)")
    def _(t):
        idx = t.c.prepare_index_params()
        idx.add_index(field_name="cat", index_name="cat_trie", index_type="Trie")
        return t.c.create_index(t.real("X"), idx)

    @step("ERR alter_index_properties(X, n_idx) while loaded")
    def _(t):
        return t.c.alter_index_properties(t.real("X"), "n_idx", properties={"mmap.enabled": True})

    @step("release(X) + alter_index_properties(X, n_idx, mmap.enabled) + describe_index")
    def _(t):
        t.c.release_collection(t.real("X"))
        t.c.alter_index_properties(t.real("X"), "n_idx", properties={"mmap.enabled": True})
        return t.c.describe_index(t.real("X"), "n_idx")

    @step("drop_collection(Q, S, V, A, SP, B, H, X) + list_collections (ours)")
    def _(t):
        for p in COLLECTIONS:
            t.c.drop_collection(t.real(p))
        ours = set(t.names.values())
        return sorted(n for n in t.c.list_collections() if n in ours)

    return s


def run(target, flow):
    out = []
    for title, fn in flow:
        try:
            res = normalise(fn(target), target)
        except MilvusException as e:
            res = normalise(e, target)
        except Exception as e:  # noqa: BLE001 - e.g. UNIMPLEMENTED from an older milvus-lite
            res = {"error": {"exception": type(e).__name__, "message": str(e).splitlines()[0][:200]}}
        out.append(res)
    return out


def fmt(v):
    if v is None:
        return "null"
    s = json.dumps(v, ensure_ascii=False, sort_keys=True)
    s = s.replace("|", "\\|")
    return s if len(s) <= 160 else s[:157] + "..."


def report(labels, results, flow, other_version):
    a_label, b_label = labels
    a_res, b_res = results
    lines = [f"# Strata vs {b_label}", "",
             f"pymilvus MilvusClient flows run against both; `{a_label}` and `{b_label}` "
             f"({other_version}). Floats rounded to 4 places; collection names replaced by "
             f"placeholders ({', '.join(COLLECTIONS)}, MISSING); volatile keys ({', '.join(sorted(VOLATILE))}) dropped.", ""]
    same = sum(1 for a, b in zip(a_res, b_res) if a == b)
    lines += [f"**{same} of {len(flow)} steps identical.**", "", "| # | step | result |", "|---|---|---|"]
    for i, ((title, _), a, b) in enumerate(zip(flow, a_res, b_res), 1):
        lines.append(f"| {i} | {title} | {'same' if a == b else '**differs**'} |")
    lines.append("")
    for i, ((title, _), a, b) in enumerate(zip(flow, a_res, b_res), 1):
        if a == b:
            continue
        lines += [f"## {i}. {title}", "", f"| field | {a_label} | {b_label} |", "|---|---|---|"]
        fa, fb = flatten(a), flatten(b)
        for k in sorted(set(fa) | set(fb)):
            va, vb = fa.get(k, "∅"), fb.get(k, "∅")
            if va != vb:
                lines.append(f"| `{k}` | {fmt(va) if va != '∅' else '∅'} | {fmt(vb) if vb != '∅' else '∅'} |")
        lines.append("")
    lines += ["## Full responses", ""]
    for i, ((title, _), a, b) in enumerate(zip(flow, a_res, b_res), 1):
        lines += [f"<details><summary>{i}. {title}</summary>", "", f"{a_label}:", "```json",
                  json.dumps(a, indent=1, sort_keys=True, ensure_ascii=False), "```", f"{b_label}:", "```json",
                  json.dumps(b, indent=1, sort_keys=True, ensure_ascii=False), "```", "</details>", ""]
    return "\n".join(lines), same


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strata", required=True, help="Strata URI, e.g. http://127.0.0.1:19530")
    ap.add_argument("--lite-db", help="milvus-lite database file (created)")
    ap.add_argument("--other", help="instead of --lite-db: the URI of another Milvus server to compare with, "
                                    "e.g. a Milvus standalone at http://127.0.0.1:19531")
    ap.add_argument("--other-label", default=None, help="its name in the report")
    ap.add_argument("--report", required=True, help="markdown report to write")
    ap.add_argument("--strict", action="store_true", help="exit 1 when any step differs")
    args = ap.parse_args()
    # pymilvus logs every failed RPC at ERROR; the bad-input steps fail on purpose.
    for logger in ("pymilvus", "milvus_lite"):
        logging.getLogger(logger).setLevel(logging.CRITICAL)

    if bool(args.lite_db) == bool(args.other):
        ap.error("give one of --lite-db and --other")
    if args.other:
        label = args.other_label or "milvus"
        probe = MilvusClient(uri=args.other)
        try:
            other_version = f"server {probe.get_server_version()} at {args.other}"
        except Exception:  # noqa: BLE001
            other_version = f"server at {args.other}"
        probe.close()
    else:
        label = args.other_label or "milvus-lite"
        try:
            from importlib.metadata import version
            other_version = "milvus-lite " + version("milvus-lite")
        except Exception:  # noqa: BLE001
            other_version = "milvus-lite (version unknown)"

    suffix = uuid.uuid4().hex[:8]
    names = {p: f"cmp_{p.lower()}_{suffix}" for p in COLLECTIONS + ("MISSING",)}
    flow = steps()
    results = []
    for label, make in (("strata", lambda: MilvusClient(uri=args.strata)),
                        (label, lambda: MilvusClient(uri=args.other) if args.other else MilvusClient(args.lite_db))):
        t0 = time.time()
        client = make()
        target = Target(label, client, names)
        try:
            results.append(run(target, flow))
        finally:
            for p in COLLECTIONS:
                try:
                    client.drop_collection(names[p])
                except Exception:  # noqa: BLE001
                    pass
            client.close()
        print(f"compare_lite: {label}: {len(flow)} steps in {time.time() - t0:.1f}s", file=sys.stderr)

    text, same = report(("strata", label), results, flow, other_version)
    with open(args.report, "w") as f:
        f.write(text + "\n")
    print(f"compare_lite: {same} of {len(flow)} steps identical; report: {args.report}", file=sys.stderr)
    if args.strict and same != len(flow):
        sys.exit(1)


if __name__ == "__main__":
    main()
