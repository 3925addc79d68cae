package datacoord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
)

// repeatReport is a data node's report of one sync of seg through offset
// off, with the files of its attempt number try: an attempt writes its
// files anew (new log IDs, a new L0 segment ID) but covers the same rows.
func repeatReport(seg int64, rows, off, try int64, flush, deletes bool) catalog.SyncReport {
	logID := 1000*off + 10*try
	r := catalog.SyncReport{
		VChannel: vch0,
		Segments: []catalog.SegmentSync{{
			SegmentID: seg, CollectionID: 100, PartitionID: 1, Rows: rows, Flushed: flush,
			Binlogs:       map[int64][]catalog.Binlog{0: {{LogID: logID, Entries: rows}}},
			Statslogs:     map[int64][]catalog.Binlog{100: {{LogID: logID + 1, Entries: rows}}},
			StartPosition: &catalog.Position{Offset: 1, TimeTick: 1}, SyncedOffset: off,
		}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: off + 1, TimeTick: uint64(off)}, DeltaSyncedOffset: -1},
	}
	if rows == 0 {
		r.Segments[0].Binlogs, r.Segments[0].Statslogs = nil, nil
	}
	if deletes {
		r.L0 = &catalog.SegmentInfo{
			ID: logID + 5, CollectionID: 100, PartitionID: -1, VChannel: vch0, State: catalog.SegmentFlushed,
			Level: catalog.LevelL0, NumRows: 2, Deltalogs: []catalog.Binlog{{LogID: logID + 6, Entries: 2}}, SyncedOffset: off,
		}
		r.Checkpoint.DeltaSyncedOffset = off
	}
	return r
}

// withSegment is a coordinator (of newEnv) with a growing segment of
// collection 100 on vch0 that was assigned rows rows.
func withSegment(t *testing.T, rows int64) (*env, *Coordinator, int64) {
	t.Helper()
	e := newEnv(t)
	c := e.coord(t)
	seg, err := c.AssignSegment(t.Context(), 100, 1, vch0, rows, 1)
	require.NoError(t, err)
	return e, c, seg
}

// vchannelState is everything Synced may change on vch0.
type vchannelState struct {
	Segments   []catalog.SegmentInfo
	Checkpoint catalog.ChannelCheckpoint
}

func stateOf(c *Coordinator) vchannelState {
	cp, _ := c.Checkpoint(vch0)
	return vchannelState{Segments: c.Segments(100), Checkpoint: cp}
}

// TestSyncedTwice: a report applied a second time (its answer was lost)
// succeeds and changes nothing, in memory and in the meta store, whether it
// is the same report or the sync written again with new files; a report
// past it is applied.
func TestSyncedTwice(t *testing.T) {
	for _, tc := range []struct {
		name          string
		flush, delete bool
	}{{"insert", false, false}, {"insert and deletes", false, true}, {"flush", true, false}, {"flush and deletes", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			e, c, seg := withSegment(t, 10)
			ctx := t.Context()
			e.clock = t0.Add(time.Minute)
			require.NoError(t, c.Synced(ctx, repeatReport(seg, 4, 3, 0, false, false)))

			first := repeatReport(seg, 6, 8, 0, tc.flush, tc.delete)
			require.NoError(t, c.Synced(ctx, first))
			want := stateOf(c)
			e.clock = t0.Add(2 * time.Minute)
			require.NoError(t, c.Synced(ctx, first), "the same report again")
			require.Equal(t, want, stateOf(c))
			require.NoError(t, c.Synced(ctx, repeatReport(seg, 6, 8, 1, tc.flush, tc.delete)), "the sync again, new files")
			require.Equal(t, want, stateOf(c))
			require.Equal(t, want, stateOf(e.coord(t)), "nothing more in the meta store")

			info, ok := segmentOf(t, c, seg)
			require.True(t, ok)
			require.EqualValues(t, 10, info.NumRows, "every row once")
			require.Equal(t, []catalog.Binlog{{LogID: 3000, Entries: 4}, {LogID: 8000, Entries: 6}}, info.Binlogs[0])
			require.Equal(t, t0.Add(time.Minute).UnixMilli(), info.LastSyncAt)
			l0s := 0
			for _, s := range c.Segments(100) {
				if s.Level == catalog.LevelL0 {
					l0s++
					require.EqualValues(t, 8005, s.ID, "the first attempt's L0 segment")
				}
			}
			require.Equal(t, map[bool]int{false: 0, true: 1}[tc.delete], l0s)
			if tc.flush {
				require.Equal(t, catalog.SegmentFlushed, info.State)
			}
		})
	}
}

