package local

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// snapshot returns every file under dir with its bytes.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = b
		return err
	}))
	return out
}

// toolsWAL writes 30 records of 20 bytes (4 per 100-byte segment) to "ch"
// and 3 to "other", and returns the dir, the records and the segment names.
func toolsWAL(t *testing.T) (string, [][]byte, []int64) {
	t.Helper()
	recs := make([][]byte, 30)
	for i := range recs {
		recs[i] = payload(i, 20)
	}
	cfg := Config{Dir: t.TempDir(), SegmentSize: 100}
	writeRecords(t, cfg, recs)
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, (<-l.AppendAsync("other", [][]byte{payload(i, 5)})).Err)
	}
	require.NoError(t, l.Close())
	firsts, err := listSegments(filepath.Join(cfg.Dir, "ch"))
	require.NoError(t, err)
	require.Len(t, firsts, 8)
	return cfg.Dir, recs, firsts
}

func TestVerify(t *testing.T) {
	src, _, firsts := toolsWAL(t)
	seg := func(dir string, i int) string { return filepath.Join(dir, "ch", segmentName(firsts[i])) }
	lastSeg := len(firsts) - 1
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []Damage // Path relative to the pchannel dir
	}{
		{"Clean", func(*testing.T, string) {}, nil},
		{
			"SealedCRC", func(t *testing.T, dir string) { flipByte(2*28+headerSize+1)(t, seg(dir, 1)) },
			[]Damage{{Path: segmentName(firsts[1]), ByteOffset: 56, RecordOffset: firsts[1] + 2, Kind: DamageCorruptRecord}},
		},
		{
			"SealedShort", func(t *testing.T, dir string) { truncateTo(2*28)(t, seg(dir, 1)) },
			[]Damage{{Path: segmentName(firsts[1]), ByteOffset: 56, RecordOffset: firsts[1] + 2, Kind: DamageMissingSegment}},
		},
		{
			"MissingSegment", func(t *testing.T, dir string) { require.NoError(t, os.Remove(seg(dir, 2))) },
			[]Damage{{Path: segmentName(firsts[1]), ByteOffset: 4 * 28, RecordOffset: firsts[2], Kind: DamageMissingSegment}},
		},
		{
			"TornTail", func(t *testing.T, dir string) { truncateTo(28+10)(t, seg(dir, lastSeg)) },
			[]Damage{{Path: segmentName(firsts[lastSeg]), ByteOffset: 28, RecordOffset: firsts[lastSeg] + 1, Kind: DamageTornTail}},
		},
		{
			"LastCorrupt", func(t *testing.T, dir string) { flipByte(headerSize+3)(t, seg(dir, lastSeg)) },
			[]Damage{{Path: segmentName(firsts[lastSeg]), ByteOffset: 0, RecordOffset: firsts[lastSeg], Kind: DamageCorruptRecord}},
		},
		{"Two", func(t *testing.T, dir string) {
			flipByte(headerSize+3)(t, seg(dir, 0))
			flipByte(headerSize+3)(t, seg(dir, lastSeg))
		}, []Damage{
			{Path: segmentName(0), RecordOffset: 0, Kind: DamageCorruptRecord},
			{Path: segmentName(firsts[lastSeg]), RecordOffset: firsts[lastSeg], Kind: DamageCorruptRecord},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			tc.damage(t, dir)
			before := snapshot(t, dir)
			got, err := Verify(dir, 0)
			require.NoError(t, err)
			require.Equal(t, before, snapshot(t, dir), "Verify changes nothing")
			require.Len(t, got, len(tc.want))
			for i, w := range tc.want {
				require.Equal(t, "ch", got[i].PChannel)
				require.Equal(t, filepath.Join(dir, "ch", w.Path), got[i].Path)
				require.Equal(t, w.ByteOffset, got[i].ByteOffset)
				require.Equal(t, w.RecordOffset, got[i].RecordOffset)
				require.Equal(t, w.Kind, got[i].Kind)
				require.NotEmpty(t, got[i].Detail)
				require.Contains(t, got[i].String(), got[i].Path)
			}
		})
	}
	_, err := Verify(filepath.Join(src, "nope"), 0)
	require.Error(t, err)
}

