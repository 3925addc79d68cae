package querynode_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/stacktest"
)

// hookedTicker is the stack's real ticker, which runs a hook once, after
// the next tick, with the tick's timestamp: a read's tick returns only
// when the hook is done.
type hookedTicker struct {
	querynode.Ticker
	mu   sync.Mutex
	hook func(ts uint64)
}

// afterNextTick sets the hook.
func (h *hookedTicker) afterNextTick(hook func(ts uint64)) {
	h.mu.Lock()
	h.hook = hook
	h.mu.Unlock()
}

// Tick ticks the pchannel, then runs the pending hook.
func (h *hookedTicker) Tick(ctx context.Context, pchannel string) (uint64, error) {
	ts, err := h.Ticker.Tick(ctx, pchannel)
	h.mu.Lock()
	hook := h.hook
	h.hook = nil
	h.mu.Unlock()
	if hook != nil && err == nil {
		hook(ts)
	}
	return ts, err
}

// A read whose collection is released after it waited for its timestamp
// but before it took the segments (a query coordinator releasing a node's
// shards once reads switched to another node, issue 18) fails with "collection not
// loaded", which the coordinator retries on the new placement: it is never
// answered from the delegators that stopped, whose segments are gone (it
// used to answer with no hits, or the hits of the vchannels left).
func TestReadOfAStoppedDelegatorFails(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 30)
	s.Flush()
	s.Insert(30, 50)
	ticker := &hookedTicker{Ticker: s.Writer()}
	cfg := querynode.Defaults()
	cfg.Mmap.Dir = t.TempDir()
	qn := querynode.New(cfg, s.Log, s.Objects, s.Data, s.Root, ticker, nil, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { require.NoError(t, qn.Close()) })
	ctx := context.Background()

	reads := map[string]func() (int64, error){
		"search": func() (int64, error) {
			res, err := qn.Search(ctx, &plan.Search{
				Read:    plan.Read{CollectionID: s.CollectionID, Strong: true},
				FieldID: 101, Metric: "L2", Vectors: [][]float32{{0, 1}, {40, 1}}, TopK: 3,
			})
			if err != nil {
				return 0, err
			}
			return int64(len(res.Hits[0]) + len(res.Hits[1])), nil
		},
		"count": func() (int64, error) {
			res, err := qn.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: s.CollectionID, Strong: true}, CountOnly: true})
			if err != nil {
				return 0, err
			}
			return res.Count, nil
		},
	}
	want := map[string]int64{"search": 6, "count": 50}
	for name, read := range reads {
		require.NoError(t, qn.Load(ctx, s.CollectionID, nil, 0, nil))
		got, err := read()
		require.NoError(t, err, name)
		require.Equal(t, want[name], got, "%s of the loaded collection", name)

		ticker.afterNextTick(func(ts uint64) {
			loaded, err := querynode.WaitTSafe(ctx, qn, s.CollectionID, ts)
			require.NoError(t, err)
			require.True(t, loaded)
			qn.Release(s.CollectionID) // its delegators stop and drop their segments
		})
		got, err = read()
		require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "%s: %d rows or hits, err %v", name, got, err)
		require.ErrorContains(t, err, "the collection was released")
	}
}
