package rest_test

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestByteVectors inserts, queries and searches binary, float16, bfloat16
// and int8 vectors over REST in both encodings Milvus accepts (arrays and
// base64), and checks the output encodings (base64, int8 arrays).
func TestByteVectors(t *testing.T) {
	c := &client{t: t, base: startServer(t), headers: map[string]string{"Accept-Type-Allow-Int64": "true"}}
	b64 := base64.StdEncoding.EncodeToString
	c.call("collections/create", m{
		"collectionName": "bv",
		"schema": m{"fields": []m{
			{"fieldName": "id", "dataType": "Int64", "isPrimary": true},
			{"fieldName": "bin", "dataType": "BinaryVector", "elementTypeParams": m{"dim": 16}},
			{"fieldName": "f16", "dataType": "Float16Vector", "elementTypeParams": m{"dim": 2}},
			{"fieldName": "bf16", "dataType": "BFloat16Vector", "elementTypeParams": m{"dim": 2}},
			{"fieldName": "i8", "dataType": "Int8Vector", "elementTypeParams": m{"dim": 3}},
		}},
		"indexParams": []m{
			{"fieldName": "bin", "indexName": "bin", "indexType": "BIN_FLAT"},
			{"fieldName": "f16", "indexName": "f16", "metricType": "L2", "indexType": "FLAT"},
			{"fieldName": "bf16", "indexName": "bf16", "metricType": "IP", "indexType": "FLAT"},
			{"fieldName": "i8", "indexName": "i8", "metricType": "COSINE", "indexType": "HNSW"},
		},
	})
	idx := decode[[]m](t, c.call("indexes/describe", m{"collectionName": "bv", "indexName": "bin"}))
	require.Equal(t, "HAMMING", idx[0]["metricType"], "binary vectors default to HAMMING")

	// float16 1, 0.5 = 0x3c00, 0x3800; -2, 0.25 = 0xc000, 0x3400.
	// bfloat16 1, 2 = 0x3f80, 0x4000.
	c.call("entities/insert", m{"collectionName": "bv", "data": []m{
		{"id": 1, "bin": []int{255, 1}, "f16": []float64{1, 0.5}, "bf16": b64([]byte{0x80, 0x3f, 0x00, 0x40}), "i8": []int{-1, 2, 127}},
		{"id": 2, "bin": b64([]byte{0, 0x80}), "f16": b64([]byte{0x00, 0xc0, 0x00, 0x34}), "bf16": []float64{3, -1}, "i8": []int{5, 5, 5}},
	}})
	q := decode[[]m](t, c.call("entities/query", m{
		"collectionName": "bv", "filter": "id > 0",
		"outputFields": []string{"*"}, "consistencyLevel": "Strong",
	}))
	require.Len(t, q, 2)
	if q[0]["id"] != float64(1) {
		q[0], q[1] = q[1], q[0]
	}
	require.Equal(t, b64([]byte{255, 1}), q[0]["bin"])
	require.Equal(t, b64([]byte{0x00, 0x3c, 0x00, 0x38}), q[0]["f16"])
	require.Equal(t, b64([]byte{0x80, 0x3f, 0x00, 0x40}), q[0]["bf16"])
	require.Equal(t, []any{float64(-1), float64(2), float64(127)}, q[0]["i8"])
	require.Equal(t, b64([]byte{0, 0x80}), q[1]["bin"])
	require.Equal(t, b64([]byte{0x00, 0xc0, 0x00, 0x34}), q[1]["f16"])
	require.Equal(t, b64([]byte{0x40, 0x40, 0x80, 0xbf}), q[1]["bf16"])

	search := func(field string, data any, metric string) []m {
		sp := m{}
		if metric != "" {
			sp["metricType"] = metric
		}
		return decode[[]m](t, c.call("entities/search", m{
			"collectionName": "bv", "annsField": field, "data": data,
			"limit": 2, "searchParams": sp, "consistencyLevel": "Strong",
		}))
	}
	s := search("bin", [][]int{{255, 0}}, "")
	require.Equal(t, float64(1), s[0]["id"])
	require.Equal(t, float64(1), s[0]["distance"], "one differing bit")
	require.Equal(t, float64(9), s[1]["distance"])
	s = search("bin", []string{b64([]byte{0, 0x80})}, "HAMMING")
	require.Equal(t, float64(2), s[0]["id"])
	require.Equal(t, float64(0), s[0]["distance"])
	s = search("f16", [][]float64{{-2, 0.25}}, "L2")
	require.Equal(t, float64(2), s[0]["id"])
	require.Equal(t, float64(0), s[0]["distance"])
	s = search("f16", []string{b64([]byte{0x00, 0x3c, 0x00, 0x38})}, "")
	require.Equal(t, float64(1), s[0]["id"])
	s = search("bf16", [][]float64{{1, 0}}, "IP")
	require.Equal(t, float64(2), s[0]["id"])
	require.Equal(t, float64(3), s[0]["distance"])
	s = search("i8", [][]int{{-1, 2, 127}}, "COSINE")
	require.Equal(t, float64(1), s[0]["id"])
	require.InDelta(t, 1, s[0]["distance"], 1e-6)

	// Bad input names the field and the problem.
	r := c.fail("entities/insert", m{"collectionName": "bv", "data": []m{
		{"id": 3, "bin": []int{256, 0}, "f16": []float64{1, 0}, "bf16": []float64{1, 0}, "i8": []int{0, 0, 0}},
	}})
	require.Contains(t, r.Message, `"bin"`)
	r = c.fail("entities/insert", m{"collectionName": "bv", "data": []m{
		{"id": 3, "bin": []int{1, 0}, "f16": []float64{1, 0, 2}, "bf16": []float64{1, 0}, "i8": []int{0, 0, 0}},
	}})
	require.Contains(t, r.Message, `"f16"`)
	r = c.fail("entities/insert", m{"collectionName": "bv", "data": []m{
		{"id": 3, "bin": []int{1, 0}, "f16": []float64{1, 0}, "bf16": b64([]byte{1}), "i8": []int{0, 0, 0}},
	}})
	require.Contains(t, r.Message, `"bf16"`)
	r = c.fail("entities/insert", m{"collectionName": "bv", "data": []m{
		{"id": 3, "bin": []int{1, 0}, "f16": []float64{1, 0}, "bf16": []float64{1, 0}, "i8": []int{0, 200, 0}},
	}})
	require.Contains(t, r.Message, `"i8"`)
	r = c.fail("entities/search", m{"collectionName": "bv", "annsField": "bin", "data": [][]int{{1, 2, 3}}, "limit": 1})
	require.Contains(t, r.Message, "3 bytes")
	r = c.fail("entities/search", m{
		"collectionName": "bv", "annsField": "bin", "data": [][]int{{1, 2}}, "limit": 1,
		"searchParams": m{"metricType": "L2"},
	})
	require.Contains(t, r.Message, "L2")
}
