package querynode_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/stacktest"
)

// TestWorkerShard: a node serves two flushed segments of a vchannel it
// does not lead (a worker), applies the vchannel's deletes to them, and
// answers a leader's sub-read of exactly the named segments at exactly its
// read timestamp; a sub-read naming a segment it lacks fails with 503, one
// without a read timestamp is refused. A leader (the stack's node) that
// gives the worker one of its segments answers every read as before, and
// serves it itself again when it takes it back.
func TestWorkerShard(t *testing.T) {
	s := stacktest.New(t)
	ctx := context.Background()
	seg1 := s.Insert(0, 50)
	s.Flush()
	seg2 := s.Insert(50, 100)
	s.Flush()
	s.Insert(100, 120) // growing
	leader := s.QueryNode
	require.NoError(t, leader.Load(ctx, s.CollectionID, nil, 1, nil))
	count := func(n *querynode.Node, r plan.Read) (int64, error) {
		res, err := n.Query(ctx, &plan.Query{Read: r, CountOnly: true})
		if err != nil {
			return 0, err
		}
		return res.Count, nil
	}
	all := plan.Read{CollectionID: s.CollectionID, Strong: true}
	n, err := count(leader, all)
	require.NoError(t, err)
	require.EqualValues(t, 120, n)

	w := s.NewQueryNode()
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	v := s.VChannels[0]
	require.NoError(t, w.LoadSegments(ctx, s.CollectionID, v, []int64{seg1, seg2}))
	require.Equal(t, map[string][]int64{v: {seg1, seg2}}, w.WorkerSegments(s.CollectionID))
	s.Delete(10, 20) // applied by the worker's shard too
	n, err = count(leader, all)
	require.NoError(t, err)
	require.EqualValues(t, 110, n)
	sub := func(ts uint64, segs ...int64) plan.Read {
		return plan.Read{CollectionID: s.CollectionID, VChannels: []string{v}, Segments: segs, ReadTS: ts, HasExpireBefore: true}
	}
	// A read timestamp after the delete (a time tick of the pchannel): the
	// worker waits until its shard has consumed it.
	col, err := s.Root.CollectionByID(s.CollectionID)
	require.NoError(t, err)
	leaderTS, err := s.Writer().Tick(ctx, col.PChannels[0])
	require.NoError(t, err)
	n, err = count(w, sub(leaderTS, seg1))
	require.NoError(t, err)
	require.EqualValues(t, 40, n, "seg1 without the deleted keys 10-19")
	n, err = count(w, sub(leaderTS, seg1, seg2))
	require.NoError(t, err)
	require.EqualValues(t, 90, n)

	_, err = count(w, sub(leaderTS, seg1, 999))
	require.Equal(t, errcode.ChannelNotAvailable, errcode.CodeOf(err), "%v", err)
	_, err = count(w, sub(0, seg1))
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err), "%v", err)

	// The leader gives seg2 to the worker: the same answers.
	leader.SetWorkerDialer(func(int64, string) (querynode.SegmentReader, error) { return w, nil })
	got, err := leader.SetDistribution(ctx, s.CollectionID, v, map[int64]int64{seg2: 7, 424242: 7}, map[int64]string{7: "w"})
	require.NoError(t, err)
	require.Equal(t, map[int64]int64{seg2: 7}, got, "a segment the leader does not hold is left out")
	sealed, err := leader.Sealed(s.CollectionID, v)
	require.NoError(t, err)
	require.Len(t, sealed, 2)
	for _, sg := range sealed {
		if sg.ID == seg2 {
			require.Equal(t, []int64{7}, sg.NodeIDs)
		} else {
			require.Empty(t, sg.NodeIDs)
		}
	}
	n, err = count(leader, all)
	require.NoError(t, err)
	require.EqualValues(t, 110, n)
	s.Delete(60, 65) // on the worker's segment
	n, err = count(leader, all)
	require.NoError(t, err)
	require.EqualValues(t, 105, n)
	keys := plan.Read{CollectionID: s.CollectionID, Strong: true, OutputFields: []int64{100}}
	res, err := leader.Query(ctx, &plan.Query{Read: keys, Offset: 45, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 10, res.Rows)

	// Taken back: the leader loads it again before the switch.
	got, err = leader.SetDistribution(ctx, s.CollectionID, v, nil, nil)
	require.NoError(t, err)
	require.Empty(t, got)
	w.ReleaseSegments(s.CollectionID, v, []int64{seg1, seg2})
	require.Empty(t, w.WorkerSegments(s.CollectionID))
	n, err = count(leader, all)
	require.NoError(t, err)
	require.EqualValues(t, 105, n)
}
