package tso_test

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/tso"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeClock is a settable wall clock.
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ms.Store(t.UnixMilli())
	return c
}

func (c *fakeClock) Now() time.Time               { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) Add(d time.Duration)          { c.ms.Add(d.Milliseconds()) }
func (c *fakeClock) Ms() int64                    { return c.ms.Load() }
func (c *fakeClock) config(key string) tso.Config { return tso.Config{Key: key, Now: c.Now} }

// countingStore counts Txn calls and can be made to fail them.
type countingStore struct {
	tso.Store
	txns atomic.Int64
	fail atomic.Bool
}

var errInjected = errors.New("injected failure")

func (s *countingStore) Txn(ctx context.Context, ops ...metastore.Op) error {
	s.txns.Add(1)
	if s.fail.Load() {
		return errInjected
	}
	return s.Store.Txn(ctx, ops...)
}

func openKV(t testing.TB) *embedded.Store {
	t.Helper()
	kv, err := embedded.Open(filepath.Join(t.TempDir(), "meta.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, kv.Close()) })
	return kv
}

func newAllocator(t testing.TB, store tso.Store, cfg tso.Config) *tso.Allocator {
	t.Helper()
	a, err := tso.New(context.Background(), store, cfg, nil)
	require.NoError(t, err)
	return a
}

func storedBound(t *testing.T, kv metastore.KV, key string) int64 {
	t.Helper()
	raw, err := kv.Get(context.Background(), key)
	require.NoError(t, err)
	require.Len(t, raw, 8)
	return int64(binary.BigEndian.Uint64(raw))
}

func TestComposeParse(t *testing.T) {
	tests := []struct {
		name     string
		physical int64
		logical  uint64
		want     uint64
	}{
		{name: "zero", want: 0},
		{name: "logical only", logical: 5, want: 5},
		{name: "physical only", physical: 1, want: 1 << 18},
		{name: "max logical", physical: 2, logical: tso.MaxLogical - 1, want: 2<<18 | (1<<18 - 1)},
		{name: "realistic", physical: 1_700_000_000_123, logical: 42, want: 1_700_000_000_123<<18 | 42},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := tso.ComposeTS(tc.physical, tc.logical)
			require.Equal(t, tc.want, ts)
			phys, logical := tso.ParseTS(ts)
			require.Equal(t, tc.physical, phys.UnixMilli())
			require.Equal(t, tc.logical, logical)
		})
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  tso.Config
		ok   bool
	}{
		{name: "defaults", cfg: tso.Config{Key: "k"}, ok: true},
		{name: "no key", cfg: tso.Config{}},
		{name: "interval too small", cfg: tso.Config{Key: "k", SaveInterval: time.Microsecond}},
		{name: "negative interval", cfg: tso.Config{Key: "k", SaveInterval: -time.Second}},
		{name: "max ahead below interval", cfg: tso.Config{Key: "k", SaveInterval: time.Minute, MaxAhead: time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Defaults()
			if tc.ok {
				require.NoError(t, cfg.Validate())
				require.Equal(t, tso.DefaultSaveInterval, cfg.SaveInterval)
				require.NotNil(t, cfg.Now)
			} else {
				require.Error(t, cfg.Validate())
				_, err := tso.New(context.Background(), openKV(t), tc.cfg, nil)
				require.Error(t, err)
			}
		})
	}
}

func TestAllocateBasics(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	a := newAllocator(t, openKV(t), clock.config(tso.TimestampKey))

	ts, err := a.Now(ctx)
	require.NoError(t, err)
	phys, logical := tso.ParseTS(ts)
	require.Equal(t, clock.Ms(), phys.UnixMilli())
	require.Equal(t, uint64(0), logical)

	first, err := a.Allocate(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, ts+1, first, "same millisecond: logical counts on")
	next, err := a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, first+10, next, "the 10 timestamps were reserved")

	clock.Add(5 * time.Millisecond)
	ts, err = a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, tso.ComposeTS(clock.Ms(), 0), ts, "a new millisecond resets logical")

	for _, n := range []uint32{0, tso.MaxLogical + 1} {
		_, err := a.Allocate(ctx, n)
		require.ErrorIs(t, err, tso.ErrInvalidCount)
	}
}

