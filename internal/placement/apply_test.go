package placement_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/stacktest"
)

// TestBalancerMovesChannelsBetweenDataNodes runs the channel balancer with
// the ChannelApplier over real membership (embedded etcd), a real data
// coordinator and watched data nodes: the channels are split between the
// nodes; a node that leaves membership but keeps running loses its
// channels without a release and is fenced; a node that joins takes
// channels on a rebalance, released by their owner first. Every row is
// stored exactly once throughout.
func TestBalancerMovesChannelsBetweenDataNodes(t *testing.T) {
	s := stacktest.New(t)
	names := []string{stacktest.Collection, "b", "c", "d"}
	for _, n := range names[1:] {
		s.CreateCollection(n)
	}
	channels := func() []string {
		var out []string
		cols, err := s.Root.AllCollections(context.Background())
		if err != nil {
			t.Error(err) // called from the balancer's goroutine
		}
		for _, col := range cols {
			out = append(out, col.VChannels...)
		}
		return out
	}

	reg := registry(t, "apply/")

	var mu sync.Mutex
	byAddr := map[string]*datanode.Node{}
	// join starts a watched data node and registers it.
	join := func(address string) (*membership.Member, *datanode.Node) {
		cfg := s.DataNodeConfig
		cfg.Watched = true
		dn, err := datanode.New(cfg, s.Log, s.Objects, s.Data, s.Root, s.IDs, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- dn.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			require.NoError(t, <-done)
		})
		mu.Lock()
		byAddr[address] = dn
		mu.Unlock()
		m, err := reg.Register(context.Background(), membership.RoleDataNode, address)
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close() })
		return m, dn
	}
	m1, dn1 := join("dn-1")
	m2, dn2 := join("dn-2")

	dial := func(address string) (placement.ChannelOwner, error) {
		mu.Lock()
		defer mu.Unlock()
		dn, ok := byAddr[address]
		if !ok {
			return nil, fmt.Errorf("no data node at %s", address)
		}
		return dn, nil
	}
	apply, err := placement.NewChannelApplier(placement.DefaultApplierConfig(), dial, s.Data, nil)
	require.NoError(t, err)
	store := placement.NewStore(openKV(t))
	cfg := placement.DefaultBalancerConfig()
	cfg.Interval = 50 * time.Millisecond
	b := runBalancer(t, reg, cfg, store, channels, s.Data, apply.Apply)

	// placed waits until the saved placement gives every channel to one of
	// nodes and each node watches exactly what it is given, under the
	// saved epochs.
	placed := func(nodes map[int64]*datanode.Node) {
		t.Helper()
		require.Eventually(t, func() bool {
			saved, err := store.Assignments(context.Background())
			if err != nil || len(saved) != len(names) {
				return false
			}
			for _, a := range saved {
				if nodes[a.Node] == nil {
					return false // owned by a node that is not (or no longer) live
				}
			}
			for id, dn := range nodes {
				want := map[string]int64{}
				for ch, a := range saved {
					if a.Node == id {
						want[ch] = a.Epoch
					}
				}
				if !maps.Equal(want, dn.Channels()) {
					return false
				}
			}
			return true
		}, 30*time.Second, 10*time.Millisecond, "the nodes watch what the placement says")
	}
	insert := func(from, to int64) {
		for _, n := range names {
			s.InsertRows(n, from, to)
		}
	}
	flushed := func(want []int64) {
		t.Helper()
		cols, err := s.Root.AllCollections(context.Background())
		require.NoError(t, err)
		for _, col := range cols {
			ids, ts, err := s.Data.Flush(context.Background(), col.ID, col.VChannels)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return s.FlushState(ids, col.VChannels, ts) }, 30*time.Second,
				5*time.Millisecond, "%s flushed", col.Name)
			var got []int64
			for _, seg := range s.Data.Segments(col.ID) {
				if seg.Level != catalog.LevelL0 && seg.NumRows > 0 {
					got = append(got, storedKeys(t, s, seg.ID)...)
				}
			}
			slices.Sort(got)
			require.Equal(t, want, got, "every row of %s exactly once", col.Name)
		}
	}

	placed(map[int64]*datanode.Node{m1.ID(): dn1, m2.ID(): dn2})
	require.Len(t, dn1.Channels(), 2)
	insert(0, 100)
	time.Sleep(200 * time.Millisecond) // the nodes buffer the rows

	// Node 2 leaves membership (declared dead) but keeps running.
	stale := dn2.Channels()
	require.NoError(t, m2.Close())
	placed(map[int64]*datanode.Node{m1.ID(): dn1})
	require.Len(t, dn1.Channels(), 4)
	insert(100, 200)
	flushed(keys(0, 200))
	require.Eventually(t, func() bool { return len(dn2.Channels()) == 0 }, 30*time.Second, 5*time.Millisecond,
		"the stale node's refused syncs stop its channels")
	for ch := range stale {
		require.EqualValues(t, 2, s.Data.Epoch(ch), "%s fenced at its second owner's epoch", ch)
	}

	// Node 3 joins; a rebalance moves two channels to it, released first.
	m3, dn3 := join("dn-3")
	insert(200, 300)
	time.Sleep(200 * time.Millisecond)
	// The imbalance threshold (4 against 0) moves one channel by itself;
	// the rebalance evens them.
	require.Eventually(t, func() bool { return len(dn3.Channels()) == 1 }, 30*time.Second, 5*time.Millisecond)
	b.Rebalance()
	require.Eventually(t, func() bool { return len(dn3.Channels()) == 2 }, 30*time.Second, 5*time.Millisecond)
	placed(map[int64]*datanode.Node{m1.ID(): dn1, m3.ID(): dn3})
	require.Len(t, dn1.Channels(), 2)
	insert(300, 400)
	flushed(keys(0, 400))
}
