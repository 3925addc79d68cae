// Package waltest is the conformance suite for wal.Log implementations.
// Every implementation's tests call RunConformance with a Harness that opens
// fresh storage, so the local log and the Kafka log are held to the same
// contract (see wal.Log).
package waltest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

// Harness tells the suite how to create the implementation under test.
type Harness struct {
	// Open returns a Log on fresh, empty storage. The suite closes it.
	Open func(t *testing.T) wal.Log
	// Reopen closes old and opens a Log on the same storage. Optional: the
	// persistence cases are skipped when it is nil.
	Reopen func(t *testing.T, old wal.Log) wal.Log
	// TruncatesAfter is the number of small records after which Truncate is
	// expected to have dropped at least one; 0 means never expected (the
	// suite then only checks that no wrong data is returned).
	TruncatesAfter int
}

// timeout bounds every wait of the suite so a broken implementation fails
// instead of hanging.
const timeout = 10 * time.Second

// RunConformance runs every conformance case against h.
func RunConformance(t *testing.T, h Harness) {
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"DenseOffsets", testDenseOffsets},
		{"SequentialOrder", testSequentialOrder},
		{"MutexOrder", testMutexOrder},
		{"MultiRecordContiguous", testMultiRecordContiguous},
		{"ReadFrom", testReadFrom},
		{"ReadBlocksUntilAppend", testReadBlocks},
		{"ConcurrentTailers", testConcurrentTailers},
		{"UnknownChannel", testUnknownChannel},
		{"ChannelsIndependent", testChannelsIndependent},
		{"Truncate", testTruncate},
		{"End", testEnd},
		{"Close", testClose},
		{"LargeRecord", testLargeRecord},
		{"Reopen", testReopen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

func open(t *testing.T, h Harness) wal.Log {
	t.Helper()
	l := h.Open(t)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// wait returns the result of an AppendAsync call.
func wait(t *testing.T, ch <-chan wal.AppendResult) wal.AppendResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(timeout):
		t.Fatal("append result did not arrive")
		return wal.AppendResult{}
	}
}

// appendOK appends records and returns the first offset.
func appendOK(t *testing.T, l wal.Log, ch string, recs ...[]byte) int64 {
	t.Helper()
	r := wait(t, l.AppendAsync(ch, recs))
	require.NoError(t, r.Err)
	return r.Offset
}

func rec(ch string, i int) []byte { return fmt.Appendf(nil, "%s-record-%d", ch, i) }

// readN reads n records from offset from.
func readN(t *testing.T, l wal.Log, ch string, from int64, n int) []wal.Record {
	t.Helper()
	ctx := ctxT(t)
	r, err := l.Read(ctx, ch, from)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	out := make([]wal.Record, 0, n)
	for range n {
		rec, err := r.Next(ctx)
		require.NoError(t, err)
		out = append(out, rec)
	}
	return out
}

func testDenseOffsets(t *testing.T, h Harness) {
	l := open(t, h)
	for i := range 20 {
		require.Equal(t, int64(i), appendOK(t, l, "ch", rec("ch", i)))
	}
	for i, r := range readN(t, l, "ch", 0, 20) {
		require.Equal(t, int64(i), r.Offset)
		require.Equal(t, rec("ch", i), r.Data)
	}
}

func testSequentialOrder(t *testing.T, h Harness) {
	l := open(t, h)
	const n = 200
	results := make([]<-chan wal.AppendResult, n)
	for i := range n {
		results[i] = l.AppendAsync("ch", [][]byte{rec("ch", i)})
	}
	for i := range n {
		r := wait(t, results[i])
		require.NoError(t, r.Err)
		require.Equal(t, int64(i), r.Offset, "calls made one after another get increasing offsets")
	}
	for i, r := range readN(t, l, "ch", 0, n) {
		require.Equal(t, rec("ch", i), r.Data)
	}
}

