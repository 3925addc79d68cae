package datanode_test

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
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/stacktest"
)

// cluster is a stack with four collections of one shard each, so four
// vchannels on the stack's one pchannel, consumed by watched data nodes
// 1..n (at addresses "dn1"…), which a ChannelApplier over the real data
// coordinator moves around.
type cluster struct {
	t     *testing.T
	s     *stacktest.Stack
	cols  []*catalog.Collection
	vchs  []string // the collections' vchannels, in collection order
	nodes map[int64]*datanode.Node
	apply *placement.ChannelApplier
	// owners is the placement as the test applied it.
	owners map[string]placement.Assignment
}

// collections are the cluster's collections.
var collections = []string{"a", "b", "c", "d"}

func addr(id int64) string { return fmt.Sprintf("dn%d", id) }

func newCluster(t *testing.T, nodes int) *cluster {
	t.Helper()
	s := stacktest.New(t)
	c := &cluster{t: t, s: s, nodes: map[int64]*datanode.Node{}, owners: map[string]placement.Assignment{}}
	for _, name := range collections {
		col := s.CreateCollection(name)
		c.cols = append(c.cols, col)
		c.vchs = append(c.vchs, col.VChannels...)
	}
	byAddr := map[string]*datanode.Node{}
	for id := int64(1); id <= int64(nodes); id++ {
		cfg := s.DataNodeConfig
		cfg.Watched = true
		cfg.PChannels = nil
		dn, err := datanode.New(cfg, s.Log, s.Objects, s.Data, s.Root, s.IDs, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- dn.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			require.NoError(t, <-done)
		})
		c.nodes[id], byAddr[addr(id)] = dn, dn
	}
	dial := func(address string) (placement.ChannelOwner, error) {
		dn, ok := byAddr[address]
		if !ok {
			return nil, fmt.Errorf("no data node at %s", address)
		}
		return dn, nil
	}
	var err error
	c.apply, err = placement.NewChannelApplier(placement.DefaultApplierConfig(), dial, s.Data, nil)
	require.NoError(t, err)
	// The initial placement, as the balancer decides it.
	ids := slices.Sorted(maps.Keys(c.nodes))
	for _, m := range placement.AssignChannels(nil, ids, c.vchs, placement.DefaultChannelPolicy(), false).Moves {
		c.move(m.Channel, m.To, true)
	}
	return c
}

// move gives vchannel to node to; with live set, its previous owner
// releases it first, else it is treated as dead (it may still run).
func (c *cluster) move(vchannel string, to int64, live bool) {
	c.t.Helper()
	prev := c.owners[vchannel]
	h := placement.Handoff{
		Move:  placement.Move{Channel: vchannel, From: prev.Node, To: to, Reason: placement.ReasonBalance},
		Epoch: prev.Epoch + 1, ToAddress: addr(to),
	}
	switch {
	case prev.Node == 0:
		h.Reason = placement.ReasonNew
	case live:
		h.FromAddress = addr(prev.Node)
	default:
		h.Reason = placement.ReasonOwnerDead
	}
	require.NoError(c.t, c.apply.Apply(context.Background(), h))
	c.owners[vchannel] = placement.Assignment{Node: to, Epoch: h.Epoch}
}

// watched is what the test placed on node id.
func (c *cluster) watched(id int64) map[string]int64 {
	out := map[string]int64{}
	for ch, a := range c.owners {
		if a.Node == id {
			out[ch] = a.Epoch
		}
	}
	return out
}

// insert writes keys [from, to) in batches of 10 into every collection.
func (c *cluster) insert(from, to int64) {
	for k := from; k < to; k += 10 {
		for _, name := range collections {
			c.s.InsertRows(name, k, min(k+10, to))
		}
	}
}

// flush seals every segment and waits until they are flushed and every
// checkpoint passed the seal.
func (c *cluster) flush() {
	c.t.Helper()
	for _, col := range c.cols {
		ids, ts, err := c.s.Data.Flush(context.Background(), col.ID, col.VChannels)
		require.NoError(c.t, err)
		require.Eventually(c.t, func() bool { return c.s.FlushState(ids, col.VChannels, ts) },
			30*time.Second, 5*time.Millisecond, "the segments of %s are flushed", col.Name)
	}
}

