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
	got := indexesOf(t, c, 100)
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
	require.ErrorContains(t, c.AlterIndex(ctx, 100, "vec", map[string]string{"M": "8"}, nil), "is not a configable index property")
	require.ErrorContains(t, c.AlterIndex(ctx, 100, "vec", nil, []string{"M"}), "is not a configable index property")

	// The change is persisted: a restarted coordinator sees it, and deleting works.
	e.close(t)
	e.open(t)
	c = e.coord(t)
	require.Equal(t, "true", indexesOf(t, c, 100)[0].Params["mmap.enabled"])
	require.NoError(t, c.AlterIndex(ctx, 100, "vec", nil, []string{"mmap.enabled"}))
	require.NotContains(t, indexesOf(t, c, 100)[0].Params, "mmap.enabled")
}

// TestScheduleIndexTasksConcurrent: concurrent schedulers (CreateIndex and
// the background loop) create exactly one build per index and segment.
func TestScheduleIndexTasksConcurrent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.coord(t)
	c.mu.Lock()
	for id := int64(1); id <= 20; id++ {
		c.segments[id] = &segment{info: catalog.SegmentInfo{
			ID: id, CollectionID: 100, PartitionID: 1,
			State: catalog.SegmentFlushed, Level: catalog.LevelL1, NumRows: 10, Sorted: true,
		}}
	}
	for id := int64(1); id <= 5; id++ {
		c.indexes[1000+id] = catalog.IndexInfo{ID: 1000 + id, CollectionID: 100, FieldID: 100 + id, Name: "f"}
	}
	c.mu.Unlock()
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- c.scheduleIndexTasks(ctx) }()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
	seen := map[[2]int64]int{}
	for _, task := range c.IndexTasks(100) {
		seen[[2]int64{task.IndexID, task.SegmentID}]++
	}
	require.Len(t, seen, 100)
	for k, n := range seen {
		require.Equal(t, 1, n, "index %d segment %d", k[0], k[1])
	}
}
