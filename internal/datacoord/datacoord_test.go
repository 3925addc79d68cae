package datacoord

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestSealPolicy(t *testing.T) {
	cfg := Defaults()
	cfg.MaxIdle = time.Minute
	cfg.MaxLife = time.Hour
	cfg.GrowingMemoryLimit = 1000
	fresh := func(id, rows, rowSize int64) growingStat {
		return growingStat{ID: id, Rows: rows, MaxRows: 100, RowSize: rowSize, CreatedAt: t0, LastWrite: t0}
	}
	for _, tc := range []struct {
		name string
		segs []growingStat
		now  time.Time
		want []int64
	}{
		{"nothing to seal", []growingStat{fresh(1, 10, 1), fresh(2, 99, 1)}, t0.Add(time.Second), nil},
		{"size: full", []growingStat{fresh(1, 100, 1), fresh(2, 99, 1)}, t0, []int64{1}},
		{"size: over full", []growingStat{fresh(1, 150, 1)}, t0, []int64{1}},
		{"size: turned rows away", []growingStat{{ID: 1, Rows: 97, MaxRows: 100, RowSize: 1, Full: true, CreatedAt: t0, LastWrite: t0}}, t0, []int64{1}},
		{
			"idle",
			[]growingStat{fresh(1, 1, 1), {ID: 2, Rows: 1, MaxRows: 100, RowSize: 1, CreatedAt: t0, LastWrite: t0.Add(30 * time.Second)}},
			t0.Add(time.Minute),
			[]int64{1},
		},
		{"idle but empty", []growingStat{fresh(1, 0, 1)}, t0.Add(2 * time.Hour), nil},
		{
			"age",
			[]growingStat{{ID: 1, Rows: 1, MaxRows: 100, RowSize: 1, CreatedAt: t0, LastWrite: t0.Add(time.Hour - time.Second)}},
			t0.Add(time.Hour),
			[]int64{1},
		},
		{
			"memory pressure: largest first until under the limit",
			// 10*50=500, 11*50=550, 2*50=100: total 1150 > 1000; sealing 2 (550) is enough.
			[]growingStat{fresh(1, 10, 50), fresh(2, 11, 50), fresh(3, 2, 50)},
			t0,
			[]int64{2},
		},
		{
			"memory pressure: several",
			// 600+500+300 = 1400; seal 600 → 800 ≤ 1000.
			[]growingStat{fresh(1, 6, 100), fresh(2, 5, 100), fresh(3, 3, 100)},
			t0,
			[]int64{1},
		},
		{
			"memory pressure: seal two",
			// 900+900+100 = 1900; seal 900 → 1000 ≤ 1000.
			[]growingStat{fresh(1, 9, 100), fresh(2, 9, 100), fresh(3, 1, 100)},
			t0,
			[]int64{1},
		},
		{"memory at the limit is fine", []growingStat{fresh(1, 10, 100)}, t0, nil},
		{
			"memory counts only segments not sealed by another rule",
			// 1 is full (sealed), 2+3 = 400+500 = 900 ≤ 1000.
			[]growingStat{fresh(1, 100, 100), fresh(2, 4, 100), fresh(3, 5, 100)},
			t0,
			[]int64{1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, sealPolicy(cfg, tc.segs, tc.now))
		})
	}
}

