package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

// padWAL writes 12 message records (timestamps 100, 110, …) to "ch" in
// 100-byte segments and returns the dir and the segment first offsets.
func padWAL(t *testing.T) (string, []int64) {
	t.Helper()
	recs := make([][]byte, 12)
	for i := range recs {
		m := wal.Message{Type: wal.TypeInsert, VChannel: "ch_1v0", TimeTick: uint64(100 + 10*i), Payload: payload(i, 8)}
		recs[i] = m.Encode()
	}
	cfg := Config{Dir: t.TempDir(), SegmentSize: 100}
	writeRecords(t, cfg, recs)
	firsts, err := listSegments(filepath.Join(cfg.Dir, "ch"))
	require.NoError(t, err)
	require.Greater(t, len(firsts), 2)
	return cfg.Dir, firsts
}

// TestPad: after a cut, Pad moves the end past the offsets given (what the
// meta store references) with time ticks that carry the larger of the
// given timestamp and the last kept record's, so that the next append gets
// an offset no consumer has passed; it is idempotent, refuses a damaged
// pchannel and never touches another one.
func TestPad(t *testing.T) {
	src, firsts := padWAL(t)
	for _, tc := range []struct {
		name   string
		target int64
		minTS  uint64
		wantTS uint64 // the last kept record (offset firsts[1]+1) has ts 100+10*(firsts[1]+1)
	}{
		{"PastReferences", 40, 0, uint64(100 + 10*(firsts[1]+1))},
		{"MetaTimestampLarger", 15, 5000, 5000},
		{"BehindEnd", firsts[1], 0, uint64(100 + 10*(firsts[1]+1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			// A flipped bit in the third record of the second segment.
			b, err := os.ReadFile(filepath.Join(dir, "ch", segmentName(firsts[1])))
			require.NoError(t, err)
			frame := int64(len(b)) / (firsts[2] - firsts[1]) // the frames have equal sizes
			flipByte(2*frame+headerSize+2)(t, filepath.Join(dir, "ch", segmentName(firsts[1])))
			cut, err := Cut(dir, "ch", 0, testLogger(t))
			require.NoError(t, err)
			require.NotNil(t, cut.Damage)
			require.Equal(t, firsts[1]+2, cut.End)

			res, err := Pad(dir, "ch", tc.target, tc.minTS, 0, testLogger(t))
			require.NoError(t, err)
			wantEnd := max(cut.End, tc.target)
			require.Equal(t, cut.End, res.From)
			require.Equal(t, wantEnd, res.End)
			require.Equal(t, wantEnd-cut.End, res.Fillers)
			require.Equal(t, tc.wantTS, res.TimeTick)
			end, err := End(dir, "ch", 0)
			require.NoError(t, err)
			require.Equal(t, wantEnd, end)

			ds, err := Verify(dir, 0)
			require.NoError(t, err)
			require.Empty(t, ds, "the padded WAL is clean")
			again, err := Pad(dir, "ch", tc.target, tc.minTS, 0, testLogger(t))
			require.NoError(t, err)
			require.Zero(t, again.Fillers, "a second pad changes nothing")

			l, err := Open(Config{Dir: dir, SegmentSize: 100}, testLogger(t))
			require.NoError(t, err)
			defer func() { require.NoError(t, l.Close()) }()
			require.Empty(t, l.Problems())
			app := <-l.AppendAsync("ch", [][]byte{(&wal.Message{Type: wal.TypeTimeTick, TimeTick: 9999}).Encode()})
			require.NoError(t, app.Err)
			require.Equal(t, wantEnd, app.Offset, "the next append gets the padded end")
			got, err := readAll(t, l, 0)
			require.NoError(t, err)
			require.Len(t, got, int(wantEnd+1))
			var prev uint64
			for i, r := range got {
				msgs, err := wal.DecodeRecord(r.Data)
				require.NoError(t, err, "record %d decodes", i)
				require.Len(t, msgs, 1)
				require.GreaterOrEqual(t, msgs[0].TimeTick, prev, "time never moves backwards (record %d)", i)
				prev = msgs[0].TimeTick
				if int64(i) >= cut.End && int64(i) < wantEnd {
					require.Equal(t, wal.TypeTimeTick, msgs[0].Type, "filler %d", i)
					require.Empty(t, msgs[0].VChannel, "a filler is pchannel-wide")
					require.Equal(t, tc.wantTS, msgs[0].TimeTick)
				}
			}
		})
	}
	t.Run("RefusesDamaged", func(t *testing.T) {
		dir := copyDir(t, src)
		flipByte(headerSize+2)(t, filepath.Join(dir, "ch", segmentName(firsts[0])))
		before := snapshot(t, dir)
		_, err := Pad(dir, "ch", 100, 0, 0, testLogger(t))
		require.ErrorIs(t, err, ErrDamaged)
		require.Equal(t, before, snapshot(t, dir))
	})
	t.Run("EmptyPChannel", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, "ch"), 0o755))
		res, err := Pad(dir, "ch", 3, 7, 0, testLogger(t))
		require.NoError(t, err)
		require.Equal(t, int64(3), res.End)
		l, err := Open(Config{Dir: dir}, testLogger(t))
		require.NoError(t, err)
		defer func() { require.NoError(t, l.Close()) }()
		end, err := l.End(context.Background(), "ch")
		require.NoError(t, err)
		require.Equal(t, int64(3), end)
	})
}

// TestPadWriterRollsSegments: fillers start a new segment file (named
// after its first offset) once the current one reaches the segment size,
// and the result reads back densely.
func TestPadWriterRollsSegments(t *testing.T) {
	dir := t.TempDir()
	ch := filepath.Join(dir, "ch")
	require.NoError(t, os.Mkdir(ch, 0o755))
	w := padWriter{dir: ch, segSize: 60, syncEvery: 50}
	require.NoError(t, w.create())
	filler := (&wal.Message{Type: wal.TypeTimeTick, TimeTick: 1}).Encode()
	for range 10 {
		require.NoError(t, w.append(filler))
	}
	require.NoError(t, w.close())
	require.Equal(t, int64(10), w.synced)
	firsts, err := listSegments(ch)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 3, 6, 9}, firsts, "20-byte frames, a new segment once one reaches 60 bytes")
	ds, err := Verify(dir, 0)
	require.NoError(t, err)
	require.Empty(t, ds)
	end, err := End(dir, "ch", 0)
	require.NoError(t, err)
	require.Equal(t, int64(10), end)
}
