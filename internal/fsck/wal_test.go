package fsck

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/local"
)

// walDir is a data dir whose pchannel "by-dev-rootcoord-dml_0" holds 40
// insert records (timestamps 1000, 1010, …) of collection "c" (ID 7) and
// whose meta store has its checkpoint at cp and a growing segment synced
// through synced.
type walDir struct {
	dir, pchannel, vchannel string
	segPath                 string // the only segment file
	frames                  []int64
}

func newWALDir(t *testing.T, cp, synced int64) walDir {
	t.Helper()
	ctx := context.Background()
	w := walDir{dir: t.TempDir(), pchannel: wal.PChannelName("by-dev", 0)}
	w.vchannel = wal.VChannelName(w.pchannel, 7, 0)
	kv, err := embedded.Open(filepath.Join(w.dir, MetaFile), nil)
	require.NoError(t, err)
	put := func(key string, v any) {
		b, err := catalog.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, kv.Txn(ctx, metastore.Put(key, b)))
	}
	put(catalog.CollectionKey(7), &catalog.CollectionInfo{
		ID: 7, Name: "c", Shards: 1, VChannels: []string{w.vchannel},
		PChannels: []string{w.pchannel}, StartOffsets: []int64{0}, State: catalog.CollectionCreated, CreatedTS: 900,
	})
	put(catalog.CheckpointKey(w.vchannel), &catalog.ChannelCheckpoint{
		VChannel: w.vchannel,
		Position: catalog.Position{Offset: cp, TimeTick: uint64(1000 + 10*cp - 10)}, DeltaSyncedOffset: -1,
	})
	put(catalog.SegmentKey(7, 11), &catalog.SegmentInfo{
		ID: 11, CollectionID: 7, VChannel: w.vchannel, State: catalog.SegmentGrowing,
		Level: catalog.LevelL1, StartPosition: &catalog.Position{Offset: 1, TimeTick: 1010}, SyncedOffset: synced,
	})
	require.NoError(t, kv.Close())

	l, err := local.Open(local.Config{Dir: filepath.Join(w.dir, WALDir)}, nil)
	require.NoError(t, err)
	for i := range 40 {
		m := wal.Message{Type: wal.TypeInsert, VChannel: w.vchannel, TimeTick: uint64(1000 + 10*i), Payload: bytes.Repeat([]byte{byte(i)}, 16)}
		require.NoError(t, (<-l.AppendAsync(w.pchannel, [][]byte{m.Encode()})).Err)
	}
	require.NoError(t, l.Close())
	w.segPath = filepath.Join(w.dir, WALDir, w.pchannel, "00000000000000000000.wal")
	b, err := os.ReadFile(w.segPath)
	require.NoError(t, err)
	for pos := int64(0); pos < int64(len(b)); pos += 8 + int64(binary.LittleEndian.Uint32(b[pos:])) {
		w.frames = append(w.frames, pos)
	}
	require.Len(t, w.frames, 40)
	return w
}

// flip flips a bit in the data of record i.
func (w walDir) flip(t *testing.T, i int) {
	t.Helper()
	b, err := os.ReadFile(w.segPath)
	require.NoError(t, err)
	b[w.frames[i]+8+14] ^= 0x08
	require.NoError(t, os.WriteFile(w.segPath, b, 0o644))
}

func (w walDir) check(t *testing.T) *Report {
	t.Helper()
	return Check(context.Background(), w.dir, []Checker{WALChecker(0)})
}