func TestTransitions(t *testing.T) {
	g, s, f, d := catalog.SegmentGrowing, catalog.SegmentSealed, catalog.SegmentFlushed, catalog.SegmentDropped
	allowed := map[[2]catalog.SegmentState]bool{
		{g, s}: true, {g, f}: true, {g, d}: true,
		{s, f}: true, {s, d}: true,
		{f, d}: true,
	}
	for _, from := range []catalog.SegmentState{g, s, f, d} {
		for _, to := range []catalog.SegmentState{g, s, f, d} {
			t.Run(from.String()+"→"+to.String(), func(t *testing.T) {
				require.Equal(t, allowed[[2]catalog.SegmentState{from, to}], canTransition(from, to))
			})
		}
	}
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, Defaults().Validate())
	for _, tc := range []struct {
		name string
		mod  func(*Config)
	}{
		{"max size", func(c *Config) { c.SegmentMaxSize = 0 }},
		{"proportion zero", func(c *Config) { c.SealProportion = 0 }},
		{"proportion above one", func(c *Config) { c.SealProportion = 1.5 }},
		{"idle", func(c *Config) { c.MaxIdle = 0 }},
		{"life", func(c *Config) { c.MaxLife = -1 }},
		{"interval", func(c *Config) { c.CheckInterval = 0 }},
		{"memory", func(c *Config) { c.GrowingMemoryLimit = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.mod(&c)
			require.Error(t, c.Validate())
		})
	}
}

// env is a coordinator over a real embedded meta store and a real WAL.
type env struct {
	dir   string
	kv    *embedded.Store
	log   *wallocal.Log
	ids   *tso.Allocator
	w     *wal.Writer
	cfg   Config
	clock time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{dir: t.TempDir(), clock: t0}
	e.cfg = Defaults()
	// 1000 bytes × 0.1 = 100 bytes per segment: 10 rows of 10 bytes.
	e.cfg.SegmentMaxSize = 1000
	e.cfg.SealProportion = 0.1
	e.open(t)
	return e
}

func (e *env) open(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	kv, err := embedded.Open(filepath.Join(e.dir, "meta.db"), nil)
	require.NoError(t, err)
	l, err := wallocal.Open(wallocal.Config{Dir: filepath.Join(e.dir, "wal")}, nil)
	require.NoError(t, err)
	e.kv, e.log = kv, l
	t.Cleanup(func() { e.close(t) })
	e.ids, err = tso.New(ctx, kv, tso.Config{Key: "tso/id"}, nil)
	require.NoError(t, err)
	clock, err := tso.New(ctx, kv, tso.Config{Key: "tso/ts"}, nil)
	require.NoError(t, err)
	e.w = wal.NewWriter(l, clock, wal.WriterConfig{}, nil)
}

func (e *env) close(t *testing.T) {
	t.Helper()
	if e.kv == nil {
		return
	}
	require.NoError(t, e.log.Close())
	require.NoError(t, e.kv.Close())
	e.kv = nil
}

