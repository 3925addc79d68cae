package e2e

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestVarCharAutoIDSurvivesRestart: a VarChar primary key with auto_id gets
// string IDs (the allocated int64 as decimal text). The rows are applied by
// the data node and the query node, survive a flush and a restart, and are
// served with the IDs the insert returned.
func TestVarCharAutoIDSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "vcauto"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64).
			WithIsPrimaryKey(true).WithIsAutoID(true)).
		WithField(entity.NewField().WithName("n").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	res, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("n", []int64{1, 2, 3}).
		WithFloatVectorColumn("v", 2, [][]float32{{1, 0}, {0, 1}, {1, 1}}))
	require.NoError(t, err)
	require.Equal(t, int64(3), res.InsertCount)
	require.Equal(t, entity.FieldTypeVarChar, res.IDs.Type(), "a VarChar auto-ID key returns string IDs")
	ids := map[string]int64{}
	for i := 0; i < res.IDs.Len(); i++ {
		id, err := res.IDs.GetAsString(i)
		require.NoError(t, err)
		require.NotEmpty(t, id)
		ids[id] = int64(i + 1)
	}
	require.Len(t, ids, 3)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	s.stop()

	s = startServer(t, dir)
	c = s.client(t)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	requireVarCharRows(ctx, t, c, coll, ids)

	// Rows still growing (not flushed) replay after a restart too.
	res, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("n", []int64{4}).WithFloatVectorColumn("v", 2, [][]float32{{2, 2}}))
	require.NoError(t, err)
	id, err := res.IDs.GetAsString(0)
	require.NoError(t, err)
	ids[id] = 4
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	requireVarCharRows(ctx, t, c, coll, ids)
}

// requireVarCharRows checks that coll serves exactly want (id → n).
func requireVarCharRows(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string, want map[string]int64) {
	t.Helper()
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`id != ""`).
		WithOutputFields("id", "n").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	got := map[string]int64{}
	for i := 0; i < rs.ResultCount; i++ {
		id, err := rs.GetColumn("id").GetAsString(i)
		require.NoError(t, err)
		n, err := rs.GetColumn("n").GetAsInt64(i)
		require.NoError(t, err)
		got[id] = n
	}
	require.Equal(t, want, got)
}
