package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

// payload returns a deterministic record of n bytes.
func payload(i, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(i*31 + k)
	}
	return b
}

// writeRecords opens a log in dir, appends the records one call each on
// pchannel "ch" and closes it.
func writeRecords(t *testing.T, cfg Config, recs [][]byte) {
	t.Helper()
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	for i, r := range recs {
		res := <-l.AppendAsync("ch", [][]byte{r})
		require.NoError(t, res.Err)
		require.Equal(t, int64(i), res.Offset)
	}
	require.NoError(t, l.Close())
}

// readAll reads records [from, end) of "ch".
func readAll(t *testing.T, l *Log, from int64) ([]wal.Record, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	end, err := l.End(ctx, "ch")
	require.NoError(t, err)
	r, err := l.Read(ctx, "ch", from)
	require.NoError(t, err)
	defer r.Close()
	var out []wal.Record
	for off := from; off < end; off++ {
		rec, err := r.Next(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// frameStarts returns the byte offset of every record in a segment holding
// recs, plus the file size.
func frameStarts(recs [][]byte) []int64 {
	starts := []int64{0}
	for _, r := range recs {
		starts = append(starts, starts[len(starts)-1]+headerSize+int64(len(r)))
	}
	return starts
}

// copyDir copies the flat pchannel tree of src into a new temp dir.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	chans, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, c := range chans {
		require.NoError(t, os.MkdirAll(filepath.Join(dst, c.Name()), 0o755))
		files, err := os.ReadDir(filepath.Join(src, c.Name()))
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(src, c.Name(), f.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dst, c.Name(), f.Name()), b, 0o644))
		}
	}
	return dst
}

// checkRecovered reopens dir and checks that it holds exactly want and that
// appends continue at the right offset.
func checkRecovered(t *testing.T, cfg Config, want [][]byte) {
	t.Helper()
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	end, err := l.End(context.Background(), "ch")
	require.NoError(t, err)
	require.Equal(t, int64(len(want)), end)
	got, err := readAll(t, l, 0)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i].Data)
	}
	next := []byte("after-repair")
	res := <-l.AppendAsync("ch", [][]byte{next})
	require.NoError(t, res.Err)
	require.Equal(t, int64(len(want)), res.Offset)
	got, err = readAll(t, l, int64(len(want)))
	require.NoError(t, err)
	require.Equal(t, next, got[0].Data)
}

func TestTornTail(t *testing.T) {
	recs := [][]byte{payload(0, 10), payload(1, 100), payload(2, 1), payload(3, 40)}
	cfg := Config{Dir: t.TempDir()}
	writeRecords(t, cfg, recs)
	seg := filepath.Join(cfg.Dir, "ch", segmentName(0))
	starts := frameStarts(recs)
	last := starts[len(recs)-1]
	for cut := last; cut < starts[len(recs)]; cut++ {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			dir := copyDir(t, cfg.Dir)
			require.NoError(t, os.Truncate(filepath.Join(dir, "ch", filepath.Base(seg)), cut))
			checkRecovered(t, Config{Dir: dir}, recs[:len(recs)-1])
		})
	}
}

func TestTailGarbage(t *testing.T) {
	recs := [][]byte{payload(0, 10), payload(1, 20), payload(2, 30)}
	cfg := Config{Dir: t.TempDir()}
	writeRecords(t, cfg, recs)
	starts := frameStarts(recs)
	for _, tc := range []struct {
		name   string
		mutate func(b []byte) []byte
		keep   int
	}{
		{"ZeroTail", func(b []byte) []byte { return append(b, make([]byte, 64)...) }, 3},
		{"GarbageTail", func(b []byte) []byte { return append(b, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5) }, 3},
		{"LastRecordCRC", func(b []byte) []byte { b[len(b)-1] ^= 0x01; return b }, 2},
		{"LastHeaderCRC", func(b []byte) []byte { b[starts[2]+5] ^= 0x80; return b }, 2},
		{"MiddleRecordCRC", func(b []byte) []byte { b[starts[1]+headerSize+3] ^= 0x10; return b }, 1},
		{"HugeLength", func(b []byte) []byte { b[starts[2]+3] = 0xff; return b }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, cfg.Dir)
			path := filepath.Join(dir, "ch", segmentName(0))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, tc.mutate(b), 0o644))
			checkRecovered(t, Config{Dir: dir}, recs[:tc.keep])
		})
	}
}