func (e *env) coord(t *testing.T) *Coordinator {
	t.Helper()
	c, err := New(context.Background(), e.cfg, e.kv, e.ids, e.w, e.log, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	c.now = func() time.Time { return e.clock }
	return c
}

var (
	pch0 = wal.PChannelName("by-dev", 0)
	pch1 = wal.PChannelName("by-dev", 1)
	vch0 = wal.VChannelName(pch0, 100, 0)
	vch1 = wal.VChannelName(pch1, 100, 1)
)

// messages returns the messages on a pchannel.
func (e *env) messages(t *testing.T, pchannel string) []wal.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	end, err := e.log.End(ctx, pchannel)
	require.NoError(t, err)
	s, err := wal.OpenScanner(ctx, e.log, pchannel, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	var out []wal.Entry
	for range end {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

func TestAssignSegment(t *testing.T) {
	e := newEnv(t)
	c := e.coord(t)
	ctx := context.Background()
	assign := func(part int64, vch string, rows int64) int64 {
		t.Helper()
		id, err := c.AssignSegment(ctx, 100, part, vch, rows, 10)
		require.NoError(t, err)
		return id
	}
	a := assign(1, vch0, 4)
	require.Equal(t, a, assign(1, vch0, 4), "a segment with room is reused")
	info, ok := segmentOf(t, c, a)
	require.True(t, ok)
	require.EqualValues(t, 10, info.MaxRows, "max rows = maxSize × sealProportion / rowSize")
	require.Equal(t, catalog.SegmentGrowing, info.State)
	require.Equal(t, catalog.LevelL1, info.Level)
	require.EqualValues(t, -1, info.SyncedOffset)

	b := assign(1, vch0, 4) // 8 + 4 > 10: a new segment
	require.NotEqual(t, a, b)
	require.Equal(t, a, assign(1, vch0, 2), "the lowest ID with room wins")
	require.NotEqual(t, a, assign(2, vch0, 1), "another partition gets its own segment")
	require.NotEqual(t, a, assign(1, vch1, 1), "another vchannel gets its own segment")
	big := assign(3, vch0, 50)
	info, _ = segmentOf(t, c, big)
	require.EqualValues(t, 10, info.MaxRows, "an empty segment takes a batch larger than its size")
	require.NotEqual(t, big, assign(3, vch0, 1), "but is then full")
	require.EqualValues(t, 4+4+4+2+1+1+50+1, c.rowCount(100, nil), "assigned rows count before any sync")
	require.EqualValues(t, 51, c.rowCount(100, []int64{3}))

	// After a flush, the sealed segments get no more rows.
	sealed, _, err := c.Flush(ctx, 100, []string{vch0})
	require.NoError(t, err)
	require.NotContains(t, sealed, func() int64 { id := assign(1, vch1, 1); return id }(), "vch1 was not flushed")
	n := assign(1, vch0, 1)
	require.NotContains(t, sealed, n)
	require.Contains(t, sealed, a)
	info, _ = segmentOf(t, c, a)
	require.Equal(t, catalog.SegmentSealed, info.State)

	// Segment records survive a restart.
	c2 := e.coord(t)
	got, ok := segmentOf(t, c2, a)
	require.True(t, ok)
	require.Equal(t, catalog.SegmentSealed, got.State)
	require.Len(t, c2.Segments(100), len(c.Segments(100)))
	after, err := c2.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	require.NotEqual(t, n, after, "a segment growing before the restart takes no new rows after it")
	again, err := c2.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	require.Equal(t, after, again, "segments created after the restart are reused")
	info, _ = segmentOf(t, c2, n)
	require.Equal(t, catalog.SegmentGrowing, info.State, "the old one stays growing until a flush or the seal policy")
}

func TestFlushAndFlushState(t *testing.T) {
	e := newEnv(t)
	c := e.coord(t)
	ctx := context.Background()
	s0, err := c.AssignSegment(ctx, 100, 1, vch0, 3, 10)
	require.NoError(t, err)
	s1, err := c.AssignSegment(ctx, 100, 1, vch1, 2, 10)
	require.NoError(t, err)

	sealed, flushTS, err := c.Flush(ctx, 100, []string{vch0, vch1})
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{s0, s1}, sealed)
	require.NotZero(t, flushTS)
	for _, tc := range []struct {
		pch, vch string
		seg      int64
	}{{pch0, vch0, s0}, {pch1, vch1, s1}} {
		msgs := e.messages(t, tc.pch)
		require.Len(t, msgs, 1)
		m := msgs[0].Message
		require.Equal(t, wal.TypeFlush, m.Type)
		require.Equal(t, tc.vch, m.VChannel)
		require.Equal(t, flushTS, m.TimeTick)
		ids, err := wal.DecodeFlush(m.Payload)
		require.NoError(t, err)
		require.Equal(t, []int64{tc.seg}, ids)
		info, _ := segmentOf(t, c, tc.seg)
		require.Equal(t, catalog.SegmentSealed, info.State)
		require.Equal(t, flushTS, info.FlushTS)
	}
	vchs := []string{vch0, vch1}
	require.False(t, c.flushState(sealed, vchs, flushTS))

	// A flush with nothing growing still announces itself on every vchannel.
	again, ts2, err := c.Flush(ctx, 100, []string{vch0})
	require.NoError(t, err)
	require.Empty(t, again)
	msgs := e.messages(t, pch0)
	require.Len(t, msgs, 2)
	ids, err := wal.DecodeFlush(msgs[1].Message.Payload)
	require.NoError(t, err)
	require.Empty(t, ids)
	require.Greater(t, ts2, flushTS)

	sync := func(vch string, seg int64, rows int64, cpTS uint64) {
		t.Helper()
		require.NoError(t, c.Synced(ctx, catalog.SyncReport{
			VChannel: vch,
			Segments: []catalog.SegmentSync{{
				SegmentID: seg, CollectionID: 100, PartitionID: 1, Rows: rows, Flushed: true,
				Binlogs: map[int64][]catalog.Binlog{0: {{LogID: seg + 1, Entries: rows}}}, SyncedOffset: 5,
			}},
			Checkpoint: catalog.ChannelCheckpoint{VChannel: vch, Position: catalog.Position{Offset: 1, TimeTick: cpTS}},
		}))
	}
	sync(vch0, s0, 3, flushTS)
	require.False(t, c.flushState(sealed, vchs, flushTS), "vch1 is not done")
	require.True(t, c.flushState([]int64{s0}, []string{vch0}, flushTS))
	require.False(t, c.flushState([]int64{s0}, []string{vch0}, flushTS+1), "checkpoint below the flush ts")
	sync(vch1, s1, 2, flushTS)
	require.True(t, c.flushState(sealed, vchs, flushTS))
	require.True(t, c.flushState([]int64{12345}, nil, 0), "unknown segments count as flushed")
	require.EqualValues(t, 5, c.rowCount(100, nil))

	// A segment cannot be flushed twice: a flush past the one applied is
	// refused; the same one again (its answer was lost) changes nothing.
	err = c.Synced(ctx, catalog.SyncReport{
		VChannel:   vch0,
		Segments:   []catalog.SegmentSync{{SegmentID: s0, CollectionID: 100, PartitionID: 1, Flushed: true, SyncedOffset: 6}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0},
	})
	require.ErrorContains(t, err, "Flushed")
	sync(vch0, s0, 3, flushTS)
	require.EqualValues(t, 5, c.rowCount(100, nil), "the repeated flush added nothing")
}

func TestSynced(t *testing.T) {
	e := newEnv(t)
	c := e.coord(t)
	ctx := context.Background()
	seg, err := c.AssignSegment(ctx, 100, 1, vch0, 10, 1)
	require.NoError(t, err)
	e.clock = t0.Add(time.Minute)
	report := func(rows int64, logID int64, off int64, flushed bool, l0 *catalog.SegmentInfo) catalog.SyncReport {
		return catalog.SyncReport{
			VChannel: vch0,
			Segments: []catalog.SegmentSync{{
				SegmentID: seg, CollectionID: 100, PartitionID: 1, Rows: rows,
				Binlogs:       map[int64][]catalog.Binlog{0: {{LogID: logID, Entries: rows}}, 100: {{LogID: logID + 1, Entries: rows}}},
				Statslogs:     map[int64][]catalog.Binlog{100: {{LogID: logID + 2}}},
				StartPosition: &catalog.Position{Offset: off, TimeTick: 7}, SyncedOffset: off, Flushed: flushed,
			}},
			L0:         l0,
			Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: off + 1, TimeTick: uint64(off)}, DeltaSyncedOffset: off},
		}
	}
	require.NoError(t, c.Synced(ctx, report(4, 10, 3, false, nil)))
	info, _ := segmentOf(t, c, seg)
	require.Equal(t, catalog.SegmentGrowing, info.State)
	require.EqualValues(t, 4, info.NumRows)
	require.Equal(t, &catalog.Position{Offset: 3, TimeTick: 7}, info.StartPosition)
	require.EqualValues(t, 3, info.SyncedOffset)
	require.Equal(t, t0.Add(time.Minute).UnixMilli(), info.LastSyncAt)
	require.EqualValues(t, 10, c.rowCount(100, nil), "assigned rows count until synced")

	l0 := &catalog.SegmentInfo{
		ID: 999, CollectionID: 100, PartitionID: 1, VChannel: vch0, State: catalog.SegmentFlushed,
		Level: catalog.LevelL0, Deltalogs: []catalog.Binlog{{LogID: 50, Entries: 2}},
	}
	require.NoError(t, c.Synced(ctx, report(6, 20, 8, true, l0)))
	info, _ = segmentOf(t, c, seg)
	require.Equal(t, catalog.SegmentFlushed, info.State)
	require.EqualValues(t, 10, info.NumRows)
	require.Equal(t, []catalog.Binlog{{LogID: 10, Entries: 4}, {LogID: 20, Entries: 6}}, info.Binlogs[0], "binlogs accumulate")
	require.Len(t, info.Statslogs[100], 2)
	require.EqualValues(t, 3, info.StartPosition.Offset, "the first start position stays")
	require.EqualValues(t, 8, info.SyncedOffset)
	got, ok := segmentOf(t, c, 999)
	require.True(t, ok)
	require.Equal(t, catalog.LevelL0, got.Level)
	require.EqualValues(t, 10, c.rowCount(100, nil), "L0 segments hold no rows")
	cp, ok := c.Checkpoint(vch0)
	require.True(t, ok)
	require.EqualValues(t, 9, cp.Position.Offset)

	// A flushed segment is not assigned rows.
	next, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 1)
	require.NoError(t, err)
	require.NotEqual(t, seg, next)

	// A sync of a segment the coordinator does not know (one garbage
	// collection removed) is not recorded; its checkpoint is.
	require.NoError(t, c.Synced(ctx, catalog.SyncReport{
		VChannel:   vch0,
		Segments:   []catalog.SegmentSync{{SegmentID: 4242, CollectionID: 100, PartitionID: 1, Rows: 1, SyncedOffset: 9}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: 10, TimeTick: 10}},
	}))
	_, ok = segmentOf(t, c, 4242)
	require.False(t, ok)

	// Everything is in the meta store: a new coordinator sees the same.
	c2 := e.coord(t)
	before, after := c.Segments(100), c2.Segments(100)
	require.Len(t, after, len(before))
	for i := range before {
		b, a := before[i], after[i]
		require.Equal(t, []any{b.ID, b.State, b.Level, b.NumRows, b.SyncedOffset, len(b.Binlogs), len(b.Statslogs), b.Deltalogs},
			[]any{a.ID, a.State, a.Level, a.NumRows, a.SyncedOffset, len(a.Binlogs), len(a.Statslogs), a.Deltalogs})
	}
	cp2, ok := c2.Checkpoint(vch0)
	require.True(t, ok)
	require.EqualValues(t, 10, cp2.Position.Offset)

	// Dropped collections drop segments and checkpoints.
	require.NoError(t, c2.DropCollection(ctx, 100, []string{vch0}))
	require.Empty(t, c2.Segments(100))
	_, ok = c2.Checkpoint(vch0)
	require.False(t, ok)
	require.Empty(t, e.coord(t).Segments(100))
}

