package local

import (
	"context"
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

// mutation damages the bytes of a segment file.
type mutation func(b []byte) []byte

func flipBit(at int64, bit uint) mutation {
	return func(b []byte) []byte { b[at] ^= 1 << bit; return b }
}

func cutAt(size int64) mutation { return func(b []byte) []byte { return b[:size] } }

func zeroRange(from, to int64) mutation {
	return func(b []byte) []byte { clear(b[from:min(to, int64(len(b)))]); return b }
}

func appendBytes(extra ...byte) mutation {
	return func(b []byte) []byte { return append(b, extra...) }
}

// damageCase is one damaged copy of a segment and the outcome Open must give:
// keep is the number of records that survive; torn says whether the damage
// is a torn tail (truncated to the end of record keep-1) or corruption (the
// file is kept byte-identical and appends are refused).
type damageCase struct {
	name   string
	mutate mutation
	keep   int
	torn   bool
}

// checkOutcome applies tc to a copy of src (one pchannel "ch" with one
// segment holding recs) and checks what Open does with it.
func checkOutcome(t *testing.T, src string, cfg Config, recs [][]byte, tc damageCase) {
	t.Helper()
	starts := frameStarts(recs)
	dir := copyDir(t, src)
	path := filepath.Join(dir, "ch", segmentName(0))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	damaged := tc.mutate(b)
	require.NoError(t, os.WriteFile(path, damaged, 0o644))
	cfg.Dir = dir
	if tc.torn {
		checkRecovered(t, cfg, recs[:tc.keep])
		return
	}
	checkCorrupt(t, cfg, path, damaged, recs[:tc.keep], starts[tc.keep])
}

// checkCorrupt opens cfg.Dir, whose "ch" segment at path holds corruption at
// byte offset at after the records want, and checks that nothing is lost or
// changed, that reads stop at the damage, that appends are refused and that
// the damage is reported.
func checkCorrupt(t *testing.T, cfg Config, path string, damaged []byte, want [][]byte, at int64) {
	t.Helper()
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err, "damage never fails Open")
	defer func() { require.NoError(t, l.Close()) }()
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, damaged, after, "the damaged file is kept byte-identical")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	end, err := l.End(ctx, "ch")
	require.NoError(t, err)
	require.Equal(t, int64(len(want)), end)
	r, err := l.Read(ctx, "ch", 0)
	require.NoError(t, err)
	defer r.Close()
	for i := range want {
		rec, err := r.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, want[i], rec.Data)
	}
	_, err = r.Next(ctx)
	var ce *CorruptionErr
	require.ErrorAs(t, err, &ce, "a reader reaching the damage gets it, it does not wait")
	require.Equal(t, path, ce.Segment)
	require.Equal(t, at, ce.Offset)

	res := <-l.AppendAsync("ch", [][]byte{[]byte("after-damage")})
	require.ErrorIs(t, res.Err, ErrDamaged)
	require.ErrorAs(t, res.Err, &ce)
	require.Contains(t, res.Err.Error(), path)
	require.Contains(t, res.Err.Error(), fmt.Sprintf("at byte %d", at))
	probs := l.Problems()
	require.Len(t, probs, 1)
	require.Equal(t, "wal", probs[0].Component)
	require.Equal(t, "pchannel ch", probs[0].Subject)
	require.True(t, probs[0].WritesUnavailable)
	require.Contains(t, probs[0].Reason, path)
	require.False(t, probs[0].Since.IsZero())

	// Other pchannels are unaffected.
	res = <-l.AppendAsync("other", [][]byte{[]byte("x")})
	require.NoError(t, res.Err)
	after, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, damaged, after)
}