// TestSyncedOlderReport: a report older than one applied after it (a late
// copy) changes nothing either, and never moves the checkpoint back; a
// report newer than both is applied.
func TestSyncedOlderReport(t *testing.T) {
	_, c, seg := withSegment(t, 20)
	ctx := t.Context()
	older, newer := repeatReport(seg, 4, 3, 0, false, true), repeatReport(seg, 6, 8, 0, false, true)
	require.NoError(t, c.Synced(ctx, older))
	require.NoError(t, c.Synced(ctx, newer))
	want := stateOf(c)
	require.NoError(t, c.Synced(ctx, older))
	require.Equal(t, want, stateOf(c))

	// A report that only moves the checkpoint does not move it back.
	require.NoError(t, c.Synced(ctx, catalog.SyncReport{VChannel: vch0, Checkpoint: older.Checkpoint}))
	require.Equal(t, want, stateOf(c))

	require.NoError(t, c.Synced(ctx, repeatReport(seg, 5, 12, 0, true, true)))
	info, _ := segmentOf(t, c, seg)
	require.EqualValues(t, 15, info.NumRows)
	require.Equal(t, catalog.SegmentFlushed, info.State)
	cp, _ := c.Checkpoint(vch0)
	require.Equal(t, catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: 13, TimeTick: 12}, DeltaSyncedOffset: 12}, cp)
}

// TestSyncedStartTwice: a report of a segment's start position only
// (SyncedOffset -1) is applied each time; it changes nothing the second.
func TestSyncedStartTwice(t *testing.T) {
	_, c, seg := withSegment(t, 10)
	ctx := t.Context()
	start := catalog.SyncReport{VChannel: vch0, Segments: []catalog.SegmentSync{{
		SegmentID: seg, CollectionID: 100, PartitionID: 1, StartPosition: &catalog.Position{Offset: 4, TimeTick: 4}, SyncedOffset: -1,
	}}}
	for range 2 {
		require.NoError(t, c.Synced(ctx, start))
		info, _ := segmentOf(t, c, seg)
		require.Equal(t, &catalog.Position{Offset: 4, TimeTick: 4}, info.StartPosition)
		require.Zero(t, info.NumRows)
	}
}

// TestGCRepeatedSyncFiles: the files of a sync written again after its
// report was applied are named by no record; garbage collection deletes
// them past the orphan retention and keeps the first attempt's.
func TestGCRepeatedSyncFiles(t *testing.T) {
	e := newGCEnv(t)
	const coll, part, seg = 1, 2, 10
	vch := "by-dev-rootcoord-dml_0_1v0"
	committed := e.sync(coll, part, seg, vch, false)
	off := e.offset
	ss, repeated := e.writeBatch(coll, part, seg, false)
	ss.SyncedOffset = off // the sync above, written again
	l0Seg, l0Log := e.id(), e.id()
	l0Key := storage.DeltaLogKey("files", coll, -1, l0Seg, l0Log)
	e.put(l0Key)
	repeated = append(repeated, l0Key)
	require.NoError(t, e.c.Synced(e.ctx, catalog.SyncReport{
		VChannel: vch, Segments: []catalog.SegmentSync{ss},
		L0: &catalog.SegmentInfo{
			ID: l0Seg, CollectionID: coll, PartitionID: -1, VChannel: vch, State: catalog.SegmentFlushed, Level: catalog.LevelL0,
			NumRows: 1, Deltalogs: []catalog.Binlog{{LogID: l0Log, Entries: 1}}, SyncedOffset: -1,
		},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch, Position: catalog.Position{Offset: off + 1}, DeltaSyncedOffset: -1},
	}))
	info, _ := segmentOf(t, e.c, seg)
	require.EqualValues(t, 10, info.NumRows)
	_, ok := segmentOf(t, e.c, l0Seg)
	require.False(t, ok, "the repeated report's L0 segment is not recorded")

	e.advance(e.cfg.OrphanRetention + time.Minute)
	e.gc()
	require.ElementsMatch(t, committed, e.keys())
	require.Equal(t, int64(len(repeated)), e.c.GCStats().OrphansDeleted)
}
