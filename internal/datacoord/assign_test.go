package datacoord

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/wal"
)

// TestAssignmentClaimsSpareWithoutMetaStore: once a vchannel has a spare,
// a new segment is handed out without a meta-store write (the meta store
// here fails every write), and the spare stays out of client listings until
// it is claimed.
func TestAssignmentClaimsSpareWithoutMetaStore(t *testing.T) {
	e := newEnv(t)
	kv := &failingKV{Store: e.kv}
	c, err := New(context.Background(), e.cfg, kv, e.ids, e.w, e.log, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	c.now = func() time.Time { return e.clock }
	ctx := context.Background()

	a, err := c.AssignSegment(ctx, 100, 1, vch0, 10, 10) // full at once: 10 rows of 10 bytes
	require.NoError(t, err)
	require.NoError(t, c.makeSpares(ctx))
	require.Equal(t, []int64{a}, ids(c.Segments(100)), "the spare is not listed")
	require.Equal(t, []int64{a}, ids(recoveryOf(t, c, vch0).Segments), "nor recovered")
	require.EqualValues(t, 10, c.rowCount(100, nil))

	kv.fail = true
	b, err := c.AssignSegment(ctx, 100, 2, vch0, 3, 20)
	require.NoError(t, err, "claiming the spare writes nothing")
	require.NotEqual(t, a, b)
	info, ok := segmentOf(t, c, b)
	require.True(t, ok)
	require.False(t, info.Spare)
	require.EqualValues(t, 2, info.PartitionID, "the spare takes the partition that claims it")
	require.EqualValues(t, 5, info.MaxRows, "and is sized for its rows")
	require.Equal(t, []int64{a, b}, ids(c.Segments(100)))
	again, err := c.AssignSegment(ctx, 100, 2, vch0, 1, 20)
	require.NoError(t, err)
	require.Equal(t, b, again, "the claimed spare is indexed like any growing segment")

	// Without a spare (the loop has not made the next one) assignment
	// persists a new segment itself.
	_, err = c.AssignSegment(ctx, 100, 3, vch0, 1, 10)
	require.ErrorContains(t, err, "crashed")
	kv.fail = false
	d, err := c.AssignSegment(ctx, 100, 3, vch0, 1, 10)
	require.NoError(t, err)
	require.Equal(t, []int64{a, b, d}, ids(c.Segments(100)))

	// A Flush seals the claimed spare but never the unclaimed one.
	require.NoError(t, c.makeSpares(ctx))
	sealed, _, err := c.Flush(ctx, 100, []string{vch0})
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{a, b, d}, sealed)
	flushed, err := wal.DecodeFlush(e.messages(t, pch0)[0].Message.Payload)
	require.NoError(t, err)
	require.Equal(t, []int64{a, b, d}, flushed)
	n, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	require.NotContains(t, sealed, n, "the spare takes the rows after the flush")
}