func TestLogicalOverflow(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		sizes []uint32
		// wantPhysOffset/wantLogical describe the first timestamp of the last call.
		wantPhysOffset int64
		wantLogical    uint64
	}{
		{name: "fills one ms exactly", sizes: []uint32{tso.MaxLogical}, wantPhysOffset: 0, wantLogical: 0},
		{name: "full then one", sizes: []uint32{tso.MaxLogical, 1}, wantPhysOffset: 1, wantLogical: 0},
		{name: "does not split a batch", sizes: []uint32{tso.MaxLogical - 1, 2}, wantPhysOffset: 1, wantLogical: 0},
		{name: "last slot", sizes: []uint32{tso.MaxLogical - 1, 1}, wantPhysOffset: 0, wantLogical: tso.MaxLogical - 1},
		{name: "several ms ahead", sizes: []uint32{tso.MaxLogical, tso.MaxLogical, tso.MaxLogical, 3}, wantPhysOffset: 3, wantLogical: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock(start) // frozen
			a := newAllocator(t, openKV(t), clock.config("ts"))
			var last, ts uint64
			for _, n := range tc.sizes {
				var err error
				ts, err = a.Allocate(ctx, n)
				require.NoError(t, err)
				require.Greater(t, ts, last)
				last = ts + uint64(n) - 1
			}
			phys, logical := tso.ParseTS(ts)
			require.Equal(t, start.UnixMilli()+tc.wantPhysOffset, phys.UnixMilli())
			require.Equal(t, tc.wantLogical, logical)
		})
	}

	t.Run("frozen clock, many single calls", func(t *testing.T) {
		clock := newFakeClock(start)
		a := newAllocator(t, openKV(t), clock.config("ts"))
		var prev uint64
		for range 3*tso.MaxLogical + 10 {
			ts, err := a.Now(ctx)
			require.NoError(t, err)
			if ts <= prev {
				require.Greater(t, ts, prev)
			}
			prev = ts
		}
		phys, _ := tso.ParseTS(prev)
		require.Equal(t, start.UnixMilli()+3, phys.UnixMilli())
	})
}

func TestClockBackwards(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	a := newAllocator(t, openKV(t), clock.config("ts"))
	before, err := a.Now(ctx)
	require.NoError(t, err)

	clock.Add(-time.Hour)
	after, err := a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, before+1, after, "keeps the last physical and counts logically")
}

func TestConcurrentMonotonic(t *testing.T) {
	ctx := context.Background()
	const workers, perWorker = 8, 10_000
	a := newAllocator(t, openKV(t), tso.Config{Key: "ts"}) // real clock

	results := make([][]uint64, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]uint64, 0, perWorker)
			for i := range perWorker {
				ts, err := a.Allocate(ctx, uint32(1+i%3))
				if err != nil {
					errs <- err
					return
				}
				out = append(out, ts)
			}
			results[w] = out
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	seen := make(map[uint64]struct{}, workers*perWorker)
	for w, out := range results {
		require.Len(t, out, perWorker)
		for i, ts := range out {
			if i > 0 && ts <= out[i-1] {
				require.Greater(t, ts, out[i-1], "worker %d not monotonic at %d", w, i)
			}
			n := uint64(1 + i%3)
			for k := range n {
				if _, dup := seen[ts+k]; dup {
					require.Failf(t, "duplicate", "timestamp %d issued twice", ts+k)
				}
				seen[ts+k] = struct{}{}
			}
		}
	}
}

func TestRestartMonotonic(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		shift time.Duration // clock change between the two runs
	}{
		{name: "clock forward", shift: time.Minute},
		{name: "same clock", shift: 0},
		{name: "clock backwards a little", shift: -time.Second},
		{name: "clock backwards a lot", shift: -23 * time.Hour}, // within DefaultMaxAhead
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := openKV(t)
			clock := newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			a := newAllocator(t, kv, clock.config(tso.IDKey))
			var last uint64
			for range 100 {
				ts, err := a.Now(ctx)
				require.NoError(t, err)
				last = ts
			}
			big, err := a.Allocate(ctx, 1000)
			require.NoError(t, err)
			last = big + 999

			clock.Add(tc.shift)
			b := newAllocator(t, kv, clock.config(tso.IDKey))
			ts, err := b.Now(ctx)
			require.NoError(t, err)
			require.Greater(t, ts, last)
			id, err := b.AllocateIDs(ctx, 5)
			require.NoError(t, err)
			require.Greater(t, id, int64(ts))
		})
	}
}

func TestWindowPersistence(t *testing.T) {
	ctx := context.Background()
	kv := openKV(t)
	store := &countingStore{Store: kv}
	clock := newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cfg := clock.config("ts")
	cfg.SaveInterval = 3 * time.Second
	a := newAllocator(t, store, cfg)

	_, err := kv.Get(ctx, "ts")
	require.ErrorIs(t, err, metastore.ErrNotFound, "nothing saved before the first allocation")

	start := clock.Ms()
	_, err = a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), store.txns.Load())
	require.Equal(t, start+3000, storedBound(t, kv, "ts"))

	// Within the window: no I/O.
	for range 29 {
		clock.Add(100 * time.Millisecond)
		_, err := a.Now(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, start+2900, clock.Ms())
	require.Equal(t, int64(1), store.txns.Load())

	// At the bound, still inside; one ms past it, a new window is saved.
	clock.Add(100 * time.Millisecond)
	_, err = a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), store.txns.Load())
	clock.Add(time.Millisecond)
	ts, err := a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), store.txns.Load())
	require.Equal(t, clock.Ms()+3000, storedBound(t, kv, "ts"))

	// Every timestamp issued so far is within the saved bound.
	phys, _ := tso.ParseTS(ts)
	require.LessOrEqual(t, phys.UnixMilli(), storedBound(t, kv, "ts"))

	// A failed save fails the call and changes nothing; a retry succeeds.
	clock.Add(10 * time.Second)
	store.fail.Store(true)
	_, err = a.Now(ctx)
	require.ErrorIs(t, err, errInjected)
	store.fail.Store(false)
	ts2, err := a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, tso.ComposeTS(clock.Ms(), 0), ts2)
}