func testMutexOrder(t *testing.T, h Harness) {
	l := open(t, h)
	const workers, perWorker = 16, 25
	var (
		mu  sync.Mutex
		seq int
		wg  sync.WaitGroup
	)
	errs := make(chan error, workers*perWorker)
	for range workers {
		wg.Go(func() {
			for range perWorker {
				mu.Lock()
				i := seq
				seq++
				res := l.AppendAsync("ch", [][]byte{rec("ch", i)})
				mu.Unlock()
				r := <-res
				if r.Err == nil && r.Offset != int64(i) {
					r.Err = fmt.Errorf("call %d got offset %d", i, r.Offset)
				}
				errs <- r.Err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i, r := range readN(t, l, "ch", 0, workers*perWorker) {
		require.Equal(t, rec("ch", i), r.Data, "offset %d", i)
	}
}

func testMultiRecordContiguous(t *testing.T, h Harness) {
	l := open(t, h)
	const workers, calls, per = 8, 20, 3
	type call struct {
		first int64
		data  [][]byte
	}
	var (
		mu  sync.Mutex
		got []call
		wg  sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for c := range calls {
				data := make([][]byte, per)
				for k := range per {
					data[k] = fmt.Appendf(nil, "w%d-c%d-r%d", w, c, k)
				}
				r := <-l.AppendAsync("ch", data)
				mu.Lock()
				if r.Err != nil {
					got = append(got, call{first: -1})
				} else {
					got = append(got, call{first: r.Offset, data: data})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	recs := readN(t, l, "ch", 0, workers*calls*per)
	for _, c := range got {
		require.GreaterOrEqual(t, c.first, int64(0), "append failed")
		for k, d := range c.data {
			require.Equal(t, d, recs[c.first+int64(k)].Data)
		}
	}
}

func testReadFrom(t *testing.T, h Harness) {
	l := open(t, h)
	const n = 50
	for i := range n {
		appendOK(t, l, "ch", rec("ch", i))
	}
	for _, tc := range []struct {
		name string
		from int64
	}{{"Start", 0}, {"Middle", 17}, {"Last", n - 1}} {
		t.Run(tc.name, func(t *testing.T) {
			recs := readN(t, l, "ch", tc.from, int(n-tc.from))
			for k, r := range recs {
				require.Equal(t, tc.from+int64(k), r.Offset)
				require.Equal(t, rec("ch", int(r.Offset)), r.Data)
			}
		})
	}
	t.Run("End", func(t *testing.T) {
		end, err := l.End(ctxT(t), "ch")
		require.NoError(t, err)
		require.Equal(t, int64(n), end)
		r, err := l.Read(ctxT(t), "ch", end)
		require.NoError(t, err)
		defer func() { require.NoError(t, r.Close()) }()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err = r.Next(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		appendOK(t, l, "ch", rec("ch", n))
		got, err := r.Next(ctxT(t))
		require.NoError(t, err)
		require.Equal(t, int64(n), got.Offset)
		require.Equal(t, rec("ch", n), got.Data)
	})
}

func testReadBlocks(t *testing.T, h Harness) {
	l := open(t, h)
	appendOK(t, l, "ch", rec("ch", 0))
	r, err := l.Read(ctxT(t), "ch", 1)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	type result struct {
		rec wal.Record
		err error
	}
	done := make(chan result, 1)
	go func() {
		rec, err := r.Next(ctxT(t))
		done <- result{rec, err}
	}()
	select {
	case <-done:
		t.Fatal("Next returned before anything was appended")
	case <-time.After(50 * time.Millisecond):
	}
	appendOK(t, l, "ch", rec("ch", 1))
	select {
	case res := <-done:
		require.NoError(t, res.err)
		require.Equal(t, int64(1), res.rec.Offset)
		require.Equal(t, rec("ch", 1), res.rec.Data)
	case <-time.After(timeout):
		t.Fatal("Next did not wake up on append")
	}
}

func testUnknownChannel(t *testing.T, h Harness) {
	l := open(t, h)
	end, err := l.End(ctxT(t), "never-written")
	require.NoError(t, err)
	require.Zero(t, end)
	r, err := l.Read(ctxT(t), "fresh", 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = r.Next(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Zero(t, appendOK(t, l, "fresh", rec("fresh", 0)))
	got, err := r.Next(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, wal.Record{Offset: 0, Data: rec("fresh", 0)}, got)
}

func testChannelsIndependent(t *testing.T, h Harness) {
	l := open(t, h)
	chans := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	for _, ch := range chans {
		wg.Go(func() {
			for i := range 30 {
				if r := <-l.AppendAsync(ch, [][]byte{rec(ch, i)}); r.Err != nil || r.Offset != int64(i) {
					t.Errorf("%s: append %d: offset %d err %v", ch, i, r.Offset, r.Err)
				}
			}
		})
	}
	wg.Wait()
	for _, ch := range chans {
		for i, r := range readN(t, l, ch, 0, 30) {
			require.Equal(t, int64(i), r.Offset)
			require.Equal(t, rec(ch, i), r.Data)
		}
		end, err := l.End(ctxT(t), ch)
		require.NoError(t, err)
		require.Equal(t, int64(30), end)
	}
}

func testTruncate(t *testing.T, h Harness) {
	l := open(t, h)
	const n = 300
	for i := range n {
		appendOK(t, l, "ch", rec("ch", i))
	}
	const before = 200
	require.NoError(t, l.Truncate(ctxT(t), "ch", before))
	end, err := l.End(ctxT(t), "ch")
	require.NoError(t, err)
	require.Equal(t, int64(n), end, "Truncate does not move End")

	for _, from := range []int64{0, 50, before - 1, before, n - 1} {
		t.Run(fmt.Sprint(from), func(t *testing.T) {
			ctx := ctxT(t)
			r, err := l.Read(ctx, "ch", from)
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			for off := from; off < n; off++ {
				got, err := r.Next(ctx)
				if err != nil {
					require.ErrorIs(t, err, wal.ErrTruncated)
					require.Less(t, off, int64(before), "offsets ≥ before stay readable")
					return
				}
				require.Equal(t, off, got.Offset)
				require.Equal(t, rec("ch", int(off)), got.Data)
			}
		})
	}
	if h.TruncatesAfter > 0 && h.TruncatesAfter < before {
		r, err := l.Read(ctxT(t), "ch", 0)
		require.NoError(t, err)
		_, err = r.Next(ctxT(t))
		require.ErrorIs(t, err, wal.ErrTruncated, "the first segment should be gone")
		require.NoError(t, r.Close())
	}
	require.Equal(t, int64(n), appendOK(t, l, "ch", rec("ch", n)))
	got := readN(t, l, "ch", n, 1)
	require.Equal(t, rec("ch", n), got[0].Data)
}

func testEnd(t *testing.T, h Harness) {
	l := open(t, h)
	for _, tc := range []struct {
		name string
		recs int
		want int64
	}{{"One", 1, 1}, {"Three", 3, 4}, {"Ten", 10, 14}} {
		t.Run(tc.name, func(t *testing.T) {
			recs := make([][]byte, tc.recs)
			for i := range recs {
				recs[i] = rec("ch", i)
			}
			appendOK(t, l, "ch", recs...)
			end, err := l.End(ctxT(t), "ch")
			require.NoError(t, err)
			require.Equal(t, tc.want, end)
		})
	}
}

func testClose(t *testing.T, h Harness) {
	l := h.Open(t)
	appendOK(t, l, "ch", rec("ch", 0))
	r, err := l.Read(ctxT(t), "ch", 1)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := r.Next(ctxT(t))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, l.Close())
	select {
	case err := <-done:
		require.Error(t, err)
		require.NotErrorIs(t, err, context.DeadlineExceeded, "Close must wake blocked readers")
	case <-time.After(timeout):
		t.Fatal("blocked Next did not return after Close")
	}
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Reader.Close is idempotent")
	require.NoError(t, l.Close(), "Close is idempotent")
	res := wait(t, l.AppendAsync("ch", [][]byte{rec("ch", 1)}))
	require.ErrorIs(t, res.Err, wal.ErrClosed)
	_, err = l.Read(ctxT(t), "ch", 0)
	require.ErrorIs(t, err, wal.ErrClosed)
}

func testLargeRecord(t *testing.T, h Harness) {
	l := open(t, h)
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	appendOK(t, l, "ch", rec("ch", 0))
	require.Equal(t, int64(1), appendOK(t, l, "ch", big, rec("ch", 2)))
	recs := readN(t, l, "ch", 0, 3)
	require.Equal(t, big, recs[1].Data)
	require.Equal(t, rec("ch", 2), recs[2].Data)
}

func testReopen(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("harness has no Reopen")
	}
	l := h.Open(t)
	for i := range 40 {
		appendOK(t, l, "a", rec("a", i))
	}
	appendOK(t, l, "b", rec("b", 0), rec("b", 1))
	l = h.Reopen(t, l)
	t.Cleanup(func() { _ = l.Close() })
	for _, tc := range []struct {
		ch  string
		end int64
	}{{"a", 40}, {"b", 2}} {
		t.Run(tc.ch, func(t *testing.T) {
			end, err := l.End(ctxT(t), tc.ch)
			require.NoError(t, err)
			require.Equal(t, tc.end, end)
			for i, r := range readN(t, l, tc.ch, 0, int(tc.end)) {
				require.Equal(t, rec(tc.ch, i), r.Data)
			}
			require.Equal(t, tc.end, appendOK(t, l, tc.ch, rec(tc.ch, int(tc.end))))
		})
	}
	l = h.Reopen(t, l)
	t.Cleanup(func() { _ = l.Close() })
	for i, r := range readN(t, l, "a", 0, 41) {
		require.Equal(t, rec("a", i), r.Data)
	}
}

func testConcurrentTailers(t *testing.T, h Harness) {
	l := open(t, h)
	const readers, n = 4, 200
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for k := range readers {
		r, err := l.Read(ctx, "ch", int64(k))
		require.NoError(t, err)
		wg.Go(func() {
			defer func() { _ = r.Close() }()
			for off := int64(k); off < n; off++ {
				got, err := r.Next(ctx)
				if err == nil && (got.Offset != off || string(got.Data) != string(rec("ch", int(off)))) {
					err = fmt.Errorf("reader %d: got offset %d %q, want %d", k, got.Offset, got.Data, off)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range n {
		if i%3 == 0 {
			appendOK(t, l, "ch", rec("ch", i))
			continue
		}
		l.AppendAsync("ch", [][]byte{rec("ch", i)}) // not waited for: order still holds
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