// TestRepairRule damages every frame of a small last segment in every way
// and checks the repair rule (doc.go, Recovery): a torn tail is truncated
// to the last good frame, anything else is refused and kept byte-identical.
func TestRepairRule(t *testing.T) {
	recs := [][]byte{payload(0, 10), payload(1, 100), payload(2, 1), payload(3, 40), payload(4, 25)}
	src := t.TempDir()
	writeRecords(t, Config{Dir: src}, recs)
	starts := frameStarts(recs)
	size := starts[len(recs)]
	last := len(recs) - 1
	var cases []damageCase
	for i := range recs {
		s, e := starts[i], starts[i+1]
		data := s + headerSize
		cases = append(cases,
			damageCase{fmt.Sprintf("Frame%d/FlipLengthLow", i), flipBit(s, 0), i, false},
			damageCase{fmt.Sprintf("Frame%d/FlipLengthHigh", i), flipBit(s+3, 7), i, false},
			damageCase{fmt.Sprintf("Frame%d/FlipLengthMid", i), flipBit(s+1, 2), i, false},
			damageCase{fmt.Sprintf("Frame%d/FlipCRC", i), flipBit(s+5, 3), i, false},
			damageCase{fmt.Sprintf("Frame%d/FlipDataFirst", i), flipBit(data, 0), i, false},
			damageCase{fmt.Sprintf("Frame%d/FlipDataLast", i), flipBit(e-1, 6), i, false},
			// Zero-filled from the frame's start to the end of the file:
			// what an unwritten group commit leaves.
			damageCase{fmt.Sprintf("Frame%d/ZeroToEnd", i), zeroRange(s, size), i, true},
			// Zero-filled frame followed by valid frames: corruption, except
			// for the last frame, where it is the same as ZeroToEnd.
			damageCase{fmt.Sprintf("Frame%d/ZeroFrameOnly", i), zeroRange(s, e), i, i == last},
		)
		if data+1 < e {
			// Zeros starting inside a record, not at a block boundary, are
			// not the shape of an unfinished write.
			cases = append(cases, damageCase{fmt.Sprintf("Frame%d/ZeroFromMidData", i), zeroRange(data+1, size), i, false})
		}
		for _, k := range []int64{1, 4, 7, 8, 9, e - s - 1} {
			if s+k < e {
				cases = append(cases, damageCase{fmt.Sprintf("Frame%d/Cut%d", i, k), cutAt(s + k), i, true})
			}
		}
		cases = append(cases, damageCase{fmt.Sprintf("Frame%d/CutAtStart", i), cutAt(s), i, true})
	}
	cases = append(cases,
		damageCase{"ZerosAfterEnd", appendBytes(make([]byte, 64)...), len(recs), true},
		damageCase{"CutHeaderAfterEnd", appendBytes(7, 0, 0), len(recs), true},
		damageCase{"GarbageAfterEnd", appendBytes(0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5), len(recs), false},
		damageCase{"ZeroLengthWithCRC", appendBytes(0, 0, 0, 0, 1, 2, 3, 4), len(recs), false},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkOutcome(t, src, Config{}, recs, tc) })
	}
}

// TestRepairRuleGroupBound checks that damage further from the end of the
// file than one group commit leaves unsynced is corruption even when it
// looks like a torn tail, and that a single record larger than a group
// commit may be torn on its own.
func TestRepairRuleGroupBound(t *testing.T) {
	recs := [][]byte{payload(0, 10), payload(1, 100), payload(2, 1), payload(3, 40), payload(4, 25)}
	src := t.TempDir()
	writeRecords(t, Config{Dir: src}, recs)
	starts := frameStarts(recs)
	size := starts[len(recs)]
	cfg := Config{MaxBatchBytes: 64}
	for i := range recs {
		torn := size-starts[i] <= 64
		t.Run(fmt.Sprintf("ZeroToEnd%d", i), func(t *testing.T) {
			checkOutcome(t, src, cfg, recs, damageCase{"", zeroRange(starts[i], size), i, torn})
		})
	}
	// A lone record larger than MaxBatchBytes, cut short, is a torn tail.
	big := [][]byte{payload(0, 10), payload(1, 300)}
	bigSrc := t.TempDir()
	writeRecords(t, Config{Dir: bigSrc}, big)
	bs := frameStarts(big)
	for _, cut := range []int64{bs[1] + 4, bs[1] + 100, bs[2] - 1} {
		t.Run(fmt.Sprintf("LoneCut%d", cut), func(t *testing.T) {
			checkOutcome(t, bigSrc, cfg, big, damageCase{"", cutAt(cut), 1, true})
		})
	}
	t.Run("LoneZeroFromMid", func(t *testing.T) {
		checkOutcome(t, bigSrc, cfg, big, damageCase{"", zeroRange(bs[1]+100, bs[2]), 1, false})
	})
}

