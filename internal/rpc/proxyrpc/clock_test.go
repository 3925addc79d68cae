package proxyrpc_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/rpc/proxyrpc"
)

// oracle is a monotonic counter standing for the coordinator's oracle,
// counting its calls; each call takes a moment, so requests pile up.
type oracle struct {
	next  atomic.Uint64
	calls atomic.Int64
	fail  atomic.Bool
}

func (o *oracle) allocate(_ context.Context, n uint32) (uint64, error) {
	o.calls.Add(1)
	time.Sleep(2 * time.Millisecond)
	if o.fail.Load() {
		return 0, errors.New("coordinator unreachable")
	}
	return o.next.Add(uint64(n)) - uint64(n) + 1, nil
}

// Concurrent timestamp requests share RPCs, every range is one the oracle
// issued and no two overlap.
func TestTimestampsCoalesce(t *testing.T) {
	o := &oracle{}
	a := proxyrpc.NewTimestamps(o.allocate)
	const callers, each = 32, 20
	got := make([][]uint64, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ts, err := a.Allocate(context.Background(), 2)
				if err != nil {
					errs[c] = err
					return
				}
				got[c] = append(got[c], ts)
			}
		}()
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for c := range callers {
		require.NoError(t, errs[c])
		var last uint64
		for _, ts := range got[c] {
			require.Greater(t, ts, last, "one caller's timestamps grow")
			last = ts
			for _, x := range []uint64{ts, ts + 1} {
				require.False(t, seen[x], "timestamp %d handed out twice", x)
				seen[x] = true
			}
		}
	}
	require.Len(t, seen, callers*each*2)
	require.LessOrEqual(t, o.next.Load(), uint64(callers*each*2), "no timestamp fetched ahead")
	require.Less(t, o.calls.Load(), int64(callers*each), "requests were coalesced")

	// A failed fetch fails its requests; the next one fetches again.
	o.fail.Store(true)
	_, err := a.Allocate(context.Background(), 1)
	require.Error(t, err)
	o.fail.Store(false)
	ts, err := a.Allocate(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, o.next.Load(), ts)
}

// A timestamp source that goes back is refused, never handed out.
func TestTimestampsNeverGoBack(t *testing.T) {
	var first atomic.Uint64
	first.Store(100)
	a := proxyrpc.NewTimestamps(func(context.Context, uint32) (uint64, error) { return first.Load(), nil })
	ts, err := a.Allocate(context.Background(), 5)
	require.NoError(t, err)
	require.EqualValues(t, 100, ts)
	first.Store(103) // overlaps what was handed out
	_, err = a.Allocate(context.Background(), 1)
	require.ErrorContains(t, err, "went back")
}

// IDs come from blocks: one RPC per block, ranges consecutive and unique.
func TestIDsFromBlocks(t *testing.T) {
	o := &oracle{}
	a := proxyrpc.NewIDs(o.allocate, 100)
	seen := map[uint64]bool{}
	for _, n := range []uint32{10, 50, 40, 1, 150, 3} {
		first, err := a.Allocate(context.Background(), n)
		require.NoError(t, err)
		for i := range uint64(n) {
			require.False(t, seen[first+i])
			seen[first+i] = true
		}
	}
	// 10+50+40 fill the first block, 1 opens the second, 150 does not fit
	// its rest and gets a block of its own (the rest is dropped), 3 opens
	// a fourth.
	require.EqualValues(t, 4, o.calls.Load())
	_, err := a.Allocate(context.Background(), 0)
	require.Error(t, err)
}
