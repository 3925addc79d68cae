"""The code of seed 002 (the write path chapter): a VarChar primary key,
four movies inserted, deletes by ids and by filter, an upsert, a flush.
The dataset download is replaced by fixtures/movies.json (the same fields as
MongoDB/embedded_movies, with synthetic 1536-dimensional embeddings)."""

import itertools
import json
import pathlib

import pytest
from pymilvus import DataType, MilvusClient, MilvusException

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "movies.json"


def load_dataset():
    with open(FIXTURE) as f:
        return iter(json.load(f))


@pytest.fixture()
def movies(client: MilvusClient):
    name = "ch6_movies"
    if client.has_collection(name):
        client.drop_collection(name)
    yield name
    client.drop_collection(name)


def test_seed_write_path(client: MilvusClient, movies):
    # --- as in the seed ---
    schema = MilvusClient.create_schema()
    schema.add_field(field_name="id", datatype=DataType.VARCHAR, max_length=64, is_primary=True)
    schema.add_field(field_name="title", datatype=DataType.VARCHAR, max_length=512)
    schema.add_field(field_name="plot", datatype=DataType.VARCHAR, max_length=65535)
    schema.add_field(field_name="genre", datatype=DataType.VARCHAR, max_length=64)
    schema.add_field(field_name="embedding", datatype=DataType.FLOAT_VECTOR, dim=1536)
    client.create_collection(collection_name=movies, schema=schema)

    dataset = load_dataset()
    rows = []
    for row in itertools.islice(dataset, 10):
        if len(rows) >= 4:
            break
        if row.get("plot_embedding") and row.get("genres"):
            rows.append({
                "id": row["_id"],
                "title": row["title"],
                "plot": row.get("plot", ""),
                "genre": row["genres"][0],
                "embedding": row["plot_embedding"],
            })
    insert_res = client.insert(collection_name=movies, data=rows)
    assert insert_res["insert_count"] == 4
    assert list(insert_res["ids"]) == [r["id"] for r in rows]

    ids_to_delete = rows[0]["id"]
    client.delete(collection_name=movies, ids=[ids_to_delete])
    # The seed's filter is `id < 573a…` with the string unquoted: not a valid
    # expression for a VarChar key, in Milvus as here.
    with pytest.raises(MilvusException):
        client.delete(collection_name=movies, filter=f"id < {ids_to_delete}")
    # The quoted form is valid, but a delete by filter queries the matching
    # keys first, so (as in Milvus) it needs the collection loaded.
    with pytest.raises(MilvusException) as e:
        client.delete(collection_name=movies, filter=f'id < "{ids_to_delete}"')
    assert e.value.code == 101

    upsert_entities = []
    if len(rows) > 2:
        upsert_entities.append({
            "id": rows[2]["id"],
            "title": "Updated Title",
            "plot": "Updated plot content",
            "genre": rows[2]["genre"],
            "embedding": rows[2]["embedding"],
        })
    for i in range(4, min(6, len(rows))):
        upsert_entities.append({
            "id": rows[i]["id"], "title": rows[i]["title"], "plot": rows[i]["plot"],
            "genre": rows[i]["genre"], "embedding": rows[i]["embedding"],
        })
    upsert_res = client.upsert(collection_name=movies, data=upsert_entities)
    assert upsert_res["upsert_count"] == 1

    client.flush(collection_name=movies)

    # --- what the chapter says should now hold ---
    params = client.prepare_index_params()
    params.add_index(field_name="embedding", metric_type="COSINE")
    client.create_index(movies, params)
    client.load_collection(movies)
    # rows[0] has the smallest id, so the quoted filter deletes nothing more.
    assert client.delete(collection_name=movies, filter=f'id < "{ids_to_delete}"')["delete_count"] == 0
    left = client.query(movies, filter="", output_fields=["id", "title"], limit=10, consistency_level="Strong")
    assert sorted(r["id"] for r in left) == sorted(r["id"] for r in rows[1:])
    by_id = {r["id"]: r["title"] for r in left}
    assert by_id[rows[2]["id"]] == "Updated Title"
    hits = client.search(movies, data=[rows[3]["embedding"]], limit=1, output_fields=["genre"],
                         consistency_level="Strong")
    assert hits[0][0]["id"] == rows[3]["id"]
    assert hits[0][0]["entity"]["genre"] == rows[3]["genre"]
    assert int(client.get_collection_stats(movies)["row_count"]) >= 3
