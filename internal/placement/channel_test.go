package placement_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/placement"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func chans(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("dml_%d_1v%d", i%4, i)
	}
	return out
}

// spread returns the sorted channel counts of the live nodes.
func spread(plan placement.ChannelPlan, nodes []int64) []int {
	var out []int
	for _, n := range placement.Load(plan.Owners, nodes) {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func TestAssignChannels(t *testing.T) {
	def := placement.DefaultChannelPolicy()
	for name, tc := range map[string]struct {
		current   map[string]int64
		nodes     []int64
		channels  []string
		rebalance bool
		owners    map[string]int64
		moves     []placement.Move
		unplaced  []string
	}{
		"new channels fill the least loaded, lowest ID first": {
			nodes: []int64{3, 1, 2}, channels: []string{"d", "a", "c", "b"},
			owners: map[string]int64{"a": 1, "b": 2, "c": 3, "d": 1},
			moves: []placement.Move{
				{Channel: "a", To: 1, Reason: placement.ReasonNew},
				{Channel: "b", To: 2, Reason: placement.ReasonNew},
				{Channel: "c", To: 3, Reason: placement.ReasonNew},
				{Channel: "d", To: 1, Reason: placement.ReasonNew},
			},
		},
		"only the dead node's channels move": {
			current: map[string]int64{"a": 1, "b": 2, "c": 3, "d": 1, "e": 2, "f": 3},
			nodes:   []int64{1, 3}, channels: []string{"a", "b", "c", "d", "e", "f"},
			owners: map[string]int64{"a": 1, "b": 1, "c": 3, "d": 1, "e": 3, "f": 3},
			moves: []placement.Move{
				{Channel: "b", From: 2, To: 1, Reason: placement.ReasonOwnerDead},
				{Channel: "e", From: 2, To: 3, Reason: placement.ReasonOwnerDead},
			},
		},
		"a joining node takes nothing within the threshold": {
			current: map[string]int64{"a": 1, "b": 1, "c": 2, "d": 2},
			nodes:   []int64{1, 2, 7}, channels: []string{"a", "b", "c", "d"},
			owners: map[string]int64{"a": 1, "b": 1, "c": 2, "d": 2},
		},
		"an explicit rebalance evens to within one": {
			current: map[string]int64{"a": 1, "b": 1, "c": 2, "d": 2},
			nodes:   []int64{1, 2, 7}, channels: []string{"a", "b", "c", "d"}, rebalance: true,
			owners: map[string]int64{"a": 1, "b": 7, "c": 2, "d": 2},
			moves:  []placement.Move{{Channel: "b", From: 1, To: 7, Reason: placement.ReasonBalance}},
		},
		"past the threshold a joining node takes just enough": {
			current: map[string]int64{"a": 1, "b": 1, "c": 1, "d": 1, "e": 2, "f": 2, "g": 2, "h": 2},
			nodes:   []int64{1, 2, 9}, channels: []string{"a", "b", "c", "d", "e", "f", "g", "h"},
			// 4,4,0 → 3,4,1 → 3,3,2: within 2, so no further.
			owners: map[string]int64{"a": 1, "b": 1, "c": 1, "d": 9, "e": 2, "f": 2, "g": 2, "h": 9},
			moves: []placement.Move{
				{Channel: "d", From: 1, To: 9, Reason: placement.ReasonBalance},
				{Channel: "h", From: 2, To: 9, Reason: placement.ReasonBalance},
			},
		},
		"dropped channels are forgotten": {
			current: map[string]int64{"a": 1, "gone": 1},
			nodes:   []int64{1}, channels: []string{"a"},
			owners: map[string]int64{"a": 1},
		},
		"no live node leaves channels unassigned": {
			current: map[string]int64{"a": 1},
			nodes:   nil, channels: []string{"b", "a"},
			owners: map[string]int64{}, unplaced: []string{"a", "b"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			plan := placement.AssignChannels(tc.current, tc.nodes, tc.channels, def, tc.rebalance)
			require.Equal(t, tc.owners, plan.Owners)
			require.Equal(t, tc.moves, plan.Moves)
			require.Equal(t, tc.unplaced, plan.Unassigned)
		})
	}
}

// TestAssignChannelsUnderChurn: nodes die and join at random; after each
// step every channel has a live owner, a live owner's channel moved only
// by balancing, the spread stays within the threshold, and an explicit
// rebalance brings it within one.
func TestAssignChannelsUnderChurn(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	policy := placement.DefaultChannelPolicy()
	channels := chans(37)
	nodes := []int64{1, 2, 3}
	next := int64(4)
	owners := placement.AssignChannels(nil, nodes, channels, policy, false).Owners
	for step := range 200 {
		switch {
		case len(nodes) > 1 && rng.IntN(2) == 0: // a node dies
			i := rng.IntN(len(nodes))
			nodes = slices.Delete(slices.Clone(nodes), i, i+1)
		default: // a node joins, with a never-reused ID
			nodes = append(slices.Clone(nodes), next)
			next++
		}
		rebalance := step%10 == 9
		plan := placement.AssignChannels(owners, nodes, channels, policy, rebalance)
		require.Len(t, plan.Owners, len(channels), "step %d", step)
		for _, m := range plan.Moves {
			if m.Reason != placement.ReasonBalance {
				require.Equal(t, placement.ReasonOwnerDead, m.Reason)
				require.NotContains(t, nodes, m.From, "step %d: a live owner's channel moved: %+v", step, m)
			}
			require.Contains(t, nodes, m.To)
		}
		for ch, n := range plan.Owners {
			require.Contains(t, nodes, n, "step %d: %s on a dead node", step, ch)
			if old := owners[ch]; old != n {
				require.True(t, slices.ContainsFunc(plan.Moves, func(m placement.Move) bool { return m.Channel == ch }),
					"step %d: %s moved without a Move", step, ch)
			}
		}
		s := spread(plan, nodes)
		limit := policy.ImbalanceThreshold
		if rebalance {
			limit = 1
		}
		require.LessOrEqual(t, s[len(s)-1]-s[0], limit, "step %d: spread %v", step, s)
		owners = plan.Owners
	}
}

func TestChannelPolicyValidate(t *testing.T) {
	require.NoError(t, placement.DefaultChannelPolicy().Validate())
	require.Error(t, placement.ChannelPolicy{}.Validate())
}