func TestCut(t *testing.T) {
	src, recs, firsts := toolsWAL(t)
	seg := func(dir string, i int) string { return filepath.Join(dir, "ch", segmentName(firsts[i])) }
	lastSeg := len(firsts) - 1
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, dir string)
		end     int64 // records kept
		removed int64 // valid records moved aside
		oldEnd  int64 // the end before the cut, as far as the cut can tell
	}{
		{"SealedCRC", func(t *testing.T, dir string) { flipByte(2*28+headerSize+1)(t, seg(dir, 1)) }, firsts[1] + 2, 30 - (firsts[1] + 3), 30},
		{"MissingSegment", func(t *testing.T, dir string) { require.NoError(t, os.Remove(seg(dir, 2))) }, firsts[2], 30 - firsts[3], 30},
		{"TornTail", func(t *testing.T, dir string) { truncateTo(28+10)(t, seg(dir, lastSeg)) }, firsts[lastSeg] + 1, 0, firsts[lastSeg] + 1},
		{"LastCorrupt", func(t *testing.T, dir string) { flipByte(headerSize+3)(t, seg(dir, lastSeg)) }, firsts[lastSeg], 30 - firsts[lastSeg] - 1, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			tc.damage(t, dir)
			before := snapshot(t, dir)
			res, err := Cut(dir, "ch", 0, testLogger(t))
			require.NoError(t, err)
			require.NotNil(t, res.Damage)
			require.Equal(t, tc.end, res.End)
			require.Equal(t, tc.removed, res.RemovedRecords)
			require.Equal(t, tc.oldEnd, res.OldEnd)

			// Nothing is deleted: every original byte is in the WAL or in a
			// .damaged file, and the other pchannel is untouched.
			after := snapshot(t, dir)
			var total, moved int64
			for p, b := range before {
				total += int64(len(b))
				if filepath.Base(filepath.Dir(p)) == "other" {
					require.Equal(t, b, after[p])
				}
			}
			for _, p := range res.Moved {
				moved += int64(len(after[p]))
			}
			var kept int64
			for p, b := range after {
				if filepath.Ext(p) == segmentExt {
					kept += int64(len(b))
				}
			}
			require.Equal(t, total, kept+moved)
			require.Equal(t, moved, res.RemovedBytes)
			if res.Damage.Kind != DamageMissingSegment {
				cut := res.Damage.Path
				require.True(t, bytes.Equal(before[cut], append(after[cut], after[cut+".damaged"]...)))
			}

			// The WAL is now clean and writable at the new end.
			ds, err := Verify(dir, 0)
			require.NoError(t, err)
			require.Empty(t, ds)
			l, err := Open(Config{Dir: dir, SegmentSize: 100}, testLogger(t))
			require.NoError(t, err)
			defer func() { require.NoError(t, l.Close()) }()
			require.Empty(t, l.Problems())
			end, err := l.End(context.Background(), "ch")
			require.NoError(t, err)
			require.Equal(t, tc.end, end)
			got, err := readAll(t, l, 0)
			require.NoError(t, err)
			for i, r := range got {
				require.Equal(t, recs[i], r.Data)
			}
			app := <-l.AppendAsync("ch", [][]byte{[]byte("after-cut")})
			require.NoError(t, app.Err)
			require.Equal(t, tc.end, app.Offset)
		})
	}
	t.Run("Clean", func(t *testing.T) {
		dir := copyDir(t, src)
		before := snapshot(t, dir)
		res, err := Cut(dir, "ch", 0, testLogger(t))
		require.NoError(t, err)
		require.Nil(t, res.Damage)
		require.Equal(t, before, snapshot(t, dir))
	})
	t.Run("CutTwiceKeepsBoth", func(t *testing.T) {
		dir := copyDir(t, src)
		flipByte(headerSize+3)(t, seg(dir, lastSeg))
		_, err := Cut(dir, "ch", 0, testLogger(t))
		require.NoError(t, err)
		// Damage the same segment again: the second cut keeps the first's file.
		flipByte(headerSize+3)(t, seg(dir, lastSeg-1))
		res, err := Cut(dir, "ch", 0, testLogger(t))
		require.NoError(t, err)
		require.Equal(t, firsts[lastSeg-1], res.End)
		_, err = os.Stat(seg(dir, lastSeg) + ".damaged")
		require.NoError(t, err)
		_, err = os.Stat(seg(dir, lastSeg) + ".damaged.1")
		require.NoError(t, err)
	})
}
