package querynode_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/metastore/embedded"
	objlocal "github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/local"
)

// These tests run a query node against the real parts around it (meta
// store, TSO, WAL, data coordinator, data node, object store, proxy for
// DDL and inserts), in one process, so that the order of events around a
// vchannel load can be fixed exactly: the data node runs only when a test
// step starts it, and hooks on the query node's view of the coordinator and
// of object storage let a step happen at a chosen point of the load.

// cluster is the in-process stack.
type cluster struct {
	t      *testing.T
	px     *proxy.Proxy
	root   *rootcoord.Core
	data   *datacoord.Coordinator
	dn     *datanode.Node
	qn     *querynode.Node
	segs   *hookedSegments
	objs   *hookedObjects
	collID int64
}

// hookedSegments is the data coordinator as the query node sees it, with a
// hook run once, right after the first Recovery (the view a load starts from).
type hookedSegments struct {
	*datacoord.Coordinator
	mu            sync.Mutex
	afterRecovery func()
}

// Recovery returns the coordinator's view, then runs the pending hook.
func (h *hookedSegments) Recovery(vchannel string) catalog.RecoveryInfo {
	rec := h.Coordinator.Recovery(vchannel)
	h.mu.Lock()
	hook := h.afterRecovery
	h.afterRecovery = nil
	h.mu.Unlock()
	if hook != nil {
		hook()
	}
	return rec
}

// hookedObjects is object storage as the query node reads it; while a gate
// is set, reads of files of segments other than the allowed ones wait for it.
type hookedObjects struct {
	*objlocal.Store
	mu      sync.Mutex
	gate    chan struct{}
	allowed []int64
}

// Get waits at the gate unless the key belongs to an allowed segment.
func (h *hookedObjects) Get(ctx context.Context, key string) ([]byte, error) {
	h.mu.Lock()
	wait := h.gate
	for _, id := range h.allowed {
		if strings.Contains(key, "/"+strconv.FormatInt(id, 10)+"/") {
			wait = nil
		}
	}
	h.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Store.Get(ctx, key)
}

// holdAllBut makes reads of every segment's files but the allowed ones wait
// until the returned function is called.
func (h *hookedObjects) holdAllBut(allowed ...int64) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	gate := make(chan struct{})
	h.gate, h.allowed = gate, allowed
	return func() {
		h.mu.Lock()
		h.gate, h.allowed = nil, nil
		h.mu.Unlock()
		close(gate)
	}
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	meta, err := embedded.Open(filepath.Join(dir, "meta.db"), logger)
	require.NoError(t, err)
	t.Cleanup(func() { _ = meta.Close() })
	store, err := objlocal.Open(filepath.Join(dir, "storage"))
	require.NoError(t, err)
	log, err := local.Open(local.Config{Dir: filepath.Join(dir, "wal")}, logger)
	require.NoError(t, err)
	t.Cleanup(func() { _ = log.Close() })
	clock, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.TimestampKey}, logger)
	require.NoError(t, err)
	ids, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.IDKey}, logger)
	require.NoError(t, err)
	writer := wal.NewWriter(log, clock, wal.WriterConfig{}.Defaults(), logger)
	rcfg := rootcoord.Defaults()
	rcfg.PChannels = 1
	root, err := rootcoord.New(ctx, rcfg, meta, ids, clock, writer, logger)
	require.NoError(t, err)
	pins := wal.NewPins(log)
	data, err := datacoord.New(ctx, datacoord.Defaults(), meta, ids, writer, pins, root, store, logger)
	require.NoError(t, err)
	c := &cluster{t: t, root: root, data: data, segs: &hookedSegments{Coordinator: data}, objs: &hookedObjects{Store: store}}
	c.qn = querynode.New(querynode.Defaults(), log, c.objs, c.segs, root, writer, pins, logger)
	t.Cleanup(func() { _ = c.qn.Close() })
	dcfg := datanode.Defaults()
	dcfg.PChannels = []string{wal.PChannelName(rcfg.ChannelPrefix, 0)}
	c.dn, err = datanode.New(dcfg, log, store, data, root, ids, logger)
	require.NoError(t, err)
	c.px = proxy.New(proxy.Defaults(), root, data, c.qn, writer, ids, clock, logger)

	schema, err := proto.Marshal(&schemapb.CollectionSchema{Name: "replay", Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
	}})
	require.NoError(t, err)
	st, err := c.px.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "replay", Schema: schema, ShardsNum: 1})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	col, err := root.Collection("", "replay")
	require.NoError(t, err)
	c.collID = col.ID
	return c
}

// insert writes rows with keys [from, to) and returns the segment that took them.
func (c *cluster) insert(from, to int64) int64 {
	c.t.Helper()
	var keys []int64
	var vecs []float32
	for k := from; k < to; k++ {
		keys = append(keys, k)
		vecs = append(vecs, float32(k), 1)
	}
	resp, err := c.px.Insert(context.Background(), &milvuspb.InsertRequest{CollectionName: "replay", NumRows: uint32(len(keys)),
		FieldsData: []*schemapb.FieldData{
			{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
				Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: keys}}}}},
			{FieldName: "vec", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
				Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: vecs}}}}},
		}})
	require.NoError(c.t, err)
	require.Zero(c.t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	var growing []int64
	for _, s := range c.data.Segments(c.collID) {
		if s.State == catalog.SegmentGrowing && s.Level == catalog.LevelL1 {
			growing = append(growing, s.ID)
		}
	}
	require.Len(c.t, growing, 1)
	return growing[0]
}

