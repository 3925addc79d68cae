package querycoord_test

import (
	"context"
	"slices"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
)

// TestLoadAgainChangesTheReplicaNumber: a loaded collection loaded again
// with another replica number gets that many replicas (Milvus 2.6 alters
// its load config), on distinct nodes, while searches and counts run, all
// exact; a number the free nodes cannot hold fails with code 304 and
// changes nothing; fewer replicas release the dropped ones' nodes; its
// partitions loaded with another number fail as in Milvus.
func TestLoadAgainChangesTheReplicaNumber(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	for range 3 {
		c.addLocal()
	}
	ok(t, c.load(1), nil)
	require.Len(t, c.replicas(), 1)
	reads := c.startReads(c.px)
	reads.more(3)

	distinct := func(n int) {
		t.Helper()
		reps := c.replicas()
		require.Len(t, reps, n)
		var all []int64
		for _, r := range reps {
			require.NotEmpty(t, r.GetNodeIds())
			all = append(all, r.GetNodeIds()...)
		}
		slices.Sort(all)
		require.Len(t, slices.Compact(all), len(all), "replicas share no node")
	}

	ok(t, c.load(2), nil)
	distinct(2)
	reads.more(3)
	ok(t, c.load(3), nil)
	distinct(3)
	reads.more(3)
	c.same()

	st := c.load(4)
	require.EqualValues(t, 304, st.GetCode(), st.GetReason())
	require.Contains(t, st.GetReason(), "resource group node not enough")
	distinct(3)
	reads.more(3)

	ctx := context.Background()
	st, err := c.px.LoadPartitions(ctx, &milvuspb.LoadPartitionsRequest{
		CollectionName: coll, PartitionNames: []string{"_default"}, ReplicaNumber: 2,
	})
	require.NoError(t, err)
	require.EqualValues(t, 1100, st.GetCode())
	require.Equal(t, "can't change the replica number for loaded partitions: invalid parameter[expected=3][actual=2]", st.GetReason())

	before := c.replicas()
	ok(t, c.load(1), nil)
	distinct(1)
	reads.more(3)
	kept := c.replicas()[0].GetNodeIds()
	id := c.replicasCollection()
	for _, r := range before {
		for _, n := range r.GetNodeIds() {
			if slices.Contains(kept, n) {
				continue
			}
			c.mu.Lock()
			qn := c.nodes[n].node
			c.mu.Unlock()
			loaded, _, err := qn.Loaded(context.Background(), id)
			require.NoError(t, err)
			require.False(t, loaded, "node %d of a dropped replica released the collection", n)
		}
	}
	t.Logf("%d reads while the replicas changed, all exact", reads.end())
	c.same()
}