func TestRecoverySeekOffset(t *testing.T) {
	e := newEnv(t)
	c := e.coord(t)
	ctx := context.Background()
	ri := recoveryOf(t, c, vch0)
	require.EqualValues(t, 0, ri.SeekOffset, "no checkpoint: from the start")
	require.EqualValues(t, -1, ri.Checkpoint.DeltaSyncedOffset)
	require.Empty(t, ri.Segments)

	growing, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 1)
	require.NoError(t, err)
	flushed, err := c.AssignSegment(ctx, 100, 2, vch0, 1, 1)
	require.NoError(t, err)
	// The flushed segment started at 2; the growing one at 5; checkpoint at 20.
	require.NoError(t, c.Synced(ctx, catalog.SyncReport{
		VChannel: vch0,
		Segments: []catalog.SegmentSync{
			{SegmentID: flushed, CollectionID: 100, PartitionID: 1, Rows: 1, StartPosition: &catalog.Position{Offset: 2}, SyncedOffset: 10, Flushed: true},
			{SegmentID: growing, CollectionID: 100, PartitionID: 1, Rows: 1, StartPosition: &catalog.Position{Offset: 5}, SyncedOffset: 12},
		},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: 20, TimeTick: 100}},
	}))
	ri = recoveryOf(t, c, vch0)
	require.EqualValues(t, 5, ri.SeekOffset, "the unflushed segment's start, not the flushed one's")
	require.EqualValues(t, 20, ri.Checkpoint.Position.Offset)
	require.Len(t, ri.Segments, 2)
	require.Less(t, ri.Segments[0].ID, ri.Segments[1].ID)

	// Once the growing segment is flushed the checkpoint is the seek offset.
	require.NoError(t, c.Synced(ctx, catalog.SyncReport{
		VChannel:   vch0,
		Segments:   []catalog.SegmentSync{{SegmentID: growing, CollectionID: 100, PartitionID: 1, SyncedOffset: 21, Flushed: true}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: 22, TimeTick: 110}},
	}))
	require.EqualValues(t, 22, recoveryOf(t, c, vch0).SeekOffset)
	require.Empty(t, recoveryOf(t, c, vch1).Segments, "other vchannels are separate")
}