// flush seals every growing segment and runs the data node until they are
// Flushed; the data node stops again.
func (c *cluster) flush() []int64 {
	c.t.Helper()
	ctx := context.Background()
	col, err := c.root.Collection("", "replay")
	require.NoError(c.t, err)
	ids, ts, err := c.data.Flush(ctx, c.collID, col.VChannels)
	require.NoError(c.t, err)
	c.runDataNode(func() bool { return c.data.FlushState(ids, col.VChannels, ts) })
	return ids
}

// runDataNode runs the data node (and the compactor) until done holds.
func (c *cluster) runDataNode(done func() bool) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.dn.Run(ctx) })
	wg.Go(func() { _ = c.dn.RunCompactor(ctx, c.data) })
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		require.True(c.t, time.Now().Before(deadline), "the data node did not finish")
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wg.Wait()
}

// compact merges the flushed segments and waits for the commit.
func (c *cluster) compact() {
	c.t.Helper()
	id, err := c.data.ManualCompaction(context.Background(), c.collID)
	require.NoError(c.t, err)
	c.runDataNode(func() bool {
		executing, completed, failed, _ := c.data.CompactionState(id)
		require.Zero(c.t, failed)
		return executing == 0 && completed > 0
	})
}

// count is count(*) with Strong consistency.
func (c *cluster) count() int64 {
	c.t.Helper()
	res, err := c.qn.Query(context.Background(), &plan.Query{Read: plan.Read{CollectionID: c.collID, Strong: true}, CountOnly: true})
	require.NoError(c.t, err)
	return res.Count
}

// served lists the segments the query node serves: ID → growing.
func (c *cluster) served() map[int64]bool {
	out := map[int64]bool{}
	for _, s := range c.qn.Segments(c.collID) {
		out[s.ID] = s.Growing
	}
	return out
}

// A segment that is Sealed when a load takes its view and Flushed by the
// time the replay reaches its inserts keeps its rows visible (as a growing
// segment) until its flushed copy is loaded, then is served from that copy.
func TestReplayedSegmentFlushedDuringLoad(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	x := c.insert(0, 100)
	col, err := c.root.Collection("", "replay")
	require.NoError(t, err)
	_, _, err = c.data.Flush(ctx, c.collID, col.VChannels) // sealed; the data node is not running
	require.NoError(t, err)
	info, _ := c.data.Segment(x)
	require.Equal(t, catalog.SegmentSealed, info.State)

	release := c.objs.holdAllBut() // the handoff cannot load it yet
	c.segs.afterRecovery = func() {
		c.runDataNode(func() bool { s, _ := c.data.Segment(x); return s.State == catalog.SegmentFlushed })
	}
	require.NoError(t, c.qn.Load(ctx, c.collID, nil))
	require.EqualValues(t, 100, c.count(), "rows of a segment flushed during the load are visible before its handoff")
	require.Equal(t, map[int64]bool{x: true}, c.served())

	release()
	require.Eventually(t, func() bool { return !c.served()[x] && len(c.served()) == 1 }, 10*time.Second, 10*time.Millisecond,
		"the flushed copy replaces the growing one")
	require.EqualValues(t, 100, c.count())
}

// A segment that is Sealed when a load takes its view, and flushed and
// compacted away before the replay reaches its inserts, is served through
// the compaction output from the moment the load is done: its rows are
// neither missing nor counted twice.
func TestReplayedSegmentCompactedDuringLoad(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	a := c.insert(0, 100)
	c.flush()
	x := c.insert(100, 250)
	col, err := c.root.Collection("", "replay")
	require.NoError(t, err)
	_, _, err = c.data.Flush(ctx, c.collID, col.VChannels)
	require.NoError(t, err)

	c.segs.afterRecovery = func() {
		c.runDataNode(func() bool { s, _ := c.data.Segment(x); return s.State == catalog.SegmentFlushed })
		c.compact()
		sa, _ := c.data.Segment(a)
		sx, _ := c.data.Segment(x)
		require.Equal(t, catalog.SegmentDropped, sa.State)
		require.Equal(t, catalog.SegmentDropped, sx.State)
	}
	// The compaction output's files are slow to read: the load must not be
	// done (and serve reads) before it serves them.
	release := c.objs.holdAllBut(a)
	loaded := make(chan error, 1)
	go func() { loaded <- c.qn.Load(ctx, c.collID, nil) }()
	select {
	case err := <-loaded:
		require.NoError(t, err)
		require.EqualValues(t, 250, c.count(), "rows of a segment compacted during the load are visible once it is done")
		release()
	case <-time.After(300 * time.Millisecond):
		release()
		require.NoError(t, <-loaded)
	}
	require.EqualValues(t, 250, c.count(), "rows of a segment compacted during the load are visible once it is done")
	served := c.served()
	require.Len(t, served, 1, "only the compaction output is served: %v", served)
	for id, growing := range served {
		require.False(t, growing)
		require.NotContains(t, []int64{a, x}, id)
	}
}