func TestSealedSegmentCorruption(t *testing.T) {
	recs := make([][]byte, 30)
	for i := range recs {
		recs[i] = payload(i, 20) // 28 framed bytes: 4 records per 100-byte segment
	}
	cfg := Config{Dir: t.TempDir(), SegmentSize: 100}
	writeRecords(t, cfg, recs)
	firsts, err := listSegments(filepath.Join(cfg.Dir, "ch"))
	require.NoError(t, err)
	require.Greater(t, len(firsts), 3)
	segPath := filepath.Join(cfg.Dir, "ch", segmentName(firsts[1]))
	const bad = 2 // record index inside the segment
	badByte := int64(bad * 28)

	for _, tc := range []struct {
		name    string
		mutate  func(t *testing.T, path string)
		offset  int64
		cause   error
		atOpen  bool
		readErr bool
	}{
		{"CRCOnRead", flipByte(badByte + headerSize + 1), badByte, ErrChecksum, false, true},
		{"CRCOnOpen", flipByte(badByte + headerSize + 1), badByte, ErrChecksum, true, false},
		{"ShortOnRead", truncateTo(badByte + 5), badByte, ErrShortRecord, false, true},
		{"MissingOnOpen", truncateTo(badByte), badByte, ErrSegmentGap, true, false},
		{"MissingOnRead", truncateTo(badByte), badByte, ErrSegmentGap, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, cfg.Dir)
			path := filepath.Join(dir, "ch", filepath.Base(segPath))
			tc.mutate(t, path)
			l, err := Open(Config{Dir: dir, SegmentSize: 100, VerifySealed: tc.atOpen}, testLogger(t))
			if tc.atOpen {
				var ce *CorruptionErr
				require.ErrorAs(t, err, &ce)
				require.Equal(t, path, ce.Segment)
				require.Equal(t, tc.offset, ce.Offset)
				require.ErrorIs(t, err, tc.cause)
				return
			}
			require.NoError(t, err)
			defer func() { require.NoError(t, l.Close()) }()
			got, err := readAll(t, l, 0)
			var ce *CorruptionErr
			require.ErrorAs(t, err, &ce)
			require.Equal(t, path, ce.Segment)
			require.Equal(t, tc.offset, ce.Offset)
			require.ErrorIs(t, err, tc.cause)
			require.Len(t, got, int(firsts[1])+bad, "every record before the damage is returned")
			// A reader starting after the damaged segment is unaffected.
			got, err = readAll(t, l, firsts[2])
			require.NoError(t, err)
			require.Equal(t, recs[firsts[2]], got[0].Data)
		})
	}
}

func flipByte(at int64) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		b[at] ^= 0x40
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
}

func truncateTo(size int64) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		require.NoError(t, os.Truncate(path, size))
	}
}

