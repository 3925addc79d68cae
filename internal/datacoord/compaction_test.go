package datacoord

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/wal"
)

// TestManualCompactionRewritesLargeSegmentsWithDeletes: a segment too large
// to be merged, whose deletes stay below DeletedRatio, is left alone by the
// automatic triggers, but a manual (forced) compaction rewrites it so that
// its deleted rows are gone; a large segment without deletes is left alone.
func TestManualCompactionRewritesLargeSegmentsWithDeletes(t *testing.T) {
	cfg := DefaultCompaction()
	const maxSize = 1000 // bytes; 10-byte rows: segments of ≥ 50 rows are not small
	rowSize := func(catalog.SegmentInfo) int64 { return 10 }
	seg := func(id, rows, deleted int64) catalog.SegmentInfo {
		s := catalog.SegmentInfo{
			ID: id, CollectionID: 1, PartitionID: 2, VChannel: "v", State: catalog.SegmentFlushed,
			Level: catalog.LevelL1, NumRows: rows, Sorted: true,
		}
		if deleted > 0 {
			s.Deltalogs = []catalog.Binlog{{LogID: 100 + id, Entries: deleted}}
		}
		return s
	}
	segs := []catalog.SegmentInfo{
		seg(1, 80, 5), // 6% deleted: below DeletedRatio
		seg(2, 80, 0), // no deletes
	}
	require.Empty(t, planCompactions(cfg, maxSize, segs, rowSize, nil, nil, t0, false, 0, 0, nil, noClustering), "automatic: nothing to do")
	plans := planCompactions(cfg, maxSize, segs, rowSize, nil, nil, t0, true, 0, 0, nil, noClustering)
	require.Len(t, plans, 1)
	require.Equal(t, catalog.CompactionMix, plans[0].Type)
	require.Len(t, plans[0].Inputs, 1)
	require.EqualValues(t, 1, plans[0].Inputs[0].ID)

	// Heavily deleted segments are rewritten either way.
	segs[1] = seg(2, 80, 40)
	require.Len(t, planCompactions(cfg, maxSize, segs, rowSize, nil, nil, t0, false, 0, 0, nil, noClustering), 1)
}

// noClustering is a clustering-key lookup for collections without one.
func noClustering(int64) int64 { return 0 }

// pausingIDs is the real ID allocator with a gate: once armed, the next
// Allocate signals and waits until released.
type pausingIDs struct {
	Allocator
	armed            atomic.Bool
	entered, release chan struct{}
}

func (p *pausingIDs) Allocate(ctx context.Context, n uint32) (uint64, error) {
	if p.armed.CompareAndSwap(true, false) {
		close(p.entered)
		<-p.release
	}
	return p.Allocator.Allocate(ctx, n)
}