func TestFencing(t *testing.T) {
	ctx := context.Background()
	kv := openKV(t)
	clock := newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	old := newAllocator(t, kv, clock.config("ts"))
	_, err := old.Now(ctx)
	require.NoError(t, err)

	replacement := newAllocator(t, kv, clock.config("ts"))
	newTS, err := replacement.Now(ctx)
	require.NoError(t, err)

	clock.Add(time.Minute) // force the old allocator to save
	_, err = old.Now(ctx)
	require.ErrorIs(t, err, tso.ErrFenced)

	ts, err := replacement.Now(ctx)
	require.NoError(t, err)
	require.Greater(t, ts, newTS)
}

func TestCorruptWindow(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		value []byte
	}{
		{name: "short", value: []byte{1, 2, 3}},
		{name: "empty", value: []byte{}},
		{name: "negative", value: binary.BigEndian.AppendUint64(nil, 1<<63)},
		// A window saved a few ms ahead, with one high bit flipped.
		{name: "bit 62 flipped", value: binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMilli()+3000)|1<<62)},
		{name: "bit 45 flipped", value: binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMilli()+3000)|1<<45)},
		{name: "bit 41 flipped", value: binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMilli()+3000)^1<<41)},
		{name: "25h ahead of the clock", value: binary.BigEndian.AppendUint64(nil, uint64(time.Now().Add(25*time.Hour).UnixMilli()))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, key := range []string{"tso/" + tso.TimestampKey, "tso/" + tso.IDKey} {
				kv := openKV(t)
				require.NoError(t, kv.Txn(ctx, metastore.Put(key, tc.value)))
				_, err := tso.New(ctx, kv, tso.Config{Key: key}, nil)
				require.ErrorIs(t, err, tso.ErrCorrupt)
				require.ErrorContains(t, err, key)
			}
		})
	}
}

func TestWindowAheadWithinLimit(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	kv := openKV(t)
	// The clock was set back by an hour: the saved window is an hour ahead.
	ahead := clock.Ms() + time.Hour.Milliseconds()
	require.NoError(t, kv.Txn(ctx, metastore.Put("ts", binary.BigEndian.AppendUint64(nil, uint64(ahead)))))
	a := newAllocator(t, kv, clock.config("ts"))
	ts, err := a.Now(ctx)
	require.NoError(t, err)
	physical, _ := tso.ParseTS(ts)
	require.Greater(t, physical.UnixMilli(), ahead)

	// A smaller MaxAhead refuses the same window.
	cfg := clock.config("ts")
	cfg.MaxAhead = 30 * time.Minute
	_, err = tso.New(ctx, kv, cfg, nil)
	require.ErrorIs(t, err, tso.ErrCorrupt)
}

// TestNoOverflowingTimestamp runs the clock to the end of the 45-bit
// physical range: every timestamp and ID handed out fits an int64, and past
// the end Allocate fails instead of wrapping.
func TestNoOverflowingTimestamp(t *testing.T) {
	ctx := context.Background()
	const last = 1<<(63-tso.LogicalBits) - 1 // the last physical ms that fits
	clock := newFakeClock(time.UnixMilli(last - 1))
	a := newAllocator(t, openKV(t), clock.config("ids"))
	for i := 0; i < 8; i++ {
		id, err := a.AllocateIDs(ctx, tso.MaxLogical/4)
		require.NoError(t, err)
		require.Positive(t, id)
	}
	_, err := a.AllocateIDs(ctx, tso.MaxLogical/4)
	require.ErrorIs(t, err, tso.ErrExhausted)
	_, err = a.Allocate(ctx, 1)
	require.ErrorIs(t, err, tso.ErrExhausted)
	clock.Add(time.Hour)
	_, err = a.Allocate(ctx, 1)
	require.ErrorIs(t, err, tso.ErrExhausted)
}

func BenchmarkAllocate(b *testing.B) {
	ctx := context.Background()
	a := newAllocator(b, openKV(b), tso.Config{Key: "ts"})
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.Now(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := a.Now(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