// TestSpareAfterRestart: a spare claimed in memory whose claim was never
// persisted (a crash right after the insert) is still marked Spare in the
// meta store. After the restart it takes no new rows and stays unlisted,
// the data node's replay claims it for the partition of its rows, and a
// spare no row claimed is sealed once idle and dropped when the data node
// flushes it empty.
func TestSpareAfterRestart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.coord(t)
	_, err := c.AssignSegment(ctx, 100, 1, vch0, 10, 10)
	require.NoError(t, err)
	_, err = c.AssignSegment(ctx, 100, 1, vch1, 10, 10)
	require.NoError(t, err)
	require.NoError(t, c.makeSpares(ctx))
	claimed, err := c.AssignSegment(ctx, 100, 7, vch0, 2, 10) // vch0's spare; vch1's stays unclaimed
	require.NoError(t, err)
	var spare1 int64
	for id, s := range c.segments {
		if s.info.Spare && s.info.VChannel == vch1 {
			spare1 = id
		}
	}
	require.NotZero(t, spare1)

	c2 := e.coord(t) // the restart
	require.Len(t, c2.Segments(100), 2, "neither record marked Spare is listed")
	next, err := c2.AssignSegment(ctx, 100, 7, vch0, 1, 10)
	require.NoError(t, err)
	require.NotEqual(t, claimed, next, "a spare from before the restart takes no new rows")
	require.Contains(t, ids(recoveryOf(t, c2, vch0).Segments), claimed, "the data node replays it")

	// The data node replays the rows and reports the segment's start.
	require.NoError(t, c2.Synced(ctx, catalog.SyncReport{
		VChannel: vch0,
		Segments: []catalog.SegmentSync{{
			SegmentID: claimed, CollectionID: 100, PartitionID: 7,
			StartPosition: &catalog.Position{Offset: 3}, SyncedOffset: -1,
		}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, DeltaSyncedOffset: -1},
	}))
	info, _ := segmentOf(t, c2, claimed)
	require.False(t, info.Spare)
	require.EqualValues(t, 7, info.PartitionID)
	require.Contains(t, ids(c2.Segments(100)), claimed)

	// vch1's spare: sealed once idle, dropped when flushed empty.
	require.NoError(t, c2.sealByPolicy(ctx))
	info, _ = segmentOf(t, c2, spare1)
	require.Equal(t, catalog.SegmentGrowing, info.State, "not idle yet")
	e.clock = time.Now().Add(c2.cfg.MaxIdle) // New stamps loaded segments with the wall clock
	require.NoError(t, c2.sealByPolicy(ctx))
	info, _ = segmentOf(t, c2, spare1)
	require.Equal(t, catalog.SegmentSealed, info.State)
	require.NoError(t, c2.Synced(ctx, catalog.SyncReport{
		VChannel:   vch1,
		Segments:   []catalog.SegmentSync{{SegmentID: spare1, CollectionID: 100, PartitionID: 1, Flushed: true, SyncedOffset: 0}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch1, Position: catalog.Position{Offset: 1}, DeltaSyncedOffset: -1},
	}))
	info, _ = segmentOf(t, c2, spare1)
	require.Equal(t, catalog.SegmentDropped, info.State, "garbage collection removes it")
	require.NotContains(t, ids(c2.Segments(100)), spare1)
}

// TestCleanStopSavesClaims: a spare claimed in memory and not yet reported
// by the data node is persisted when Run ends, so the restarted coordinator
// lists the same segments the stopped one showed; an unclaimed spare stays
// a spare.
func TestCleanStopSavesClaims(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.coord(t)
	a, err := c.AssignSegment(ctx, 100, 1, vch0, 10, 10)
	require.NoError(t, err)
	require.NoError(t, c.makeSpares(ctx))
	claimed, err := c.AssignSegment(ctx, 100, 7, vch0, 2, 10)
	require.NoError(t, err)
	shown := ids(c.Segments(100))
	require.Equal(t, []int64{a, claimed}, shown)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	require.Eventually(t, func() bool { // the spare loop makes the next spare
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.assign.spares[vch0] != nil
	}, 5*time.Second, 10*time.Millisecond)
	stop()
	require.NoError(t, <-done)

	c2 := e.coord(t) // the restart
	require.Equal(t, shown, ids(c2.Segments(100)), "the claim was saved at the stop")
	info, ok := segmentOf(t, c2, claimed)
	require.True(t, ok)
	require.False(t, info.Spare)
	require.EqualValues(t, 7, info.PartitionID)
	var spares int
	for _, s := range c2.segments {
		if s.info.Spare {
			spares++
		}
	}
	require.Equal(t, 1, spares, "the new, unclaimed spare is still one")
}

// TestUnclaimedSpareDoesNotHoldL0Back: a spare has no start position, which
// for a growing segment means "may hold rows older than any delete"; an
// unclaimed one must not keep L0 compaction waiting.
func TestUnclaimedSpareDoesNotHoldL0Back(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.coord(t)
	a, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	require.NoError(t, c.makeSpares(ctx))
	_, _, err = c.Flush(ctx, 100, []string{vch0})
	require.NoError(t, err)
	require.NoError(t, c.Synced(ctx, catalog.SyncReport{
		VChannel: vch0,
		Segments: []catalog.SegmentSync{{
			SegmentID: a, CollectionID: 100, PartitionID: 1, Rows: 1, Flushed: true,
			Binlogs: map[int64][]catalog.Binlog{100: {{LogID: 1, Entries: 1}}}, StartPosition: &catalog.Position{}, SyncedOffset: 0,
		}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: 1}, DeltaSyncedOffset: -1},
	}))
	e.clock = e.clock.Add(time.Hour)
	before := e.messages(t, pch0)
	require.NoError(t, c.sealByPolicy(ctx))
	require.Len(t, e.messages(t, pch0), len(before), "nothing to seal: the spare is no L0 blocker")
	c.mu.Lock()
	require.NotNil(t, c.assign.spares[vch0], "the spare is kept")
	c.mu.Unlock()
}
