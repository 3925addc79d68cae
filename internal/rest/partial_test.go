package rest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpsertPartial: an upsert with partialUpdate sends only the fields its
// rows give, so the stored vector and the other fields stay; fieldOps
// (ARRAY_APPEND here) imply it; an unknown op name is refused with 1100.
func TestUpsertPartial(t *testing.T) {
	c := &client{t: t, base: startServer(t)}
	c.call("collections/create", m{
		"collectionName": "pu", "schema": m{"fields": []m{
			{"fieldName": "id", "dataType": "Int64", "isPrimary": true},
			{"fieldName": "vector", "dataType": "FloatVector", "elementTypeParams": m{"dim": 2}},
			{"fieldName": "name", "dataType": "VarChar", "elementTypeParams": m{"max_length": 16}},
			{"fieldName": "tags", "dataType": "Array", "elementDataType": "Int64", "elementTypeParams": m{"max_capacity": 4}},
		}}, "indexParams": []m{{"fieldName": "vector", "metricType": "L2", "indexName": "vector"}},
		"params": m{"consistencyLevel": "Strong"},
	})
	c.call("entities/insert", m{"collectionName": "pu", "data": []m{
		{"id": 1, "vector": []float32{1, 0}, "name": "one", "tags": []int{1}},
	}})

	up := decode[m](t, c.call("entities/upsert", m{
		"collectionName": "pu", "partialUpdate": true,
		"data": []m{{"id": 1, "name": "uno"}},
	}))
	require.EqualValues(t, 1, up["upsertCount"])
	c.call("entities/upsert", m{
		"collectionName": "pu", "fieldOps": []m{{"fieldName": "tags", "op": "array_append"}},
		"data": []m{{"id": 1, "tags": []int{2, 3}}},
	})
	got := decode[[]m](t, c.call("entities/get", m{"collectionName": "pu", "id": 1, "outputFields": []string{"vector", "name", "tags"}}))
	require.Len(t, got, 1)
	require.Equal(t, []any{1.0, 0.0}, got[0]["vector"])
	require.Equal(t, "uno", got[0]["name"])
	require.Equal(t, []any{"1", "2", "3"}, got[0]["tags"])

	r := c.fail("entities/upsert", m{
		"collectionName": "pu", "fieldOps": []m{{"fieldName": "tags", "op": "BOGUS"}},
		"data": []m{{"id": 1, "tags": []int{2}}},
	})
	require.Equal(t, int32(1100), r.Code)
	require.Equal(t, "unsupported partial update op: BOGUS: invalid parameter", r.Message)
}
