package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// Milvus 2.6 behaviour that its own client test suite checks (issue 11).

// TestParityLoadStatePartitions: after load_partitions of some partitions,
// Milvus reports the collection Loaded (it is loaded, for those partitions),
// each loaded partition Loaded, a partition that is not loaded (or a list
// with one) NotLoad, and the collection NotLoad again once every partition
// is released. list_collections' in-memory percentage follows the same rule.
func TestParityLoadStatePartitions(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "ls"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions(coll, 4)))
	for _, p := range []string{"p1", "p2"} {
		require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, p)))
	}
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	state := func(parts ...string) entity.LoadStateCode {
		t.Helper()
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll, parts...))
		require.NoError(t, err)
		return st.State
	}
	require.Equal(t, entity.LoadStateNotLoad, state())

	lt, err := c.LoadPartitions(ctx, milvusclient.NewLoadPartitionsOption(coll, "p1"))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	for _, tc := range []struct {
		parts []string
		want  entity.LoadStateCode
	}{
		{nil, entity.LoadStateLoaded},
		{[]string{"p1"}, entity.LoadStateLoaded},
		{[]string{"p2"}, entity.LoadStateNotLoad},
		{[]string{"p1", "p2"}, entity.LoadStateNotLoad},
		{[]string{"_default"}, entity.LoadStateNotLoad},
	} {
		require.Equal(t, tc.want, state(tc.parts...), "after loading p1, partitions %v", tc.parts)
	}
	colls, err := c.ListCollections(ctx, milvusclient.NewListCollectionOption())
	require.NoError(t, err)
	require.Contains(t, colls, coll)

	// Releasing the one loaded partition leaves nothing loaded.
	require.NoError(t, c.ReleasePartitions(ctx, milvusclient.NewReleasePartitionsOptions(coll, "p1")))
	require.Equal(t, entity.LoadStateNotLoad, state())
	require.Equal(t, entity.LoadStateNotLoad, state("p1"))

	// A whole-collection load, then releasing one partition: the others stay.
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	require.NoError(t, c.ReleasePartitions(ctx, milvusclient.NewReleasePartitionsOptions(coll, "_default")))
	require.Equal(t, entity.LoadStateLoaded, state())
	require.Equal(t, entity.LoadStateLoaded, state("p1", "p2"))
	require.Equal(t, entity.LoadStateNotLoad, state("_default"))
	vec := []entity.Vector{entity.FloatVector{1, 0, 0, 0}}
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, vec).WithPartitions("_default"))
	require.ErrorContains(t, err, "partition not loaded", "a search of a released partition is refused (201)")
	_, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id >= 0").WithPartitions("p1", "_default"))
	require.ErrorContains(t, err, "partition not loaded")
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, vec).WithPartitions("p1"))
	require.NoError(t, err)
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, vec))
	require.NoError(t, err, "a search naming no partition reads the loaded ones")
	require.NoError(t, c.ReleasePartitions(ctx, milvusclient.NewReleasePartitionsOptions(coll, "p1", "p2")))
	require.Equal(t, entity.LoadStateNotLoad, state())
}