func TestSealByPolicy(t *testing.T) {
	e := newEnv(t)
	e.cfg.MaxIdle = time.Minute
	c := e.coord(t)
	ctx := context.Background()
	idle, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	e.clock = t0.Add(30 * time.Second)
	busy, err := c.AssignSegment(ctx, 100, 2, vch0, 1, 10)
	require.NoError(t, err)
	full, err := c.AssignSegment(ctx, 100, 1, vch1, 10, 10)
	require.NoError(t, err)
	e.clock = t0.Add(time.Minute)
	require.NoError(t, c.sealByPolicy(ctx))
	for id, want := range map[int64]catalog.SegmentState{idle: catalog.SegmentSealed, busy: catalog.SegmentGrowing, full: catalog.SegmentSealed} {
		info, _ := segmentOf(t, c, id)
		require.Equal(t, want, info.State, "segment %d", id)
	}
	for pch, want := range map[string]int64{pch0: idle, pch1: full} {
		msgs := e.messages(t, pch)
		require.Len(t, msgs, 1)
		ids, err := wal.DecodeFlush(msgs[0].Message.Payload)
		require.NoError(t, err)
		require.Equal(t, []int64{want}, ids)
	}
	// Nothing more to seal: no more messages.
	require.NoError(t, c.sealByPolicy(ctx))
	require.Len(t, e.messages(t, pch0), 1)
}

