package placement_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/placement"
)

func TestSpawnReplicas(t *testing.T) {
	rs, err := placement.SpawnReplicas(2, []int64{5, 1, 3, 2, 4}, map[int64]int64{1: 100, 5: 10})
	require.NoError(t, err)
	// By load: 2,3,4 (0 rows), 5 (10), 1 (100), dealt in turn.
	require.Equal(t, []int64{1, 2, 4}, rs[0].Nodes)
	require.Equal(t, []int64{3, 5}, rs[1].Nodes)
	require.Equal(t, []int64{1, 2}, []int64{rs[0].ID, rs[1].ID})

	_, err = placement.SpawnReplicas(3, []int64{7, 8}, nil)
	require.ErrorIs(t, err, placement.ErrNodeNotEnough)
	require.EqualError(t, err, "failed to spawn replica for collection: resource group node not enough"+
		"[rg=__default_resource_group][currentNodeNum=2][expectedNodeNum=3]")
	_, err = placement.SpawnReplicas(1, nil, nil)
	require.ErrorContains(t, err, "[currentNodeNum=0][expectedNodeNum=1]")
	_, err = placement.SpawnReplicas(0, []int64{1}, nil)
	require.Error(t, err)
}

func segs(rows ...int64) []placement.Segment {
	out := make([]placement.Segment, len(rows))
	for i, r := range rows {
		out[i] = placement.Segment{ID: int64(100 + i), VChannel: "v0", Rows: r}
	}
	return out
}

func TestAssignSpreadsByRows(t *testing.T) {
	r := placement.Replica{ID: 1, Nodes: []int64{1, 2, 3}}
	got := placement.Assign(r, []string{"v1", "v0", "v2", "v3"}, segs(50, 400, 300, 200, 100, 250), map[int64]int64{3: 500})
	require.Equal(t, map[string]int64{"v0": 1, "v1": 2, "v2": 3, "v3": 1}, got.Leaders)
	// Largest first onto the fewest rows (node 3 already serves 500):
	// 400→1, 300→2, 250→2 (550), 200→1 (600), 100→3 (600), 50→2 (600).
	require.Equal(t, map[int64]int64{101: 1, 102: 2, 105: 2, 103: 1, 104: 3, 100: 2}, got.Segments)
	rows := placement.NodeRows([]placement.Replica{got}, segs(50, 400, 300, 200, 100, 250))
	require.Equal(t, map[int64]int64{1: 600, 2: 600, 3: 100}, rows)
}

// TestReplicasSurviveNodeDeath: N replicas on distinct nodes; a node dies;
// Heal and Assign move only its leaders and segments, onto nodes of the
// same replica, and the replicas stay disjoint.
func TestReplicasSurviveNodeDeath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var segments []placement.Segment
	for i := range 60 {
		segments = append(segments, placement.Segment{ID: int64(1000 + i), VChannel: chans(4)[i%4], Rows: 1 + rng.Int64N(10000)})
	}
	nodes := []int64{1, 2, 3, 4, 5, 6, 7}
	rs, err := placement.SpawnReplicas(3, nodes, nil)
	require.NoError(t, err)
	for i := range rs {
		rs[i] = placement.Assign(rs[i], chans(4), segments, nil)
	}
	checkReplicas(t, rs, nodes, segments)
	// Rows are spread within the largest segment of even.
	for _, r := range rs {
		rows := placement.NodeRows([]placement.Replica{r}, segments)
		var lo, hi int64 = 1 << 62, 0
		for _, n := range r.Nodes {
			lo, hi = min(lo, rows[n]), max(hi, rows[n])
		}
		require.LessOrEqual(t, hi-lo, int64(10000), "replica %d rows %v", r.ID, rows)
	}

	dead := rs[0].Nodes[0]
	live := slices.DeleteFunc(slices.Clone(nodes), func(n int64) bool { return n == dead })
	healed := placement.Heal(rs, live, nil)
	for i := range healed {
		healed[i] = placement.Assign(healed[i], chans(4), segments, nil)
	}
	checkReplicas(t, healed, live, segments)
	for i, r := range healed {
		for seg, n := range r.Segments {
			if was := rs[i].Segments[seg]; was != dead {
				require.Equal(t, was, n, "segment %d of replica %d moved off a live node", seg, r.ID)
			}
		}
		for ch, n := range r.Leaders {
			if was := rs[i].Leaders[ch]; was != dead {
				require.Equal(t, was, n, "leader of %s moved off a live node", ch)
			}
		}
	}

	// A replica whose only node dies takes a free node if there is one.
	one, err := placement.SpawnReplicas(2, []int64{1, 2}, nil)
	require.NoError(t, err)
	healed = placement.Heal(one, []int64{2, 9}, map[int64]int64{})
	require.Equal(t, []int64{9}, healed[0].Nodes)
	require.Equal(t, []int64{2}, healed[1].Nodes)
	healed = placement.Heal(one, []int64{2}, nil)
	require.Empty(t, healed[0].Nodes, "no free node: the replica waits for one")
	require.Empty(t, placement.Assign(healed[0], chans(2), segments, nil).Leaders)
}

// checkReplicas: the replicas use distinct live nodes, and each places
// every vchannel's leader and every segment on one of its own nodes.
func checkReplicas(t *testing.T, rs []placement.Replica, live []int64, segments []placement.Segment) {
	t.Helper()
	seen := map[int64]int64{}
	for _, r := range rs {
		require.NotEmpty(t, r.Nodes)
		for _, n := range r.Nodes {
			require.Contains(t, live, n)
			prev, dup := seen[n]
			require.False(t, dup, "node %d in replicas %d and %d", n, prev, r.ID)
			seen[n] = r.ID
		}
		require.Len(t, r.Leaders, 4)
		for _, n := range r.Leaders {
			require.Contains(t, r.Nodes, n)
		}
		require.Len(t, r.Segments, len(segments))
		for _, n := range r.Segments {
			require.Contains(t, r.Nodes, n)
		}
	}
}