// TestRepairRuleZeroBlock checks that a whole record with a wrong checksum
// is a torn tail when a block-aligned part of it reads as zeros (a block
// that was never written back) and corruption otherwise.
func TestRepairRuleZeroBlock(t *testing.T) {
	recs := [][]byte{payload(0, 100), payload(1, 2000)}
	src := t.TempDir()
	writeRecords(t, Config{Dir: src}, recs)
	starts := frameStarts(recs)
	for _, tc := range []damageCase{
		{"AlignedBlock", zeroRange(zeroBlock, 2*zeroBlock), 1, true},
		{"AlignedToEnd", zeroRange(2*zeroBlock, starts[2]), 1, true},
		{"Unaligned", zeroRange(zeroBlock+1, 2*zeroBlock), 1, false},
		{"FlippedBit", flipBit(3*zeroBlock+7, 1), 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) { checkOutcome(t, src, Config{}, recs, tc) })
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
			require.NoError(t, err, "sealed damage never fails Open")
			defer func() { require.NoError(t, l.Close()) }()
			if tc.atOpen {
				probs := l.Problems()
				require.Len(t, probs, 1, "VerifySealed reports the damage before a reader reaches it")
				require.Contains(t, probs[0].Reason, path)
				require.Contains(t, probs[0].Reason, fmt.Sprintf("at byte %d", tc.offset))
				require.False(t, probs[0].WritesUnavailable)
			} else {
				require.Empty(t, l.Problems())
			}
			got, err := readAll(t, l, 0)
			var ce *CorruptionErr
			require.ErrorAs(t, err, &ce)
			require.Equal(t, path, ce.Segment)
			require.Equal(t, tc.offset, ce.Offset)
			require.ErrorIs(t, err, tc.cause)
			require.Len(t, got, int(firsts[1])+bad, "every record before the damage is returned")
			probs := l.Problems()
			require.Len(t, probs, 1, "a reader's find is reported")
			require.Equal(t, "pchannel ch", probs[0].Subject)
			require.Contains(t, probs[0].Reason, path)
			// Appends continue: sealed damage does not touch the active segment.
			res := <-l.AppendAsync("ch", [][]byte{[]byte("more")})
			require.NoError(t, res.Err)
			require.Equal(t, int64(len(recs)), res.Offset)
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
			err := tc.cfg.withDefaults().Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
	_, err := Open(Config{}, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// TestSegmentVanishes checks that a sealed segment file removed behind the
// Log's back (not truncated) is reported as damage, not as truncation.
func TestSegmentVanishes(t *testing.T) {
	recs := make([][]byte, 12)
	for i := range recs {
		recs[i] = payload(i, 20) // 4 records per 100-byte segment
	}
	cfg := Config{Dir: t.TempDir(), SegmentSize: 100}
	writeRecords(t, cfg, recs)
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	path := filepath.Join(cfg.Dir, "ch", segmentName(4))
	require.NoError(t, os.Remove(path))
	got, err := readAll(t, l, 0)
	var ce *CorruptionErr
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrMissingSegment)
	require.NotErrorIs(t, err, wal.ErrTruncated)
	require.Equal(t, path, ce.Segment)
	require.Len(t, got, 4)
	probs := l.Problems()
	require.Len(t, probs, 1)
	require.Contains(t, probs[0].Reason, path)
	// Truncation past it still reads as truncation.
	require.NoError(t, l.Truncate(context.Background(), "ch", 8))
	_, err = readAll(t, l, 0)
	require.ErrorIs(t, err, wal.ErrTruncated)
}