// TestSealWhenFull: batches that do not divide MaxRows leave a segment
// short of it; once it turns a batch away it is sealed by size, not after
// MaxIdle. A batch too large for any segment does not mark it full.
func TestSealWhenFull(t *testing.T) {
	e := newEnv(t) // MaxRows 10 at 10 bytes a row
	c := e.coord(t)
	ctx := context.Background()
	assign := func(vch string, rows int64) int64 {
		t.Helper()
		id, err := c.AssignSegment(ctx, 100, 1, vch, rows, 10)
		require.NoError(t, err)
		return id
	}
	first := assign(vch0, 4)
	require.Equal(t, first, assign(vch0, 4))
	require.NoError(t, c.sealByPolicy(ctx))
	info, _ := segmentOf(t, c, first)
	require.Equal(t, catalog.SegmentGrowing, info.State, "8 of 10 rows, room left")
	second := assign(vch0, 4) // 8+4 > 10: a new segment
	require.NotEqual(t, first, second)

	small := assign(vch1, 1)
	huge := assign(vch1, 50) // larger than any segment: its own
	require.NotEqual(t, small, huge)

	require.NoError(t, c.sealByPolicy(ctx))
	for id, want := range map[int64]catalog.SegmentState{
		first: catalog.SegmentSealed, second: catalog.SegmentGrowing,
		small: catalog.SegmentGrowing, huge: catalog.SegmentSealed,
	} {
		info, _ := segmentOf(t, c, id)
		require.Equal(t, want, info.State, "segment %d", id)
	}
	require.Equal(t, small, assign(vch1, 1), "a segment that only a too-large batch passed by still takes rows")
}

