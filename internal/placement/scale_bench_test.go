package placement_test

import (
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/placement"
)

// The cost of one replan at 100 nodes (docs/bench/cluster.md, "At 100
// nodes"): every membership event and every tick replans all channels or
// every replica of a collection from scratch.

// BenchmarkAssignChannels100Nodes replans the vchannels of 1000
// collections × 2 shards over 100 data nodes after one of them died.
func BenchmarkAssignChannels100Nodes(b *testing.B) {
	const nodes, channels = 100, 2000
	ns := make([]int64, nodes)
	for i := range ns {
		ns[i] = int64(i + 1)
	}
	cs := make([]string, channels)
	current := make(map[string]int64, channels)
	for i := range cs {
		cs[i] = fmt.Sprintf("by-dev-rootcoord-dml_%d_%dv%d", i%16, 1000+i/2, i%2)
		current[cs[i]] = ns[i%nodes]
	}
	live := ns[1:] // node 1 died: its 20 channels move
	b.ReportAllocs()
	for b.Loop() {
		plan := placement.AssignChannels(current, live, cs, placement.ChannelPolicy{ImbalanceThreshold: 2}, false)
		if len(plan.Moves) != channels/nodes {
			b.Fatalf("%d moves, want %d", len(plan.Moves), channels/nodes)
		}
	}
}

// BenchmarkHealAssign100Nodes heals a collection of 2 replicas over 100
// query nodes with 16 shards after one node died, then assigns each
// replica's shard leaders and 2000 sealed segments.
func BenchmarkHealAssign100Nodes(b *testing.B) {
	const nodes, shards, segments = 100, 16, 2000
	live := make([]int64, 0, nodes)
	for i := 2; i <= nodes; i++ {
		live = append(live, int64(i))
	}
	all := append([]int64{1}, live...)
	load := map[int64]int64{}
	replicas, err := placement.SpawnReplicas(2, all, load)
	if err != nil {
		b.Fatal(err)
	}
	vchannels := make([]string, shards)
	for i := range vchannels {
		vchannels[i] = fmt.Sprintf("by-dev-rootcoord-dml_%d_1000v%d", i, i)
	}
	segs := make([]placement.Segment, segments)
	for i := range segs {
		segs[i] = placement.Segment{ID: int64(i + 1), VChannel: vchannels[i%shards], Rows: int64(100000 + i)}
	}
	for i := range replicas {
		replicas[i] = placement.Assign(replicas[i], vchannels, segs, load)
	}
	b.ReportAllocs()
	for b.Loop() {
		healed := placement.Heal(replicas, live, load)
		for _, r := range healed {
			placement.Assign(r, vchannels, segs, load)
		}
	}
}
