package rest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteChecksMatchGRPC: the REST write paths run the proxy's checks: a
// VarChar auto-ID key gets string IDs that are then served, an insert that
// holds a key twice stores its last row, and an upsert that does is refused
// with 1100.
func TestWriteChecksMatchGRPC(t *testing.T) {
	c := &client{t: t, base: startServer(t)}
	c.call("collections/create", m{
		"collectionName": "vauto", "dimension": 2, "autoID": true, "idType": "VarChar",
		"params": m{"max_length": 32, "consistencyLevel": "Strong"},
	})
	ins := decode[m](t, c.call("entities/insert", m{"collectionName": "vauto", "data": []m{
		{"vector": []float32{1, 0}}, {"vector": []float32{0, 1}},
	}}))
	ids := ins["insertIds"].([]any)
	require.Len(t, ids, 2)
	for _, id := range ids {
		require.IsType(t, "", id, "a VarChar auto-ID key returns string IDs")
	}
	got := decode[[]m](t, c.call("entities/get", m{"collectionName": "vauto", "id": ids, "outputFields": []string{"id"}}))
	require.Len(t, got, 2)
	c.call("collections/flush", m{"collectionName": "vauto"})
	got = decode[[]m](t, c.call("entities/query", m{"collectionName": "vauto", "filter": `id != ""`, "outputFields": []string{"id"}}))
	require.ElementsMatch(t, ids, []any{got[0]["id"], got[1]["id"]})

	c.call("collections/create", m{
		"collectionName": "dups", "dimension": 2,
		"params": m{"consistencyLevel": "Strong", "enableDynamicField": false},
	})
	ins = decode[m](t, c.call("entities/insert", m{"collectionName": "dups", "data": []m{
		{"id": 1, "vector": []float32{1, 0}}, {"id": 1, "vector": []float32{0, 1}}, {"id": 2, "vector": []float32{1, 1}},
	}}))
	require.EqualValues(t, 3, ins["insertCount"], "every row of the request, as Milvus counts")
	got = decode[[]m](t, c.call("entities/get", m{"collectionName": "dups", "id": 1, "outputFields": []string{"vector"}}))
	require.Len(t, got, 1)
	require.Equal(t, []any{0.0, 1.0}, got[0]["vector"], "the later row of the batch wins")
	r := c.fail("entities/upsert", m{"collectionName": "dups", "data": []m{
		{"id": 2, "vector": []float32{1, 0}}, {"id": 2, "vector": []float32{0, 1}},
	}})
	require.Equal(t, int32(1100), r.Code)
	require.Contains(t, r.Message, "duplicate primary keys are not allowed in the same batch")
}