// TestMemoryPressureAfterRestart checks that a restarted coordinator
// estimates the bytes of growing segments as before the restart.
func TestMemoryPressureAfterRestart(t *testing.T) {
	e := newEnv(t)
	e.cfg.GrowingMemoryLimit = 100 // bytes; the segment below holds 5 rows × 10 bytes
	c := e.coord(t)
	ctx := context.Background()
	seg, err := c.AssignSegment(ctx, 100, 1, vch0, 5, 10)
	require.NoError(t, err)
	require.NoError(t, c.Synced(ctx, catalog.SyncReport{
		VChannel:   vch0,
		Segments:   []catalog.SegmentSync{{SegmentID: seg, CollectionID: 100, PartitionID: 1, Rows: 5, SyncedOffset: 0}},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: 1, TimeTick: 1}},
	}))
	require.NoError(t, c.sealByPolicy(ctx))
	info, _ := segmentOf(t, c, seg)
	require.Equal(t, catalog.SegmentGrowing, info.State, "50 bytes are under the limit")

	c2 := e.coord(t)
	require.NoError(t, c2.sealByPolicy(ctx))
	info, _ = segmentOf(t, c2, seg)
	require.Equal(t, catalog.SegmentGrowing, info.State, "still 50 bytes after a restart")
}

// failingKV is the real meta store with a switch that makes Txn fail, as a
// crash between the WAL append and the meta-store write would leave it.
type failingKV struct {
	*embedded.Store
	fail bool
}

func (f *failingKV) Txn(ctx context.Context, ops ...metastore.Op) error {
	if f.fail {
		return errors.New("crashed")
	}
	return f.Store.Txn(ctx, ops...)
}

// TestNoAssignmentAfterUnrecordedFlush: a crash after a Flush message is in
// the WAL but before the segment is recorded Sealed leaves it Growing in the
// meta store. Rows assigned to it after the restart would follow its Flush
// message, and the data node drops inserts for segments it flushed.
func TestNoAssignmentAfterUnrecordedFlush(t *testing.T) {
	e := newEnv(t)
	kv := &failingKV{Store: e.kv}
	newCoord := func() *Coordinator {
		c, err := New(context.Background(), e.cfg, kv, e.ids, e.w, e.log, nil, nil, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		return c
	}
	ctx := context.Background()
	c := newCoord()
	seg, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	kv.fail = true
	_, _, err = c.Flush(ctx, 100, []string{vch0})
	require.ErrorContains(t, err, "crashed")
	msgs := e.messages(t, pch0)
	require.Len(t, msgs, 1)
	ids, err := wal.DecodeFlush(msgs[0].Message.Payload)
	require.NoError(t, err)
	require.Equal(t, []int64{seg}, ids, "the Flush message is durable")

	kv.fail = false
	c2 := newCoord()
	info, ok := segmentOf(t, c2, seg)
	require.True(t, ok)
	require.Equal(t, catalog.SegmentGrowing, info.State, "the meta store missed the seal")
	next, err := c2.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	require.NotEqual(t, seg, next, "a segment from before the restart takes no new rows")

	// It is still sealed by the next flush, and flushed by the data node's report.
	sealed, _, err := c2.Flush(ctx, 100, []string{vch0})
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{seg, next}, sealed)
}

// pausingKV is the real meta store with a hook run after each committed
// transaction: a test stops one writer right after its commit to let
// another run in between, as a busy machine's scheduler can.
type pausingKV struct {
	*embedded.Store
	after func(ops []metastore.Op)
}

func (p *pausingKV) Txn(ctx context.Context, ops ...metastore.Op) error {
	if err := p.Store.Txn(ctx, ops...); err != nil {
		return err
	}
	if p.after != nil {
		p.after(ops)
	}
	return nil
}

