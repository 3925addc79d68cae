package rest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSparseVectors: a sparse field through REST v2: created in the schema
// form with a sparse index, rows inserted as {"index": value} objects or
// {"indices", "values"} pairs (unsorted is fine), queried back as objects,
// searched with the same forms; malformed vectors are refused.
func TestSparseVectors(t *testing.T) {
	c := &client{t: t, base: startServer(t), headers: map[string]string{"Accept-Type-Allow-Int64": "true"}}
	c.call("collections/create", m{
		"collectionName": "docs",
		"schema": m{"fields": []m{
			{"fieldName": "id", "dataType": "Int64", "isPrimary": true},
			{"fieldName": "sv", "dataType": "SparseFloatVector"},
		}},
		"indexParams": []m{{
			"fieldName": "sv", "indexName": "sv", "metricType": "IP", "indexType": "SPARSE_WAND",
			"params": m{"drop_ratio_build": 0.1},
		}},
	})
	c.call("entities/insert", m{"collectionName": "docs", "data": []m{
		{"id": 1, "sv": m{"3": 0.5, "10": 1.25}},
		{"id": 2, "sv": m{"indices": []int{7, 3}, "values": []float64{2, 0.25}}},
		{"id": 3, "sv": m{}},
		{"id": 4, "sv": m{"4294967294": 1}},
	}})
	q := decode[[]m](t, c.call("entities/query", m{
		"collectionName": "docs", "filter": "id > 0",
		"outputFields": []string{"id", "sv"}, "consistencyLevel": "Strong",
	}))
	require.Len(t, q, 4)
	byID := map[float64]any{}
	for _, r := range q {
		byID[r["id"].(float64)] = r["sv"]
	}
	require.Equal(t, m{"3": 0.5, "10": 1.25}, byID[1])
	require.Equal(t, m{"3": 0.25, "7": float64(2)}, byID[2])
	require.Equal(t, m{}, byID[3])
	require.Equal(t, m{"4294967294": float64(1)}, byID[4])

	s := decode[[]m](t, c.call("entities/search", m{
		"collectionName": "docs", "data": []m{{"3": 2, "7": 1}},
		"annsField": "sv", "limit": 10, "searchParams": m{"params": m{"drop_ratio_search": 0.2}},
		"consistencyLevel": "Strong",
	}))
	require.Len(t, s, 2, "rows sharing no dimension with the query are not hits")
	require.Equal(t, float64(2), s[0]["id"])
	require.InDelta(t, 2.5, s[0]["distance"], 1e-6)
	require.Equal(t, float64(1), s[1]["id"])
	require.InDelta(t, 1.0, s[1]["distance"], 1e-6)
	s = decode[[]m](t, c.call("entities/search", m{
		"collectionName": "docs",
		"data":           []m{{"indices": []int{10}, "values": []float64{1}}}, "annsField": "sv", "limit": 10,
		"consistencyLevel": "Strong",
	}))
	require.Len(t, s, 1)

	for _, bad := range []any{
		m{"3": -1},
		m{"x": 1},
		m{"4294967295": 1},
		m{"indices": []int{1, 1}, "values": []float64{1, 2}},
		m{"indices": []int{1}, "values": []float64{1, 2}},
		m{"indices": []int{1}},
		[]float64{1, 2},
	} {
		r := c.fail("entities/insert", m{"collectionName": "docs", "data": []m{{"id": 9, "sv": bad}}})
		require.Contains(t, r.Message, `"sv"`, "%v", bad)
		c.fail("entities/search", m{"collectionName": "docs", "data": []any{bad}, "annsField": "sv", "limit": 3})
	}
	c.fail("indexes/create", m{"collectionName": "docs", "indexParams": []m{{
		"fieldName": "sv", "indexName": "x",
		"metricType": "L2", "indexType": "SPARSE_INVERTED_INDEX",
	}}})
}