// TestWALChecker: a flipped bit is damage that names the pchannel, the
// file, the byte and record offsets and the collection, and says whether
// the record is before or after the collection's checkpoint; a torn tail
// is a note (the server repairs it), not damage; a pchannel that ends
// before an offset the meta store references is damage.
func TestWALChecker(t *testing.T) {
	t.Run("Clean", func(t *testing.T) {
		w := newWALDir(t, 30, 25)
		r := w.check(t)
		require.True(t, r.Clean(), "%+v", r)
		require.Empty(t, r.Notes)
		require.Equal(t, 1, r.Stats.Files)
	})
	for _, tc := range []struct {
		name   string
		record int
		want   string
	}{
		{"BeforeCheckpoint", 20, `before its checkpoint 30: the damaged records are already in binlogs`},
		{"AfterCheckpoint", 35, `after its checkpoint 30: its rows and deletes from offset 35 on are not flushed yet`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWALDir(t, 30, 25)
			w.flip(t, tc.record)
			r := w.check(t)
			require.False(t, r.Clean())
			require.Len(t, r.Damage, 1)
			d := r.Damage[0]
			require.Equal(t, KindWAL, d.Kind)
			require.Equal(t, w.pchannel, d.PChannel)
			require.Equal(t, w.segPath, d.File)
			require.Equal(t, "c", d.Collection)
			require.Equal(t, int64(7), d.CollectionID)
			require.Contains(t, d.Problem, "corrupt record")
			require.Contains(t, d.Problem, "byte "+strconv.FormatInt(w.frames[tc.record], 10))
			require.Contains(t, d.Problem, "record offset "+strconv.Itoa(tc.record))
			require.Contains(t, d.Affects, tc.want)
			require.Contains(t, d.Affects, "strata repair --cut-wal "+w.pchannel)
			var b bytes.Buffer
			require.NoError(t, r.WriteText(&b))
			require.Contains(t, b.String(), "DAMAGED wal: collection=\"c\"(7) pchannel="+w.pchannel+" file="+w.segPath)
		})
	}
	t.Run("TornTailIsANote", func(t *testing.T) {
		w := newWALDir(t, 30, 25)
		fi, err := os.Stat(w.segPath)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(w.segPath, fi.Size()-5))
		r := w.check(t)
		require.True(t, r.Clean(), "%+v", r.Damage)
		require.Len(t, r.Notes, 1)
		require.Contains(t, r.Notes[0], "torn tail")
		require.Contains(t, r.Notes[0], w.segPath)
	})
	t.Run("EndBehindCheckpoint", func(t *testing.T) {
		// What a cut without padding leaves: the checkpoint (30) and the
		// synced offset (35) are past the end (20).
		w := newWALDir(t, 30, 35)
		w.flip(t, 20)
		_, err := local.Cut(filepath.Join(w.dir, WALDir), w.pchannel, 0, nil)
		require.NoError(t, err)
		r := w.check(t)
		require.Len(t, r.Damage, 1, "%+v", r)
		d := r.Damage[0]
		require.Contains(t, d.Problem, "ends at offset 20, before offset 36 that the synced offset of segment 11 requires")
		require.Contains(t, d.Affects, "silently lost")
	})
}