// requireStored checks that every collection's flushed segments hold the
// keys want exactly once.
func (c *cluster) requireStored(want []int64) {
	c.t.Helper()
	for _, col := range c.cols {
		require.Equal(c.t, want, c.stored(col.ID), "the rows of %s", col.Name)
	}
}

// stored returns the keys in a collection's flushed segments, sorted (a
// key stored twice is there twice).
func (c *cluster) stored(collection int64) []int64 {
	c.t.Helper()
	var out []int64
	for _, seg := range c.s.Data.Segments(collection) {
		if seg.Level == catalog.LevelL0 || seg.NumRows == 0 {
			continue
		}
		require.Equal(c.t, catalog.SegmentFlushed, seg.State, "segment %d", seg.ID)
		k := storedKeys(c.t, c.s, seg.ID)
		require.Len(c.t, k, int(seg.NumRows), "segment %d's files hold its rows", seg.ID)
		out = append(out, k...)
	}
	slices.Sort(out)
	return out
}

// rowsOf is the rows the coordinator recorded for vchannel's segments.
func (c *cluster) rowsOf(vchannel string) int64 {
	var n int64
	for _, col := range c.cols {
		for _, seg := range c.s.Data.Segments(col.ID) {
			if seg.VChannel == vchannel && seg.Level != catalog.LevelL0 {
				n += seg.NumRows
			}
		}
	}
	return n
}

// TestWatchedNodesSplitTheChannels: two data nodes read the same pchannel,
// each keeping only the vchannels it was told to watch; every row is
// stored exactly once.
func TestWatchedNodesSplitTheChannels(t *testing.T) {
	c := newCluster(t, 2)
	for id, dn := range c.nodes {
		require.Equal(t, c.watched(id), dn.Channels())
		require.Len(t, dn.Channels(), 2)
	}
	c.insert(0, 400)
	c.flush()
	c.requireStored(keyRange(0, 400))
	for _, v := range c.vchs {
		require.Positive(t, c.rowsOf(v), "rows of %s", v)
		cp, ok := c.s.Data.Checkpoint(v)
		require.True(t, ok)
		require.EqualValues(t, 1, c.s.Data.Epoch(v), "%s is fenced at its epoch", v)
		require.NotZero(t, cp.Position.Offset)
	}
}

// moveMidIngest writes keys [0, 200) to a cluster of two nodes, lets the
// owner of the first vchannel buffer them (16 MiB buffers: no sync yet),
// then moves that vchannel to the other node (live: with a release) while
// keys [200, 400) are written. It returns the vchannel and its old and
// new owners.
func moveMidIngest(t *testing.T, live bool) (c *cluster, v string, from, to int64) {
	t.Helper()
	c = newCluster(t, 2)
	v = c.vchs[0]
	from = c.owners[v].Node
	to = 3 - from
	c.insert(0, 200)
	time.Sleep(300 * time.Millisecond)
	require.Zero(t, c.rowsOf(v), "nothing synced before the move")
	var wg sync.WaitGroup
	wg.Go(func() { c.insert(200, 400) })
	c.move(v, to, live)
	wg.Wait()
	return c, v, from, to
}

// TestMoveFromLiveNode: a balance move while rows keep coming: the old
// owner syncs what it buffered and reports it before the new owner reads
// the recovery information; nothing is lost or stored twice.
func TestMoveFromLiveNode(t *testing.T) {
	c, v, from, to := moveMidIngest(t, true)
	require.Positive(t, c.rowsOf(v), "the release synced the old owner's buffer")
	require.NotContains(t, c.nodes[from].Channels(), v)
	require.Equal(t, c.watched(to), c.nodes[to].Channels())
	require.EqualValues(t, 2, c.nodes[to].Channels()[v])
	c.flush()
	c.requireStored(keyRange(0, 400))
}

