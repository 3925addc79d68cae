package placement_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/placement"
)

// replica builds a replica whose leaders are given as node → vchannels.
func replica(id int64, leads map[int64][]string) placement.Replica {
	r := placement.Replica{ID: id, Leaders: map[string]int64{}, Segments: map[int64]int64{}}
	for n, chs := range leads {
		r.Nodes = append(r.Nodes, n)
		for _, ch := range chs {
			r.Leaders[ch] = n
		}
	}
	slices.Sort(r.Nodes)
	return r
}

func TestRebalance(t *testing.T) {
	for name, tc := range map[string]struct {
		replicas []placement.Replica
		live     []int64
		rows     map[string]int64
		nodes    [][]int64
		leaders  []map[string]int64
		moves    []placement.ShardMove
	}{
		"a node joins: one of two shards moves to it": {
			replicas: []placement.Replica{replica(1, map[int64][]string{1: {"v0", "v1"}})},
			live:     []int64{1, 2},
			nodes:    [][]int64{{1, 2}},
			leaders:  []map[string]int64{{"v0": 2, "v1": 1}},
			moves:    []placement.ShardMove{{Replica: 1, VChannel: "v0", From: 1, To: 2}},
		},
		"balanced within one: nothing moves": {
			replicas: []placement.Replica{replica(1, map[int64][]string{1: {"v0", "v1"}, 2: {"v2"}})},
			live:     []int64{1, 2, 3},
			nodes:    [][]int64{{1, 2}},
			leaders:  []map[string]int64{{"v0": 1, "v1": 1, "v2": 2}},
		},
		"one shard on one node: a free node does not join": {
			replicas: []placement.Replica{replica(1, map[int64][]string{1: {"v0"}})},
			live:     []int64{1, 2},
			nodes:    [][]int64{{1}},
			leaders:  []map[string]int64{{"v0": 1}},
		},
		"an idle node of the replica takes shards until even": {
			replicas: []placement.Replica{replica(1, map[int64][]string{1: {"v0", "v1", "v2", "v3"}, 2: nil})},
			live:     []int64{1, 2},
			nodes:    [][]int64{{1, 2}},
			leaders:  []map[string]int64{{"v0": 2, "v1": 2, "v2": 1, "v3": 1}},
			moves: []placement.ShardMove{
				{Replica: 1, VChannel: "v0", From: 1, To: 2}, {Replica: 1, VChannel: "v1", From: 1, To: 2},
			},
		},
		"rows pick the shard that evens the nodes' rows": {
			replicas: []placement.Replica{replica(1, map[int64][]string{1: {"v0", "v1", "v2", "v3"}})},
			live:     []int64{1, 2},
			rows:     map[string]int64{"v0": 100, "v1": 900, "v2": 500, "v3": 10},
			// 1510 rows on node 1: v1 (900) leaves 610 and 900; then v3 (10)
			// leaves 600 and 910.
			nodes:   [][]int64{{1, 2}},
			leaders: []map[string]int64{{"v0": 1, "v1": 2, "v2": 1, "v3": 2}},
			moves: []placement.ShardMove{
				{Replica: 1, VChannel: "v1", From: 1, To: 2}, {Replica: 1, VChannel: "v3", From: 1, To: 2},
			},
		},
		"free nodes join the most loaded replicas first": {
			replicas: []placement.Replica{
				replica(1, map[int64][]string{1: {"v0", "v1"}, 2: {"v2", "v3"}}),
				replica(2, map[int64][]string{3: {"v0", "v1", "v2", "v3"}}),
			},
			// 7 joins replica 2 (4 leaderships on its least loaded node), which
			// evens to 2 and 2; 8 joins replica 1 (a tie, the lower ID), 9
			// replica 2; 10 finds no replica whose nodes all lead two.
			live:    []int64{1, 2, 3, 7, 8, 9, 10},
			nodes:   [][]int64{{1, 2, 8}, {3, 7, 9}},
			leaders: []map[string]int64{{"v0": 8, "v1": 1, "v2": 2, "v3": 2}, {"v0": 7, "v1": 7, "v2": 9, "v3": 3}},
			moves: []placement.ShardMove{
				{Replica: 1, VChannel: "v0", From: 1, To: 8},
				{Replica: 2, VChannel: "v0", From: 3, To: 7},
				{Replica: 2, VChannel: "v1", From: 3, To: 7},
				{Replica: 2, VChannel: "v2", From: 3, To: 9},
			},
		},
		"a replica with a dead node is left to heal": {
			replicas: []placement.Replica{replica(1, map[int64][]string{1: {"v0", "v1", "v2"}, 2: nil})},
			live:     []int64{1, 3},
			nodes:    [][]int64{{1, 2}},
			leaders:  []map[string]int64{{"v0": 1, "v1": 1, "v2": 1}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := clone(tc.replicas)
			got, moves := placement.Rebalance(tc.replicas, tc.live, tc.rows)
			require.Equal(t, before, tc.replicas, "inputs unchanged")
			require.Len(t, got, len(tc.nodes))
			for i, r := range got {
				require.Equal(t, tc.replicas[i].ID, r.ID)
				require.Equal(t, tc.nodes[i], r.Nodes, "replica %d nodes", r.ID)
				require.Equal(t, tc.leaders[i], r.Leaders, "replica %d leaders", r.ID)
			}
			require.Equal(t, tc.moves, moves)
			again, movesAgain := placement.Rebalance(tc.replicas, tc.live, tc.rows)
			require.Equal(t, got, again, "deterministic")
			require.Equal(t, moves, movesAgain)
			settled, none := placement.Rebalance(got, tc.live, tc.rows)
			require.Equal(t, got, settled, "a balanced placement stays")
			require.Empty(t, none)
		})
	}
}

// TestRebalanceEvensAnyPlacement: every healthy replica ends with its
// nodes within one leadership of each other, whatever the start.
func TestRebalanceEvensAnyPlacement(t *testing.T) {
	for shards := 1; shards <= 9; shards++ {
		for nodes := 1; nodes <= 4; nodes++ {
			t.Run(fmt.Sprintf("%d-shards-%d-nodes", shards, nodes), func(t *testing.T) {
				leads := map[int64][]string{}
				for n := range nodes {
					leads[int64(n+1)] = nil
				}
				leads[1] = chans(shards)
				live := []int64{}
				for n := range nodes + 1 {
					live = append(live, int64(n+1))
				}
				got, moves := placement.Rebalance([]placement.Replica{replica(1, leads)}, live, nil)
				counts := map[int64]int{}
				for _, n := range got[0].Nodes {
					counts[n] = 0
				}
				for _, n := range got[0].Leaders {
					counts[n]++
				}
				lo, hi := shards, 0
				for _, c := range counts {
					lo, hi = min(lo, c), max(hi, c)
				}
				require.LessOrEqual(t, hi-lo, 1, "%v", counts)
				require.Len(t, got[0].Leaders, shards, "no shard lost")
				for _, m := range moves {
					require.Equal(t, int64(1), m.From, "only node 1's shards move")
				}
				if shards/nodes > 1 {
					require.Len(t, got[0].Nodes, nodes+1, "the free node joins when each node leads more than one shard")
				}
			})
		}
	}
}

func clone(rs []placement.Replica) []placement.Replica {
	out := make([]placement.Replica, len(rs))
	for i, r := range rs {
		out[i] = placement.Replica{ID: r.ID, Nodes: slices.Clone(r.Nodes), Leaders: maps.Clone(r.Leaders), Segments: maps.Clone(r.Segments)}
	}
	return out
}
