package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// TestShardsBeyondPChannels: with rootCoord.pchannels 2 a collection of 4
// shards is refused with Milvus's "shard num (4) exceeds max configuration
// (2)" and not created (it used to be created with 2 vchannels and its
// first insert panicked); one of 2 shards is created, takes rows, flushes,
// is searched, and is searched again after a restart.
func TestShardsBeyondPChannels(t *testing.T) {
	dir := t.TempDir()
	pchannels := func(c *app.Config) { c.RootCoord.PChannels = 2 }
	s := startServer(t, dir, pchannels)
	c := s.client(t)
	ctx := ctxT(t)
	schema := func(name string) *entity.Schema {
		return entity.NewSchema().WithName(name).
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	}
	err := c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("four", schema("four")).WithShardNum(4))
	require.ErrorContains(t, err, "shard num (4) exceeds max configuration (2)")
	has, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption("four"))
	require.NoError(t, err)
	require.False(t, has)

	const coll, n = "two", 200
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema(coll)).WithShardNum(2)))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.EqualValues(t, 2, desc.ShardNum)
	require.Len(t, desc.VirtualChannels, 2)
	ids := make([]int64, n)
	vecs := make([][]float32, n)
	for i := range ids {
		ids[i], vecs[i] = int64(i), []float32{float32(i), 1}
	}
	res, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).WithFloatVectorColumn("v", 2, vecs))
	require.NoError(t, err)
	require.EqualValues(t, n, res.InsertCount)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	check := func() {
		t.Helper()
		count, err := countStrong(ctx, c, coll)
		require.NoError(t, err)
		require.EqualValues(t, n, count)
		found, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector{7, 1}, entity.FloatVector{193, 1}}).
			WithANNSField("v").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Len(t, found, 2)
		for i, want := range []int64{7, 193} {
			got, err := found[i].IDs.GetAsInt64(0)
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	}
	indexAndLoad(ctx, t, c, coll, entity.L2)
	check()

	s.stop()
	s = startServer(t, dir, pchannels)
	c = s.client(t)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	check()
}
