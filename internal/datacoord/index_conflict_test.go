package datacoord

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// TestJSONPathIndexes checks Milvus 2.6's rules for several indexes on one
// JSON field: one per json_path, conflicts refused with code 65535, and
// the set surviving a restart.
func TestJSONPathIndexes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.coord(t)
	jp := func(name, path, cast string) catalog.IndexInfo {
		return catalog.IndexInfo{
			CollectionID: 100, FieldID: 105, Name: name,
			Params: map[string]string{"index_type": "INVERTED", "json_path": path, "json_cast_type": cast},
		}
	}
	require.NoError(t, c.CreateIndex(ctx, jp("a", `j['a']`, "double")))
	require.NoError(t, c.CreateIndex(ctx, jp("ab", `j['a']['b']`, "varchar")))
	require.NoError(t, c.CreateIndex(ctx, jp("whole", `j`, "JSON")))
	// The same definition again, the cast type in another case and the
	// path quoted otherwise, is a no-op.
	require.NoError(t, c.CreateIndex(ctx, jp("a", `j["a"]`, "DOUBLE")))
	require.Len(t, indexesOf(t, c, 100), 3)

	for _, tc := range []struct {
		idx catalog.IndexInfo
		msg string
	}{
		{jp("a", `j['a']`, "varchar"), "CreateIndex failed: at most one distinct index is allowed per field"},
		{jp("a", `j['c']`, "double"), "CreateIndex failed: at most one distinct index is allowed per field"},
		{jp("a2", `j["a"]`, "double"), "CreateIndex failed: creating multiple indexes on same field is not supported"},
		{jp("a3", `j['a']`, "bool"), "CreateIndex failed: creating multiple indexes on same field is not supported"},
		{
			catalog.IndexInfo{CollectionID: 100, FieldID: 105, Name: "plain", Params: map[string]string{"index_type": "INVERTED"}},
			"CreateIndex failed: creating multiple indexes on same field is not supported",
		},
	} {
		err := c.CreateIndex(ctx, tc.idx)
		require.ErrorContains(t, err, tc.msg, tc.idx.Name)
		require.Equal(t, int32(65535), errcode.CodeOf(err))
	}
	require.Len(t, indexesOf(t, c, 100), 3, "no refused index was recorded")

	// A non-JSON field keeps one index.
	vec := catalog.IndexInfo{CollectionID: 100, FieldID: 101, Name: "vec", Params: map[string]string{"index_type": "HNSW", "metric_type": "L2"}}
	require.NoError(t, c.CreateIndex(ctx, vec))
	vec.Name = "vec2"
	require.ErrorContains(t, c.CreateIndex(ctx, vec), "creating multiple indexes on same field is not supported")

	require.NoError(t, c.DropIndex(ctx, 100, "ab"))
	require.NoError(t, c.CreateIndex(ctx, jp("ab2", `j['a']['b']`, "double")), "a dropped index frees its path")

	names := func(c *Coordinator) []string {
		var out []string
		for _, idx := range indexesOf(t, c, 100) {
			out = append(out, idx.Name)
		}
		return out
	}
	require.Equal(t, names(c), names(e.coord(t)), "the indexes survive a restart")
}
