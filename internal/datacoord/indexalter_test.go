package datacoord

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

func TestAlterIndex(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.coord(t)
	params := map[string]string{"index_type": "HNSW", "metric_type": "L2", "M": "16"}
	require.NoError(t, c.CreateIndex(ctx, catalog.IndexInfo{CollectionID: 100, FieldID: 101, Name: "vec", Params: params}))

	require.NoError(t, c.AlterIndex(ctx, 100, "vec", map[string]string{"mmap.enabled": "true"}, nil))
	got := c.Indexes(100)
	require.Len(t, got, 1)
	require.Equal(t, "true", got[0].Params["mmap.enabled"])
	require.Equal(t, "16", got[0].Params["M"])
	require.NotContains(t, params, "mmap.enabled", "the caller's map is not modified")

	// Properties do not make an identical re-create differ; other params do.
	require.NoError(t, c.CreateIndex(ctx, catalog.IndexInfo{CollectionID: 100, FieldID: 101, Name: "vec", Params: params}))
	other := map[string]string{"index_type": "HNSW", "metric_type": "L2", "M": "32"}
	require.ErrorContains(t, c.CreateIndex(ctx, catalog.IndexInfo{CollectionID: 100, FieldID: 101, Name: "vec", Params: other}),
		"at most one distinct index is allowed per field")

	var ce *errcode.Error
	err := c.AlterIndex(ctx, 100, "nope", map[string]string{"mmap.enabled": "true"}, nil)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, errcode.IndexNotFound, ce.Code)
	require.ErrorContains(t, c.AlterIndex(ctx, 100, "vec", map[string]string{"M": "8"}, nil), "not configable")
	require.ErrorContains(t, c.AlterIndex(ctx, 100, "vec", nil, []string{"M"}), "not configable")

	// The change is persisted: a restarted coordinator sees it, and deleting works.
	e.close(t)
	e.open(t)
	c = e.coord(t)
	require.Equal(t, "true", c.Indexes(100)[0].Params["mmap.enabled"])
	require.NoError(t, c.AlterIndex(ctx, 100, "vec", nil, []string{"mmap.enabled"}))
	require.NotContains(t, c.Indexes(100)[0].Params, "mmap.enabled")
}