// TestTriggersDoNotOverlap: the automatic trigger plans a merge from its
// snapshot and is held up (allocating plan IDs) while a delete batch is
// synced as an L0 segment and a manual compaction is triggered. The manual
// trigger must not plan the same vchannel meanwhile: an L0 plan over the
// merge's inputs would be committed after the merge, skip the inputs (gone)
// and drop the L0 segment, and the merge's output would never get its
// deletes: deleted rows would come back after a restart.
func TestTriggersDoNotOverlap(t *testing.T) {
	e := newGCEnv(t)
	e.cfg.Compaction.MinSmallSegments = 2
	ids := &pausingIDs{Allocator: e.ids, entered: make(chan struct{}), release: make(chan struct{})}
	c, err := New(e.ctx, e.cfg, e.meta, ids, e.writer, e.log, nil, e.objs, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	e.c = c
	vch := wal.VChannelName(wal.PChannelName("by-dev", 0), 7, 0)
	e.sync(7, 1, e.id(), vch, true)
	e.sync(7, 1, e.id(), vch, true)

	ids.armed.Store(true)
	auto := make(chan error, 1)
	go func() {
		_, _, err := c.triggerCompaction(e.ctx, false, 0, 0)
		auto <- err
	}()
	<-ids.entered // the automatic trigger has its snapshot: a merge of the two segments
	e.syncL0(7, vch)
	manual := make(chan error, 1)
	go func() {
		_, err := c.ManualCompaction(e.ctx, 7, 0)
		manual <- err
	}()
	select {
	case err := <-manual: // a trigger that does not wait for the other
		manual <- err
	case <-time.After(200 * time.Millisecond):
	}
	close(ids.release)
	require.NoError(t, <-auto)
	require.NoError(t, <-manual)

	c.mu.Lock()
	defer c.mu.Unlock()
	var inFlight []string
	for _, p := range c.compaction.plans {
		if p.state == "pending" || p.state == "executing" {
			inFlight = append(inFlight, p.plan.Type.String())
		}
	}
	require.Len(t, inFlight, 1, "plans in flight on one vchannel: %v", inFlight)
}

// TestGCKeepsRunningCompactionOutputs: the outputs of a compaction that
// runs longer than the orphan retention are not garbage until the plan
// ends; after a failed plan they are.
func TestGCKeepsRunningCompactionOutputs(t *testing.T) {
	e := newGCEnv(t)
	e.cfg.Compaction.MinSmallSegments = 2
	e.open()
	vch := wal.VChannelName(wal.PChannelName("by-dev", 0), 7, 0)
	a, b := e.id(), e.id()
	e.sync(7, 1, a, vch, true)
	e.sync(7, 1, b, vch, true)
	_, n, err := e.c.triggerCompaction(e.ctx, false, 0, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	plan, ok, err := e.c.ClaimCompaction(e.ctx, "executor", time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	// The executor writes an output under IDs allocated after the plan's.
	id, err := e.ids.Allocate(e.ctx, 2)
	require.NoError(t, err)
	out, logID := int64(id), int64(id)+1
	key := storage.InsertLogKey("files", 7, 1, out, testVec, logID)
	e.put(key)
	e.advance(e.cfg.OrphanRetention + time.Hour)
	e.gc()
	require.Contains(t, e.keys(), key, "a running plan's output is kept past the orphan retention")
	require.NoError(t, e.c.CompleteCompaction(e.ctx, catalog.CompactionResult{PlanID: plan.ID, Attempt: plan.Attempt}, errors.New("executor failed")))
	e.gc()
	require.NotContains(t, e.keys(), key, "once the plan ended, an uncommitted output is an orphan")
}

// TestL0Triggers: L0 segments are compacted when there are L0Count of them,
// when the oldest is L0MaxAge old, or when their delta logs reach L0Size
// bytes; only L0 segments synced before every unflushed segment started
// are eligible.
func TestL0Triggers(t *testing.T) {
	cfg := DefaultCompaction()
	cfg.L0Count, cfg.L0MaxAge, cfg.L0Size = 4, time.Hour, 1000
	rowSize := func(catalog.SegmentInfo) int64 { return 10 }
	l0 := func(id, synced, bytes int64, age time.Duration) catalog.SegmentInfo {
		return catalog.SegmentInfo{
			ID: id, CollectionID: 1, PartitionID: -1, VChannel: "v", State: catalog.SegmentFlushed,
			Level: catalog.LevelL0, SyncedOffset: synced, CreatedAt: t0.Add(-age).UnixMilli(),
			Deltalogs: []catalog.Binlog{{LogID: 100 + id, Entries: 10, Size: bytes}},
		}
	}
	target := catalog.SegmentInfo{
		ID: 1, CollectionID: 1, PartitionID: 2, VChannel: "v", State: catalog.SegmentFlushed,
		Level: catalog.LevelL1, NumRows: 500, Sorted: true,
	}
	growing := catalog.SegmentInfo{
		ID: 2, CollectionID: 1, PartitionID: 2, VChannel: "v", State: catalog.SegmentGrowing,
		Level: catalog.LevelL1, StartPosition: &catalog.Position{Offset: 50},
	}
	plan := func(segs ...catalog.SegmentInfo) []catalog.CompactionPlan {
		return planCompactions(cfg, 1<<20, segs, rowSize, nil, nil, t0, false, 0, 0, nil, noClustering)
	}
	require.Empty(t, plan(target, growing, l0(10, 5, 300, time.Minute), l0(11, 6, 300, time.Minute)), "below every trigger")
	for name, segs := range map[string][]catalog.SegmentInfo{
		"count": {target, l0(10, 5, 10, 0), l0(11, 6, 10, 0), l0(12, 7, 10, 0), l0(13, 8, 10, 0)},
		"age":   {target, l0(10, 5, 10, 2*time.Hour)},
		"size":  {target, l0(10, 5, 600, time.Minute), l0(11, 6, 500, time.Minute)},
	} {
		plans := plan(segs...)
		require.Len(t, plans, 1, name)
		require.Equal(t, catalog.CompactionL0, plans[0].Type, name)
		require.Len(t, plans[0].Inputs, len(segs)-1, name)
		require.Equal(t, []catalog.SegmentInfo{target}, plans[0].Targets, name)
	}
	// Deletes synced after a growing segment started may be meant for its
	// rows: those L0 segments wait, and alone they stay below the size.
	plans := plan(target, growing, l0(10, 5, 600, time.Minute), l0(11, 60, 600, time.Minute))
	require.Empty(t, plans, "600 eligible bytes")
	plans = plan(target, growing, l0(10, 5, 600, time.Minute), l0(11, 6, 600, time.Minute), l0(12, 60, 600, time.Minute))
	require.Len(t, plans, 1)
	require.Len(t, plans[0].Inputs, 2, "the L0 segment synced after the growing segment started is not an input")
}

// TestL0Blockers: once an L0 segment is L0MaxAge old, the growing segments
// that keep it from being compacted (started before its deletes, or at an
// unknown position) are sealed; younger L0 segments, segments started after
// the deletes, sealed segments and other vchannels are left alone.
func TestL0Blockers(t *testing.T) {
	cfg := DefaultCompaction()
	cfg.L0MaxAge = 10 * time.Minute
	l0 := func(id int64, v string, synced int64, age time.Duration) catalog.SegmentInfo {
		return catalog.SegmentInfo{
			ID: id, VChannel: v, State: catalog.SegmentFlushed, Level: catalog.LevelL0,
			SyncedOffset: synced, CreatedAt: t0.Add(-age).UnixMilli(),
		}
	}
	growing := func(id int64, v string, start int64) catalog.SegmentInfo {
		s := catalog.SegmentInfo{ID: id, VChannel: v, State: catalog.SegmentGrowing, Level: catalog.LevelL1}
		if start >= 0 {
			s.StartPosition = &catalog.Position{Offset: start}
		}
		return s
	}
	sealed := growing(4, "a", 5)
	sealed.State = catalog.SegmentSealed
	segs := []catalog.SegmentInfo{
		l0(10, "a", 50, 20*time.Minute),                   // due: its deletes may hit rows of 1 and 2
		l0(11, "a", 90, time.Minute),                      // not due yet
		growing(1, "a", 10),                               // started before the due deletes
		growing(2, "a", -1),                               // position unknown
		growing(3, "a", 70),                               // started after them
		sealed,                                            // already on its way
		l0(12, "b", 50, time.Minute), growing(5, "b", 10), // not due
	}
	require.Equal(t, []int64{1, 2}, l0Blockers(cfg, segs, t0))
	require.Empty(t, l0Blockers(cfg, segs[1:], t0), "nothing is due")
	// What the seal achieves: once 1 and 2 are flushed the L0 segment is eligible.
	for _, i := range []int{2, 3, 5} { // 1, 2 and the sealed 4 flushed
		segs[i].State = catalog.SegmentFlushed
	}
	plans := planCompactions(cfg, 1<<20, segs, func(catalog.SegmentInfo) int64 { return 1 }, nil, nil, t0, false, 0, 0, nil, noClustering)
	require.Len(t, plans, 1)
	require.Equal(t, catalog.CompactionL0, plans[0].Type)
	require.Equal(t, []int64{10}, ids(plans[0].Inputs), "the L0 segment synced before the remaining growing segment (3) started")
}

func ids(segs []catalog.SegmentInfo) []int64 {
	var out []int64
	for _, s := range segs {
		out = append(out, s.ID)
	}
	return out
}

// TestSealByPolicyUnblocksL0: a growing segment written slowly (never idle,
// never full) that started before an L0 segment's deletes is sealed by the
// policy loop once that L0 segment is L0MaxAge old, not at MaxLife.
func TestSealByPolicyUnblocksL0(t *testing.T) {
	e := newGCEnv(t)
	const v = "by-dev-rootcoord-dml_0_1v0"
	g, err := e.c.AssignSegment(e.ctx, 1, 2, v, 10, 100)
	require.NoError(t, err)
	l0 := &catalog.SegmentInfo{
		ID: e.id(), CollectionID: 1, PartitionID: -1, VChannel: v, State: catalog.SegmentFlushed,
		Level: catalog.LevelL0, SyncedOffset: 20, CreatedAt: e.now.UnixMilli(),
		Deltalogs: []catalog.Binlog{{LogID: e.id(), Entries: 3, TsFrom: 1, TsTo: 2}},
	}
	require.NoError(t, e.c.Synced(e.ctx, catalog.SyncReport{
		VChannel: v, L0: l0,
		Checkpoint: catalog.ChannelCheckpoint{VChannel: v, Position: catalog.Position{Offset: 5}, DeltaSyncedOffset: 20},
	}))
	for range 3 { // a write every few minutes: never idle for MaxIdle
		e.advance(4 * time.Minute)
		_, err := e.c.AssignSegment(e.ctx, 1, 2, v, 1, 100)
		require.NoError(t, err)
		require.NoError(t, e.c.sealByPolicy(e.ctx))
		if e.now.Sub(time.UnixMilli(l0.CreatedAt)) < e.cfg.Compaction.L0MaxAge {
			info, _ := segmentOf(t, e.c, g)
			require.Equal(t, catalog.SegmentGrowing, info.State, "the L0 segment is not due yet")
		}
	}
	info, _ := segmentOf(t, e.c, g)
	require.Equal(t, catalog.SegmentSealed, info.State, "sealed once the L0 segment it blocks is %s old", e.cfg.Compaction.L0MaxAge)
}

// TestFailedCompactionBacksOff: a merge that fails to execute (an input
// cannot be read, say) is not planned again by the automatic trigger until
// its backoff ends, and the backoff doubles with each failure; a manual
// compaction tries at once; a commit clears the record. A failed L0 plan
// holds its vchannel the same way.
func TestFailedCompactionBacksOff(t *testing.T) {
	e := newGCEnv(t)
	e.cfg.Compaction.MinSmallSegments = 2
	e.open()
	vch := wal.VChannelName(wal.PChannelName("by-dev", 0), 7, 0)
	e.sync(7, 1, e.id(), vch, true)
	e.sync(7, 1, e.id(), vch, true)
	failOnce := func(force bool) {
		t.Helper()
		var n int
		var err error
		if force {
			_, err = e.c.ManualCompaction(e.ctx, 7, 0)
			n = 1
		} else {
			_, n, err = e.c.triggerCompaction(e.ctx, false, 0, 0)
		}
		require.NoError(t, err)
		require.Equal(t, 1, n)
		plan, ok, err := e.c.ClaimCompaction(e.ctx, "executor", time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, catalog.CompactionMix, plan.Type)
		require.NoError(t, e.c.CompleteCompaction(e.ctx, catalog.CompactionResult{PlanID: plan.ID, Attempt: plan.Attempt}, errors.New("binlog unreadable")))
	}
	planned := func() int {
		t.Helper()
		_, n, err := e.c.triggerCompaction(e.ctx, false, 0, 0)
		require.NoError(t, err)
		return n
	}
	failOnce(false)
	require.Zero(t, planned(), "inside the first backoff")
	e.advance(failureBackoff + time.Second)
	// (the trigger above planned nothing, so the claim below is the new plan)
	failOnce(false)
	e.advance(failureBackoff + time.Second)
	require.Zero(t, planned(), "the second backoff is twice as long")
	failOnce(true) // a manual compaction does not wait
	e.advance(8*failureBackoff + time.Second)
	require.Equal(t, 1, planned(), "after the third backoff")

	// The L0 side: a failed L0 plan holds the vchannel.
	e2 := newGCEnv(t)
	e2.cfg.Compaction.L0Count = 1 // due at once
	e2.open()
	v2 := wal.VChannelName(wal.PChannelName("by-dev", 0), 8, 0)
	e2.sync(8, 1, e2.id(), v2, true)
	e2.syncL0(8, v2)
	_, err := e2.c.ManualCompaction(e2.ctx, 8, 0)
	require.NoError(t, err)
	plan, ok, err := e2.c.ClaimCompaction(e2.ctx, "executor", time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, catalog.CompactionL0, plan.Type)
	require.NoError(t, e2.c.CompleteCompaction(e2.ctx, catalog.CompactionResult{PlanID: plan.ID, Attempt: plan.Attempt}, errors.New("delta log unreadable")))
	_, n, err := e2.c.triggerCompaction(e2.ctx, false, 0, 0)
	require.NoError(t, err)
	require.Zero(t, n, "the vchannel waits after a failed L0 plan")
	e2.advance(failureBackoff + time.Second)
	_, n, err = e2.c.triggerCompaction(e2.ctx, false, 0, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

// ttlChannels is a Channels of one collection whose TTL cut-off is fixed.
type ttlChannels struct{ cut uint64 }

func (ttlChannels) LiveVChannels() []string          { return nil }
func (ttlChannels) StartOffset(string) (int64, bool) { return 0, false }
func (c ttlChannels) ExpireBefore(context.Context, int64) (uint64, error) {
	return c.cut, nil
}
func (ttlChannels) ClusteringKey(int64) int64 { return 0 }

// TestCompactionCutoffGrace: automatic compactions drop rows only once they
// are ExpiryGrace past the TTL; a manual one drops every expired row.
func TestCompactionCutoffGrace(t *testing.T) {
	e := newEnv(t)
	c := e.coord(t)
	cut := uint64(10*60*1000) << 18 // 10 minutes of hybrid time
	c.chans = ttlChannels{cut: cut}
	require.Equal(t, cut-uint64(60*1000)<<18, c.compactionCutoff(1, false))
	require.Equal(t, cut, c.compactionCutoff(1, true))
	c.cfg.Compaction.ExpiryGrace = time.Hour
	require.Zero(t, c.compactionCutoff(1, false), "nothing is a grace period past the TTL yet")
	c.chans = ttlChannels{}
	require.Zero(t, c.compactionCutoff(1, true), "no TTL")
}

// Automatic merges rewrite a freshly flushed row once: the output of a
// merge, however small, is not an input of the next automatic merge of
// small segments (a manual compaction still merges it, and deletes still
// get it rewritten).
func TestAutomaticMergeTakesOnlyFreshSegments(t *testing.T) {
	cfg := DefaultCompaction() // MinSmallSegments 4
	const maxSize = 1000       // bytes; 10-byte rows: segments below 50 rows are small
	rowSize := func(catalog.SegmentInfo) int64 { return 10 }
	seg := func(id, rows int64, from ...int64) catalog.SegmentInfo {
		return catalog.SegmentInfo{
			ID: id, CollectionID: 1, PartitionID: 2, VChannel: "v", State: catalog.SegmentFlushed,
			Level: catalog.LevelL1, NumRows: rows, CompactedFrom: from, Sorted: true,
		}
	}
	plan := func(force bool, segs ...catalog.SegmentInfo) [][]int64 {
		var out [][]int64
		for _, p := range planCompactions(cfg, maxSize, segs, rowSize, nil, nil, t0, force, 0, 0, nil, noClustering) {
			var ids []int64
			for _, in := range p.Inputs {
				ids = append(ids, in.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	require.Equal(t, [][]int64{{1, 2, 3, 4}}, plan(false, seg(1, 5), seg(2, 5), seg(3, 5), seg(4, 5)), "four fresh small segments merge")
	merged := seg(5, 20, 1, 2, 3, 4) // small still (200 of 1000 bytes)
	require.Empty(t, plan(false, merged, seg(6, 5), seg(7, 5), seg(8, 5)), "three fresh ones wait; the output does not count")
	require.Equal(t, [][]int64{{6, 7, 8, 9}}, plan(false, merged, seg(6, 5), seg(7, 5), seg(8, 5), seg(9, 5)),
		"the next merge leaves the output alone")
	require.Equal(t, [][]int64{{5, 6, 7}}, plan(true, merged, seg(6, 5), seg(7, 5)), "a manual compaction merges it")
	heavy := merged
	heavy.Deltalogs = []catalog.Binlog{{LogID: 100, Entries: 10}}
	require.Equal(t, [][]int64{{5}}, plan(false, heavy), "deletes still get it rewritten")
}

// A flushed L1 segment synced in several batches (not sorted) gets a plan
// of its own, which sorts it, unless a merge takes it anyway; its index
// waits for the sorted output. A force merge (ManualCompaction with a
// target size) puts every flushed L1 segment of a partition in a plan, a
// segment alone too, and leaves L0 and L2 segments out.
func TestSortAndForceMergePlans(t *testing.T) {
	cfg := DefaultCompaction() // MinSmallSegments 4
	const maxSize = 1000       // bytes; 10-byte rows: segments below 50 rows are small
	rowSize := func(catalog.SegmentInfo) int64 { return 10 }
	seg := func(id, rows int64, sorted bool) catalog.SegmentInfo {
		return catalog.SegmentInfo{
			ID: id, CollectionID: 1, PartitionID: 2, VChannel: "v", State: catalog.SegmentFlushed,
			Level: catalog.LevelL1, NumRows: rows, Sorted: sorted,
		}
	}
	plan := func(force bool, mergeTo int64, segs ...catalog.SegmentInfo) [][]int64 {
		var out [][]int64
		for _, p := range planCompactions(cfg, maxSize, segs, rowSize, nil, nil, t0, force, mergeTo, 0, nil, noClustering) {
			var ids []int64
			for _, in := range p.Inputs {
				ids = append(ids, in.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	require.Empty(t, plan(false, 0, seg(1, 80, true), seg(2, 5, true)), "sorted segments wait")
	require.Equal(t, [][]int64{{2}, {3}}, plan(false, 0, seg(1, 80, true), seg(2, 80, false), seg(3, 5, false)),
		"each unsorted one is sorted alone")
	require.Equal(t, [][]int64{{1, 2, 3, 4}}, plan(false, 0, seg(1, 5, false), seg(2, 5, true), seg(3, 5, true), seg(4, 5, true)),
		"a merge sorts its inputs: no plan of their own")
	empty := seg(5, 0, false)
	require.Empty(t, plan(false, 0, empty), "nothing to sort in an empty segment")

	l2 := seg(9, 80, true)
	l2.Level = catalog.LevelL2
	require.Equal(t, [][]int64{{1, 2, 3}, {4}}, plan(true, 2000, seg(1, 80, true), seg(2, 80, true), seg(3, 30, true), seg(4, 90, true), l2),
		"force merge: groups up to 2000 bytes")
	require.Equal(t, [][]int64{{1}}, plan(true, 1<<62, seg(1, 80, true)), "force merge: a segment alone is in a plan")
	require.Equal(t, [][]int64{{1, 2}}, plan(true, 1<<62, seg(1, 80, true), seg(2, 10, false)))

	// The index waits for the sorted output.
	idx := catalog.IndexInfo{ID: 100, CollectionID: 1, FieldID: 101}
	wants := planIndexTasks([]catalog.IndexInfo{idx}, []catalog.SegmentInfo{seg(1, 80, true), seg(2, 80, false), l2}, nil)
	var built []int64
	for _, w := range wants {
		built = append(built, w.segment.ID)
	}
	require.Equal(t, []int64{1, 9}, built)
}