// TestSyncedRacingSeal: a data node's size-triggered sync of a growing
// segment commits its files and the channel checkpoint while the segment is
// being sealed. The seal must not persist the record as it was before the
// sync (the checkpoint already covers the synced rows: a kill would lose
// them), and the sync must not turn the Sealed segment back into Growing.
func TestSyncedRacingSeal(t *testing.T) {
	e := newEnv(t)
	kv := &pausingKV{Store: e.kv}
	c, err := New(context.Background(), e.cfg, kv, e.ids, e.w, e.log, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx := context.Background()
	seg, err := c.AssignSegment(ctx, 100, 1, vch0, 5, 10)
	require.NoError(t, err)
	batch := func(logID, off int64) catalog.SyncReport {
		return catalog.SyncReport{
			VChannel: vch0,
			Segments: []catalog.SegmentSync{{
				SegmentID: seg, CollectionID: 100, PartitionID: 1, Rows: 2,
				Binlogs:       map[int64][]catalog.Binlog{100: {{LogID: logID, Entries: 2}}},
				StartPosition: &catalog.Position{Offset: off}, SyncedOffset: off,
			}},
			Checkpoint: catalog.ChannelCheckpoint{VChannel: vch0, Position: catalog.Position{Offset: off + 1}, DeltaSyncedOffset: -1},
		}
	}
	require.NoError(t, c.Synced(ctx, batch(10, 0)))

	// The second sync stops right after its commit ...
	committed, resume := make(chan struct{}), make(chan struct{})
	kv.after = func(ops []metastore.Op) {
		for _, op := range ops {
			if op.Key() == catalog.CheckpointKey(vch0) {
				kv.after = nil
				close(committed)
				<-resume
				return
			}
		}
	}
	syncDone := make(chan error, 1)
	go func() { syncDone <- c.Synced(ctx, batch(20, 1)) }()
	<-committed
	// ... while the segment is sealed: its Flush message is appended, and the
	// seal gets every chance to record the segment before the sync finishes.
	sealDone := make(chan error, 1)
	go func() {
		_, _, err := c.Flush(ctx, 100, []string{vch0})
		sealDone <- err
	}()
	for {
		end, err := e.log.End(ctx, pch0)
		require.NoError(t, err)
		if end > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-sealDone: // a seal that does not wait for the sync
		sealDone <- err
	case <-time.After(200 * time.Millisecond):
	}
	close(resume)
	require.NoError(t, <-syncDone)
	require.NoError(t, <-sealDone)

	check := func(c *Coordinator, what string) {
		info, ok := segmentOf(t, c, seg)
		require.True(t, ok)
		require.Equal(t, catalog.SegmentSealed, info.State, what)
		require.Equal(t, []catalog.Binlog{{LogID: 10, Entries: 2}, {LogID: 20, Entries: 2}}, info.Binlogs[100], what)
		require.EqualValues(t, 1, info.SyncedOffset, what)
		require.EqualValues(t, 4, info.NumRows, what)
	}
	check(c, "in memory")
	check(e.coord(t), "in the meta store")
}

// segmentOf is c.Segment, whose error is always nil in process.
func segmentOf(t *testing.T, c *Coordinator, id int64) (catalog.SegmentInfo, bool) {
	t.Helper()
	info, ok, err := c.Segment(context.Background(), id)
	require.NoError(t, err)
	return info, ok
}

// recoveryOf is c.Recovery, whose error is always nil in process.
func recoveryOf(t *testing.T, c *Coordinator, vchannel string) catalog.RecoveryInfo {
	t.Helper()
	ri, err := c.Recovery(context.Background(), vchannel)
	require.NoError(t, err)
	return ri
}

// indexesOf is c.Indexes, whose error is always nil in process.
func indexesOf(t *testing.T, c *Coordinator, collectionID int64) []catalog.IndexInfo {
	t.Helper()
	out, err := c.Indexes(context.Background(), collectionID)
	require.NoError(t, err)
	return out
}
