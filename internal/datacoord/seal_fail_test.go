package datacoord

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/wal"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

// failingLog is the real local WAL with a switch that fails the next append
// to one pchannel, as a full disk would (wal/local reports such an append
// failed and cuts away whatever it wrote).
type failingLog struct {
	*wallocal.Log
	mu     sync.Mutex
	failOn string
}

func (l *failingLog) failNext(pchannel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failOn = pchannel
}

func (l *failingLog) AppendAsync(pchannel string, records [][]byte) <-chan wal.AppendResult {
	l.mu.Lock()
	fail := l.failOn == pchannel
	if fail {
		l.failOn = ""
	}
	l.mu.Unlock()
	if fail {
		res := make(chan wal.AppendResult, 1)
		res <- wal.AppendResult{Err: errors.New("injected: no space left on device")}
		return res
	}
	return l.Log.AppendAsync(pchannel, records)
}

func (e *env) failingCoord(t *testing.T) (*Coordinator, *failingLog) {
	t.Helper()
	fl := &failingLog{Log: e.log}
	clock := &countingClock{}
	w := wal.NewWriter(fl, clock, wal.WriterConfig{}, nil)
	c, err := New(context.Background(), e.cfg, e.kv, e.ids, w, e.log, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	c.now = func() time.Time { return e.clock }
	return c, fl
}

// countingClock hands out increasing timestamps.
type countingClock struct {
	mu sync.Mutex
	ts uint64
}

func (c *countingClock) Allocate(context.Context, uint32) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ts += 1 << 18
	return c.ts, nil
}

// TestFailedFlushAppendUnseals: a Flush whose WAL append fails leaves no
// Flush message behind, so the segment it tried to seal is growing as
// before: it takes rows again, and the next Flush seals it. (It used to stay
// marked sealing: no rows, and never sealed until a restart.)
func TestFailedFlushAppendUnseals(t *testing.T) {
	e := newEnv(t)
	c, fl := e.failingCoord(t)
	ctx := context.Background()
	seg, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)

	fl.failNext(pch0)
	_, _, err = c.Flush(ctx, 100, []string{vch0})
	require.ErrorContains(t, err, "injected")
	require.Empty(t, e.messages(t, pch0), "nothing reached the WAL")

	again, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	require.Equal(t, seg, again, "the segment takes rows again")
	sealed, _, err := c.Flush(ctx, 100, []string{vch0})
	require.NoError(t, err)
	require.Equal(t, []int64{seg}, sealed, "a later Flush seals it")
	info, _ := segmentOf(t, c, seg)
	require.Equal(t, catalog.SegmentSealed, info.State)
	msgs := e.messages(t, pch0)
	require.Len(t, msgs, 1)
	ids, err := wal.DecodeFlush(msgs[0].Message.Payload)
	require.NoError(t, err)
	require.Equal(t, []int64{seg}, ids)
}

// TestPartlyFailedFlushFences: a Flush over two pchannels whose append
// fails on one of them may have left a Flush message on the other (here it
// did). Neither segment may take more rows (the data node drops rows that
// follow a Flush message), but both are sealed by the next Flush.
func TestPartlyFailedFlushFences(t *testing.T) {
	e := newEnv(t)
	c, fl := e.failingCoord(t)
	ctx := context.Background()
	s0, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	s1, err := c.AssignSegment(ctx, 100, 1, vch1, 1, 10)
	require.NoError(t, err)

	fl.failNext(pch1)
	_, _, err = c.Flush(ctx, 100, []string{vch0, vch1})
	require.ErrorContains(t, err, "injected")
	require.Len(t, e.messages(t, pch0), 1, "the Flush of vch0 is durable")
	require.Empty(t, e.messages(t, pch1))

	n0, err := c.AssignSegment(ctx, 100, 1, vch0, 1, 10)
	require.NoError(t, err)
	require.NotEqual(t, s0, n0, "a segment whose Flush may be in the WAL takes no rows")
	n1, err := c.AssignSegment(ctx, 100, 1, vch1, 1, 10)
	require.NoError(t, err)
	require.NotEqual(t, s1, n1, "nor one of the same failed batch")

	sealed, _, err := c.Flush(ctx, 100, []string{vch0, vch1})
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{s0, s1, n0, n1}, sealed, "the next Flush seals them all")
}
