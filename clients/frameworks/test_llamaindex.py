"""LlamaIndex (llama-index-vector-stores-milvus) over Strata:
MilvusVectorStore(enable_sparse=True, sparse_embedding_function=
BM25BuiltInFunction(), hybrid_ranker=...) queried in HYBRID and TEXT_SEARCH
modes with a fake dense embedding; expected orders come from bm25ref."""

from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode
from llama_index.vector_stores.milvus import MilvusVectorStore
from llama_index.vector_stores.milvus.utils import BM25BuiltInFunction

from bm25ref import DIM, DOCS, bm25, embed, ip, rrf

QUERY = "zebra equine"


def store_with_docs(uri, name, **kw):
    store = MilvusVectorStore(uri=uri, collection_name=name, dim=DIM, overwrite=True, enable_sparse=True,
                              sparse_embedding_function=BM25BuiltInFunction(), similarity_metric="IP",
                              consistency_level="Strong", use_async_client=False, **kw)
    nodes = [TextNode(id_=f"d{i}", text=t, embedding=embed(t)) for i, t in enumerate(DOCS)]
    assert store.add(nodes) == [f"d{i}" for i in range(len(DOCS))]
    return store


def orders():
    n = len(DOCS)
    bm = bm25(DOCS, QUERY)
    bm_order = [f"d{i}" for i in sorted((i for i in range(n) if bm[i] > 0), key=lambda i: -bm[i])]
    q = embed(QUERY)
    dense_order = [f"d{i}" for i in sorted(range(n), key=lambda i: -ip(embed(DOCS[i]), q))]
    return bm, bm_order, dense_order


def query(store, mode, k):
    return store.query(VectorStoreQuery(query_str=QUERY, query_embedding=embed(QUERY),
                                        similarity_top_k=k, mode=mode))


def test_hybrid_rrf(uri, name):
    store = store_with_docs(uri, name, hybrid_ranker="RRFRanker", hybrid_ranker_params={"k": 60})
    _, bm_order, dense_order = orders()
    assert bm_order[0] != dense_order[0]
    n = len(DOCS)
    res = query(store, VectorStoreQueryMode.HYBRID, n)
    want = rrf([dense_order, bm_order], k=60)
    assert res.ids[0] == max(want, key=want.get) == bm_order[0] == "d2"
    assert res.nodes[0].get_content() == DOCS[2]
    assert sorted(res.ids) == sorted(want)
    for i, s in zip(res.ids, res.similarities):
        assert abs(s - want[i]) <= 1e-5 * want[i], (i, s, want[i])
    store.client.drop_collection(name)


def test_hybrid_weighted_and_text_search(uri, name):
    store = store_with_docs(uri, name, hybrid_ranker="WeightedRanker", hybrid_ranker_params={"weights": [0.0, 1.0]})
    bm, bm_order, _ = orders()
    n = len(DOCS)
    res = query(store, VectorStoreQueryMode.HYBRID, n)
    assert res.ids[: len(bm_order)] == bm_order  # BM25's weight alone: BM25's order
    # TEXT_SEARCH is the sparse (BM25) search alone; its scores are BM25's.
    res = query(store, VectorStoreQueryMode.TEXT_SEARCH, 3)
    assert res.ids == bm_order[:3]
    for i, s in zip(res.ids, res.similarities):
        want = bm[int(i[1:])]
        assert abs(s - want) <= 1e-4 * want, (i, s, want)
    store.client.drop_collection(name)


def test_async_client_default(uri, name):
    """The store's defaults (use_async_client=True): async add and queries."""
    import asyncio

    async def run():
        store = MilvusVectorStore(uri=uri, collection_name=name, dim=DIM, overwrite=True, enable_sparse=True,
                                  sparse_embedding_function=BM25BuiltInFunction(), consistency_level="Strong")
        nodes = [TextNode(id_=f"d{i}", text=t, embedding=embed(t)) for i, t in enumerate(DOCS)]
        assert await store.async_add(nodes) == [f"d{i}" for i in range(len(DOCS))]
        text = await store.aquery(VectorStoreQuery(query_str=QUERY, similarity_top_k=3,
                                                   mode=VectorStoreQueryMode.TEXT_SEARCH))
        hybrid = await store.aquery(VectorStoreQuery(query_str=QUERY, query_embedding=embed(QUERY),
                                                     similarity_top_k=len(DOCS), mode=VectorStoreQueryMode.HYBRID))
        store.client.drop_collection(name)
        return text, hybrid

    text, hybrid = asyncio.run(run())
    bm, bm_order, dense_order = orders()
    assert text.ids == bm_order[:3]
    for i, s in zip(text.ids, text.similarities):
        assert abs(s - bm[int(i[1:])]) <= 1e-4 * bm[int(i[1:])]
    want = rrf([dense_order, bm_order], k=60)  # the default hybrid_ranker: RRFRanker, k 60
    assert hybrid.ids[0] == max(want, key=want.get) == "d2"
    for i, s in zip(hybrid.ids, hybrid.similarities):
        assert abs(s - want[i]) <= 1e-5 * want[i], (i, s, want[i])