// TestCutWAL: the repair cuts the pchannel at its damage and pads it with
// time ticks until its end is past every offset the meta store references
// and the end before the cut, so that the next append gets an offset no
// checkpoint or synced offset covers; afterwards the check is clean. It
// refuses while the meta store is held.
func TestCutWAL(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		cp, synced int64
		damage     func(t *testing.T, w walDir)
		cutAt      int64
		end        int64 // after the padding
		affected   string
	}{
		{
			"BeforeCheckpoint", 30, 25, func(t *testing.T, w walDir) { w.flip(t, 20) }, 20, 40,
			"removed records before its checkpoint 30 are in binlogs; its records from offset 30 on were not flushed",
		},
		{
			"AfterCheckpoint", 30, 25, func(t *testing.T, w walDir) { w.flip(t, 35) }, 35, 40,
			"its checkpoint 30 is before the damage: its rows and deletes from offset 35 on were not flushed",
		},
		// The tail is gone (a torn last record), but the checkpoint and the
		// synced offset had passed it: the padding goes past them.
		{"ReferencesPastTheTail", 38, 37, func(t *testing.T, w walDir) {
			require.NoError(t, os.Truncate(w.segPath, w.frames[30]+11))
		}, 30, 39, "its checkpoint 38 is past every removed record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWALDir(t, tc.cp, tc.synced)
			tc.damage(t, w)
			require.False(t, w.check(t).Clean(), "the damage is found before the repair")

			held, err := embedded.Open(filepath.Join(w.dir, MetaFile), nil)
			require.NoError(t, err)
			_, err = CutWAL(ctx, w.dir, w.pchannel, 0, nil)
			require.ErrorIs(t, err, embedded.ErrLocked)
			require.NoError(t, held.Close())

			res, err := CutWAL(ctx, w.dir, w.pchannel, 0, nil)
			require.NoError(t, err)
			require.NotNil(t, res.Cut.Damage)
			require.Equal(t, tc.cutAt, res.Cut.End)
			require.Equal(t, tc.end, res.Pad.End)
			require.Equal(t, tc.end-tc.cutAt, res.Pad.Fillers)
			require.Greater(t, res.Pad.End, max(tc.cp, tc.synced), "the end is past every referenced offset")
			require.Equal(t, uint64(max(1000+10*tc.cp-10, 1000+10*(tc.cutAt-1))), res.Pad.TimeTick,
				"the fillers carry the largest of the checkpoint's timestamp and the last kept record's")
			require.Len(t, res.Affected, 1)
			require.Contains(t, res.Affected[0], tc.affected)
			text := strings.Join(res.Lines(), "\n")
			require.Contains(t, text, "cut pchannel "+w.pchannel+" at "+w.segPath)
			require.Contains(t, text, ".damaged")
			require.Contains(t, text, "filler time ticks")

			r := w.check(t)
			require.True(t, r.Clean(), "%+v", r)
			require.Empty(t, r.Notes)

			// The next append gets the padded end; every filler is a tick.
			l, err := local.Open(local.Config{Dir: filepath.Join(w.dir, WALDir)}, nil)
			require.NoError(t, err)
			defer func() { require.NoError(t, l.Close()) }()
			app := <-l.AppendAsync(w.pchannel, [][]byte{(&wal.Message{Type: wal.TypeTimeTick, TimeTick: 5000}).Encode()})
			require.NoError(t, app.Err)
			require.Equal(t, tc.end, app.Offset)
			sc, err := wal.OpenScanner(ctx, l, w.pchannel, tc.cutAt)
			require.NoError(t, err)
			defer sc.Close()
			for off := tc.cutAt; off < tc.end; off++ {
				e, err := sc.Next(ctx)
				require.NoError(t, err)
				require.Equal(t, off, e.Position.Offset)
				require.Equal(t, wal.TypeTimeTick, e.Message.Type)
				require.Empty(t, e.Message.VChannel)
			}

			again, err := CutWAL(ctx, w.dir, w.pchannel, 0, nil)
			require.NoError(t, err)
			require.Nil(t, again.Cut.Damage, "a second repair finds nothing to cut")
			require.Zero(t, again.Pad.Fillers)
		})
	}
	t.Run("ResealsSealedSegments", func(t *testing.T) {
		// Segment 12 was sealed (its Flush message at offset 36, say) but
		// not flushed when the WAL was cut at 35: the repair announces the
		// seal again after the fillers, so the data node flushes it.
		w := newWALDir(t, 30, 25)
		kv, err := embedded.Open(filepath.Join(w.dir, MetaFile), nil)
		require.NoError(t, err)
		b, err := catalog.Marshal(&catalog.SegmentInfo{
			ID: 12, CollectionID: 7, VChannel: w.vchannel, State: catalog.SegmentSealed,
			Level: catalog.LevelL1, StartPosition: &catalog.Position{Offset: 31, TimeTick: 1310}, SyncedOffset: -1, FlushTS: 1360,
		})
		require.NoError(t, err)
		require.NoError(t, kv.Txn(ctx, metastore.Put(catalog.SegmentKey(7, 12), b)))
		require.NoError(t, kv.Close())
		w.flip(t, 35)
		res, err := CutWAL(ctx, w.dir, w.pchannel, 0, nil)
		require.NoError(t, err)
		require.Equal(t, map[string][]int64{w.vchannel: {12}}, res.Resealed)
		require.Equal(t, int64(40), res.FlushOffset, "after the fillers")
		require.Contains(t, strings.Join(res.Lines(), "\n"), "appended a Flush message at offset 40 for the Sealed segments [12]")
		require.Equal(t, uint64(1360), res.Pad.TimeTick, "the fillers carry the seal's timestamp, the largest referenced")

		l, err := local.Open(local.Config{Dir: filepath.Join(w.dir, WALDir)}, nil)
		require.NoError(t, err)
		defer func() { require.NoError(t, l.Close()) }()
		end, err := l.End(ctx, w.pchannel)
		require.NoError(t, err)
		require.Equal(t, int64(41), end)
		sc, err := wal.OpenScanner(ctx, l, w.pchannel, 40)
		require.NoError(t, err)
		defer sc.Close()
		e, err := sc.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, wal.TypeFlush, e.Message.Type)
		require.Equal(t, w.vchannel, e.Message.VChannel)
		ids, err := wal.DecodeFlush(e.Message.Payload)
		require.NoError(t, err)
		require.Equal(t, []int64{12}, ids)
		require.True(t, w.check(t).Clean())
	})
	t.Run("NoSuchPChannel", func(t *testing.T) {
		w := newWALDir(t, 30, 25)
		_, err := CutWAL(ctx, w.dir, "by-dev-rootcoord-dml_9", 0, nil)
		require.ErrorContains(t, err, "no WAL for pchannel")
	})
}
