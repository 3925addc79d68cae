"""LangChain (langchain-milvus) over Strata: a BM25-only store and a hybrid
dense + BM25 store built with Milvus(builtin_function=BM25BuiltInFunction()),
as the LangChain docs show them. Expected orders and scores are computed in
bm25ref from the texts alone."""

import warnings

import pytest
from langchain_core.embeddings import Embeddings
from langchain_milvus import BM25BuiltInFunction, Milvus

from bm25ref import DOCS, bm25, embed, l2, rrf

QUERY = "zebra equine"


class FakeEmbeddings(Embeddings):
    """bm25ref.embed behind LangChain's Embeddings interface."""

    def embed_documents(self, texts):
        return [embed(t) for t in texts]

    def embed_query(self, text):
        return embed(text)


def ids():
    return [f"d{i}" for i in range(len(DOCS))]


def doc_index(doc):
    return int(doc.metadata["pk"][1:])


def test_bm25_only_store_scores(uri, name):
    store = Milvus(embedding_function=None, builtin_function=BM25BuiltInFunction(),
                   vector_field="sparse", connection_args={"uri": uri}, collection_name=name,
                   consistency_level="Strong", drop_old=True)
    assert store.add_texts(DOCS, ids=ids()) == ids()
    want = bm25(DOCS, QUERY)
    hits = store.similarity_search_with_score(QUERY, k=len(DOCS))
    got = [(doc_index(d), s) for d, s in hits]
    order = sorted((i for i in range(len(DOCS)) if want[i] > 0), key=lambda i: -want[i])
    assert [i for i, _ in got] == order  # only the docs that share a term, best first
    for i, s in got:
        assert s == pytest.approx(want[i], rel=1e-4), (i, s, want[i])
    assert hits[0][0].page_content == DOCS[2]  # "The zebra is an African equine ..."
    store.client.drop_collection(name)


def test_hybrid_store(uri, name):
    store = Milvus(embedding_function=FakeEmbeddings(), builtin_function=BM25BuiltInFunction(),
                   vector_field=["dense", "sparse"], connection_args={"uri": uri}, collection_name=name,
                   consistency_level="Strong", drop_old=True)
    store.add_texts(DOCS, ids=ids())
    n = len(DOCS)
    bm = bm25(DOCS, QUERY)
    bm_order = sorted((i for i in range(n) if bm[i] > 0), key=lambda i: -bm[i])
    q = embed(QUERY)
    dense_order = sorted(range(n), key=lambda i: l2(embed(DOCS[i]), q))  # the default index's L2
    assert bm_order[0] != dense_order[0]  # the test tells the two rankings apart

    def search(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # ranker_type is the documented way in 0.3
            return [(doc_index(d), s) for d, s in store.similarity_search_with_score(QUERY, k=n, fetch_k=n, **kw)]

    # The weights pick a side: BM25 alone puts the BM25-relevant doc first.
    got = search(ranker_type="weighted", ranker_params={"weights": [0.0, 1.0]})
    assert [i for i, _ in got[: len(bm_order)]] == bm_order
    got = search(ranker_type="weighted", ranker_params={"weights": [1.0, 0.0]})
    assert [i for i, _ in got] == dense_order

    # RRF fuses both rankings: the BM25 top doc (3rd in the dense ranking) wins.
    want = rrf([dense_order, bm_order], k=60)
    got = search(ranker_type="rrf", ranker_params={"k": 60})
    assert got[0][0] == max(want, key=want.get) == bm_order[0]
    assert sorted(i for i, _ in got) == sorted(want)
    for i, s in got:
        assert s == pytest.approx(want[i], rel=1e-5), (i, s, want[i])
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    store.client.drop_collection(name)