func TestRolloverAndReopen(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), SegmentSize: 256}
	recs := make([][]byte, 100)
	for i := range recs {
		recs[i] = payload(i, 50)
	}
	writeRecords(t, cfg, recs)
	dir := filepath.Join(cfg.Dir, "ch")
	firsts, err := listSegments(dir)
	require.NoError(t, err)
	require.Greater(t, len(firsts), 10)
	for i, first := range firsts {
		res, err := scanSegment(filepath.Join(dir, segmentName(first)), DefaultMaxRecordBytes)
		require.NoError(t, err)
		require.NoError(t, res.err)
		next := int64(len(recs))
		if i+1 < len(firsts) {
			next = firsts[i+1]
		}
		require.Equal(t, next-first, res.records, "segment %d is named after its first offset", first)
	}

	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	for _, from := range []int64{0, 4, firsts[3], firsts[3] + 1, 99} {
		t.Run(fmt.Sprint(from), func(t *testing.T) {
			got, err := readAll(t, l, from)
			require.NoError(t, err)
			require.Len(t, got, len(recs)-int(from))
			for k, r := range got {
				require.Equal(t, from+int64(k), r.Offset)
				require.Equal(t, recs[r.Offset], r.Data)
			}
		})
	}

	// Truncate never removes the active segment, even past the end.
	require.NoError(t, l.Truncate(context.Background(), "ch", 1000))
	left, err := listSegments(dir)
	require.NoError(t, err)
	require.Equal(t, firsts[len(firsts)-1:], left)
	_, err = readAll(t, l, 0)
	require.ErrorIs(t, err, wal.ErrTruncated)
	got, err := readAll(t, l, left[0])
	require.NoError(t, err)
	require.Equal(t, recs[left[0]], got[0].Data)
	res := <-l.AppendAsync("ch", [][]byte{[]byte("x")})
	require.NoError(t, res.Err)
	require.Equal(t, int64(100), res.Offset)
}

func TestTruncateKeepsPartialSegments(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), SegmentSize: 100}
	recs := make([][]byte, 20)
	for i := range recs {
		recs[i] = payload(i, 20) // 4 records per segment: 0,4,8,12,16
	}
	writeRecords(t, cfg, recs)
	for _, tc := range []struct {
		before int64
		want   []int64
	}{
		{0, []int64{0, 4, 8, 12, 16}},
		{3, []int64{0, 4, 8, 12, 16}},
		{4, []int64{4, 8, 12, 16}},
		{11, []int64{8, 12, 16}},
		{20, []int64{16}},
	} {
		t.Run(fmt.Sprint(tc.before), func(t *testing.T) {
			dir := copyDir(t, cfg.Dir)
			l, err := Open(Config{Dir: dir, SegmentSize: 100}, testLogger(t))
			require.NoError(t, err)
			defer func() { require.NoError(t, l.Close()) }()
			require.NoError(t, l.Truncate(context.Background(), "ch", tc.before))
			got, err := listSegments(filepath.Join(dir, "ch"))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			start, err := l.Start("ch")
			require.NoError(t, err)
			require.Equal(t, tc.want[0], start, "Start is the first offset kept")
			recsRead, err := readAll(t, l, tc.want[0])
			require.NoError(t, err)
			require.Equal(t, recs[tc.want[0]], recsRead[0].Data)
		})
	}
}

func TestAppendRejects(t *testing.T) {
	l, err := Open(Config{Dir: t.TempDir(), MaxRecordBytes: 16}, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	for _, tc := range []struct {
		name string
		ch   string
		recs [][]byte
		want error
	}{
		{"Empty", "ch", [][]byte{[]byte("a"), {}}, ErrEmptyRecord},
		{"TooLarge", "ch", [][]byte{make([]byte, 17)}, ErrRecordTooLarge},
		{"Slash", "a/b", [][]byte{[]byte("a")}, ErrInvalidPChannel},
		{"Dot", ".hidden", [][]byte{[]byte("a")}, ErrInvalidPChannel},
		{"NoName", "", [][]byte{[]byte("a")}, ErrInvalidPChannel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := <-l.AppendAsync(tc.ch, tc.recs)
			require.ErrorIs(t, res.Err, tc.want)
		})
	}
	_, err = l.Read(context.Background(), "ch", -1)
	require.ErrorIs(t, err, ErrInvalidOffset)
	end, err := l.End(context.Background(), "ch")
	require.NoError(t, err)
	require.Zero(t, end)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"Defaults", Config{Dir: "x"}, true},
		{"NoDir", Config{}, false},
		{"NegativeSegment", Config{Dir: "x", SegmentSize: -1}, false},
		{"NegativeBatch", Config{Dir: "x", MaxBatchBytes: -1}, false},
		{"HugeRecord", Config{Dir: "x", MaxRecordBytes: 1 << 33}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Defaults().Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
	_, err := Open(Config{}, nil)
	require.True(t, errors.Is(err, ErrInvalidConfig))
}