// TestMoveFromDeadNode: the owner is declared dead but still runs and
// buffers; the channel moves without a release. Its late sync is refused
// (it stops the channel) and the new owner replays from the checkpoint:
// nothing is lost or stored twice.
func TestMoveFromDeadNode(t *testing.T) {
	c, v, from, _ := moveMidIngest(t, false)
	require.Contains(t, c.nodes[from].Channels(), v, "the stale owner still consumes the channel")
	c.flush() // the stale owner syncs at the Flush message too, and is refused
	require.Eventually(t, func() bool { _, ok := c.nodes[from].Channels()[v]; return !ok }, 30*time.Second,
		5*time.Millisecond, "a refused report stops the stale owner's channel")
	c.requireStored(keyRange(0, 400))
	require.EqualValues(t, 2, c.s.Data.Epoch(v))
}

// TestStaleReportChangesNothing: once a channel is fenced at a newer
// epoch, a report of an older one is refused with the stale-epoch error
// and leaves the checkpoint and the segments as they were; epoch 0
// (standalone) is never refused.
func TestStaleReportChangesNothing(t *testing.T) {
	c := newCluster(t, 1)
	v := c.vchs[1]
	c.insert(0, 100)
	c.flush()
	ctx := context.Background()
	require.NoError(t, c.s.Data.Fence(ctx, v, 5))
	require.NoError(t, c.s.Data.Fence(ctx, v, 3), "fencing to an older epoch does nothing")
	require.EqualValues(t, 5, c.s.Data.Epoch(v))

	cp, _ := c.s.Data.Checkpoint(v)
	col := c.cols[1]
	segs := c.s.Data.Segments(col.ID)
	var seg catalog.SegmentInfo
	for _, s := range segs {
		if s.VChannel == v && s.Level == catalog.LevelL1 {
			seg = s
		}
	}
	require.NotZero(t, seg.ID)
	late := cp
	late.Position.Offset += 1000
	err := c.s.Data.Synced(ctx, catalog.SyncReport{
		VChannel: v, Epoch: 4, Checkpoint: late,
		Segments: []catalog.SegmentSync{{SegmentID: seg.ID, CollectionID: col.ID, Rows: 7, SyncedOffset: late.Position.Offset}},
	})
	require.Error(t, err)
	require.True(t, catalog.IsStaleEpoch(err), "%v", err)
	require.ErrorContains(t, err, "channel not found[channel="+v+"]")
	after, _ := c.s.Data.Checkpoint(v)
	require.Equal(t, cp, after, "the checkpoint did not move")
	require.Equal(t, segs, c.s.Data.Segments(col.ID), "the segments did not change")

	// The current epoch and a newer one are accepted; a newer one raises it.
	require.NoError(t, c.s.Data.Synced(ctx, catalog.SyncReport{VChannel: v, Epoch: 6, Checkpoint: cp}))
	require.EqualValues(t, 6, c.s.Data.Epoch(v))
	require.NoError(t, c.s.Data.Synced(ctx, catalog.SyncReport{VChannel: v, Checkpoint: cp}), "epoch 0 is unfenced")
}

// TestWatchRequests: the methods are idempotent, a stale watch is refused,
// a standalone node watches nothing, and the node's epochs are listed.
func TestWatchRequests(t *testing.T) {
	c := newCluster(t, 1)
	dn := c.nodes[1]
	ctx := context.Background()
	v := c.vchs[2]
	require.NoError(t, dn.WatchChannel(ctx, v, 1), "watching again under the same epoch")
	require.Len(t, dn.Channels(), 4)
	require.NoError(t, dn.WatchChannel(ctx, v, 3), "a newer epoch restarts it")
	require.EqualValues(t, 3, dn.Channels()[v])
	require.ErrorContains(t, dn.WatchChannel(ctx, v, 2), "stale")
	require.ErrorContains(t, dn.WatchChannel(ctx, v, 0), "positive")
	require.Error(t, dn.WatchChannel(ctx, "not-a-vchannel", 1))
	require.NoError(t, dn.ReleaseChannel(ctx, v))
	require.NoError(t, dn.ReleaseChannel(ctx, v), "released already")
	require.NotContains(t, dn.Channels(), v)

	standalone := c.s.NewDataNode()
	require.ErrorIs(t, standalone.WatchChannel(ctx, v, 1), datanode.ErrNotWatched)
	require.Empty(t, standalone.Channels())
}
