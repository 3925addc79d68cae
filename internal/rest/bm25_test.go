package rest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBM25FullText: a collection with a BM25 function created through REST
// v2, described with its function, filled with texts only, searched with a
// query text (alone and in a hybrid search with a dense field), and the
// output field refused by name.
func TestBM25FullText(t *testing.T) {
	c := &client{t: t, base: startServer(t), headers: map[string]string{"Accept-Type-Allow-Int64": "true"}}
	c.call("collections/create", m{
		"collectionName": "docs",
		"schema": m{
			"fields": []m{
				{"fieldName": "id", "dataType": "Int64", "isPrimary": true},
				{"fieldName": "text", "dataType": "VarChar", "elementTypeParams": m{"max_length": 200, "enable_analyzer": true}},
				{"fieldName": "sparse", "dataType": "SparseFloatVector"},
				{"fieldName": "dense", "dataType": "FloatVector", "elementTypeParams": m{"dim": 2}},
			},
			"functions": []m{{"name": "bm25", "type": "BM25", "inputFieldNames": []string{"text"}, "outputFieldNames": []string{"sparse"}}},
		},
		"indexParams": []m{
			{
				"fieldName": "sparse", "indexName": "sparse", "metricType": "BM25", "indexType": "SPARSE_INVERTED_INDEX",
				"params": m{"bm25_k1": 1.2, "bm25_b": 0.75},
			},
			{"fieldName": "dense", "indexName": "dense", "metricType": "L2", "indexType": "FLAT"},
		},
	})
	d := decode[m](t, c.call("collections/describe", m{"collectionName": "docs"}))
	fns := d["functions"].([]any)
	require.Len(t, fns, 1)
	fn := fns[0].(map[string]any)
	require.Equal(t, "BM25", fn["type"])
	require.Equal(t, []any{"text"}, fn["inputFieldNames"])
	require.Equal(t, []any{"sparse"}, fn["outputFieldNames"])

	c.call("entities/insert", m{"collectionName": "docs", "data": []m{
		{"id": 1, "text": "the brown fox", "dense": []float64{0, 0}},
		{"id": 2, "text": "a lazy dog sleeps", "dense": []float64{1, 1}},
		{"id": 3, "text": "fox and dog and fox", "dense": []float64{5, 5}},
	}})
	s := decode[[]m](t, c.call("entities/search", m{
		"collectionName": "docs", "data": []string{"fox"},
		"annsField": "sparse", "limit": 10, "outputFields": []string{"text"}, "consistencyLevel": "Strong",
	}))
	require.Len(t, s, 2)
	require.Equal(t, float64(3), s[0]["id"], "two occurrences outweigh a shorter document")
	require.Equal(t, float64(1), s[1]["id"])
	require.Greater(t, s[0]["distance"], s[1]["distance"])

	h := decode[[]m](t, c.call("entities/hybrid_search", m{
		"collectionName": "docs",
		"search": []m{
			{"data": []string{"dog"}, "annsField": "sparse", "limit": 3},
			{"data": [][]float64{{1, 1}}, "annsField": "dense", "limit": 3},
		},
		"rerank": m{"strategy": "rrf", "params": m{"k": 60}}, "limit": 3, "consistencyLevel": "Strong",
	}))
	require.NotEmpty(t, h)
	require.Equal(t, float64(2), h[0]["id"], "first in both lists")

	r := c.fail("entities/query", m{"collectionName": "docs", "filter": "id > 0", "outputFields": []string{"sparse"}})
	require.Contains(t, r.Message, "not allowed to retrieve raw data of field sparse")
	r = c.fail("entities/insert", m{"collectionName": "docs", "data": []m{{"id": 4, "text": "x", "sparse": m{"1": 1}, "dense": []float64{0, 0}}}})
	require.Contains(t, r.Message, "function output field")
}
