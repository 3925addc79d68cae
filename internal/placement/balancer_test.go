package placement_test

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/placement"
)

// checkpoints is a fixed set of channel checkpoints (what the data
// coordinator would answer).
type checkpoints map[string]int64

func (c checkpoints) Recovery(_ context.Context, vchannel string) (catalog.RecoveryInfo, error) {
	off := c[vchannel]
	return catalog.RecoveryInfo{
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vchannel, Position: catalog.Position{Offset: off}, DeltaSyncedOffset: off},
		SeekOffset: off,
	}, nil
}

// applied records the handoffs a balancer applied.
type applied struct {
	mu sync.Mutex
	hs []placement.Handoff
}

func (a *applied) apply(_ context.Context, h placement.Handoff) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hs = append(a.hs, h)
	return nil
}

func (a *applied) take() []placement.Handoff {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.hs
	a.hs = nil
	return out
}

// registry is a membership registry under root on a fresh embedded etcd.
func registry(t *testing.T, root string) *membership.Registry {
	t.Helper()
	endpoint := enginetest.Etcd(t)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	reg, err := membership.New(c, membership.Config{Root: root, SessionTTL: 2 * time.Second}, nil)
	require.NoError(t, err)
	return reg
}

// runBalancer runs a balancer over a watch of reg's data nodes until the
// test ends.
func runBalancer(t *testing.T, reg *membership.Registry, cfg placement.BalancerConfig, store *placement.Store,
	channels func() []string, rec placement.Recoveries, apply func(context.Context, placement.Handoff) error,
) *placement.ChannelBalancer {
	t.Helper()
	b, err := placement.NewChannelBalancer(cfg, store, channels, rec, apply, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := reg.Watch(ctx, membership.RoleDataNode)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, w) }()
	t.Cleanup(func() {
		cancel()
		for range w.Events { // drain until the watch stops
		}
		require.NoError(t, <-done)
	})
	return b
}

// unavailableKV is a meta store whose first scans fail, as etcd's do
// during an outage.
type unavailableKV struct {
	metastore.KV
	failures atomic.Int32 // scans still to fail
}

func (kv *unavailableKV) Scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error) {
	if kv.failures.Add(-1) >= 0 {
		return nil, context.DeadlineExceeded
	}
	return kv.KV.Scan(ctx, prefix)
}

// TestChannelBalancerWaitsOutAnOutage: a balancer that starts while the
// meta store fails (etcd unavailable) loads the saved placement once it
// answers and places the channels; it used to stop at once, and the
// coordinator with it.
func TestChannelBalancerWaitsOutAnOutage(t *testing.T) {
	reg := registry(t, "o/")
	m, err := reg.Register(context.Background(), membership.RoleDataNode, "dn")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	kv := &unavailableKV{KV: openKV(t)}
	kv.failures.Store(3)
	cfg := placement.DefaultBalancerConfig()
	cfg.Interval = 20 * time.Millisecond
	b := runBalancer(t, reg, cfg, placement.NewStore(kv), func() []string { return []string{"v0"} }, checkpoints{}, nil)
	require.Eventually(t, func() bool { return maps.Equal(b.Owners(), map[string]int64{"v0": m.ID()}) },
		30*time.Second, 10*time.Millisecond, "the channel is placed once the meta store answers")
	require.Negative(t, kv.failures.Load(), "the failed loads were tried again")
}

// TestChannelBalancerFollowsMembership: the balancer over a real
// membership watch places new channels, leaves them when a node joins
// (within the threshold) until asked to rebalance, and moves only a dead
// node's channels, each handed over with its checkpoint.
func TestChannelBalancerFollowsMembership(t *testing.T) {
	reg := registry(t, "b/")
	join := func() *membership.Member {
		m, err := reg.Register(context.Background(), membership.RoleDataNode, "dn")
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, m.Close()) })
		return m
	}
	n1, n2 := join(), join()

	store := placement.NewStore(openKV(t))
	channels := []string{"v0", "v1", "v2", "v3"}
	cps := checkpoints{"v0": 10, "v1": 11, "v2": 12, "v3": 13}
	var got applied
	cfg := placement.DefaultBalancerConfig()
	cfg.Interval = 50 * time.Millisecond
	b := runBalancer(t, reg, cfg, store, func() []string { return channels }, cps, got.apply)

	awaitOwners := func(want map[string]int64) {
		t.Helper()
		require.Eventually(t, func() bool { return maps.Equal(b.Owners(), want) }, 30*time.Second, 10*time.Millisecond,
			"owners %v, want %v", b.Owners(), want)
		saved, err := store.Channels(context.Background())
		require.NoError(t, err)
		require.Equal(t, want, saved, "the plan is saved")
	}
	a, bID := n1.ID(), n2.ID()
	awaitOwners(map[string]int64{"v0": a, "v1": bID, "v2": a, "v3": bID})
	require.Len(t, got.take(), 4)

	n3 := join()
	time.Sleep(5 * cfg.Interval) // a few plans pass: nothing moves
	require.Equal(t, map[string]int64{"v0": a, "v1": bID, "v2": a, "v3": bID}, b.Owners())
	require.Empty(t, got.take())

	b.Rebalance()
	awaitOwners(map[string]int64{"v0": a, "v1": bID, "v2": n3.ID(), "v3": bID})
	require.Equal(t, []placement.Handoff{{
		Move:  placement.Move{Channel: "v2", From: a, To: n3.ID(), Reason: placement.ReasonBalance},
		Epoch: 2, FromAddress: "dn", ToAddress: "dn",
		Checkpoint: catalog.ChannelCheckpoint{VChannel: "v2", Position: catalog.Position{Offset: 12}, DeltaSyncedOffset: 12}, SeekOffset: 12,
	}}, got.take())

	require.NoError(t, n2.Close()) // leaves: its lease is revoked
	awaitOwners(map[string]int64{"v0": a, "v1": a, "v2": n3.ID(), "v3": n3.ID()})
	hs := got.take()
	require.Len(t, hs, 2)
	for _, h := range hs {
		require.Equal(t, bID, h.From)
		require.Equal(t, placement.ReasonOwnerDead, h.Reason)
		require.Empty(t, h.FromAddress, "a dead owner is not asked to release")
		require.EqualValues(t, 2, h.Epoch)
		require.Equal(t, cps[h.Channel], h.SeekOffset, "the new owner resumes at the checkpoint")
	}
}

func TestBalancerConfigValidate(t *testing.T) {
	require.NoError(t, placement.DefaultBalancerConfig().Validate())
	cfg := placement.DefaultBalancerConfig()
	cfg.Interval = 0
	require.Error(t, cfg.Validate())
	cfg = placement.DefaultBalancerConfig()
	cfg.Policy.ImbalanceThreshold = 0
	require.Error(t, cfg.Validate())
	_, err := placement.NewChannelBalancer(cfg, nil, nil, nil, nil, nil)
	require.ErrorContains(t, err, "imbalanceThreshold")
}
