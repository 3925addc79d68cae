package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

// gatedSync blocks syncs of segment files until released and records every
// synced path.
type gatedSync struct {
	entered chan string
	release chan error
	open    atomic.Bool // when set, syncs pass without waiting
	mu      sync.Mutex
	synced  []string
}

func newGatedSync() *gatedSync {
	return &gatedSync{entered: make(chan string, 16), release: make(chan error)}
}

func (g *gatedSync) sync(f *os.File) error {
	if filepath.Ext(f.Name()) == segmentExt && !g.open.Load() {
		g.entered <- f.Name()
		if err := <-g.release; err != nil {
			return err
		}
	}
	g.mu.Lock()
	g.synced = append(g.synced, f.Name())
	g.mu.Unlock()
	return f.Sync()
}

func TestResultsOnlyAfterSync(t *testing.T) {
	g := newGatedSync()
	cfg := Config{Dir: t.TempDir(), sync: g.sync}
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	ctx := context.Background()

	r, err := l.Read(ctx, "ch", 0)
	require.NoError(t, err)
	defer r.Close()

	res := l.AppendAsync("ch", [][]byte{[]byte("one")})
	select {
	case <-g.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("sync not called")
	}
	// The record is written but its sync has not returned: it must be
	// invisible to the caller, to End and to readers.
	select {
	case <-res:
		t.Fatal("result delivered before sync returned")
	case <-time.After(30 * time.Millisecond):
	}
	end, err := l.End(ctx, "ch")
	require.NoError(t, err)
	require.Zero(t, end)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	_, err = r.Next(short)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)

	g.release <- nil
	got := <-res
	require.NoError(t, got.Err)
	require.Zero(t, got.Offset)
	rec, err := r.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, []byte("one"), rec.Data)

	g.mu.Lock()
	defer g.mu.Unlock()
	// The new pchannel directory and the new segment's entry were synced too.
	require.Contains(t, g.synced, cfg.Dir)
	require.Contains(t, g.synced, filepath.Join(cfg.Dir, "ch"))
}

// TestFailedSyncRecovers checks that a failed fsync fails its group, is
// reported, and that the pchannel then repairs its active segment and
// accepts appends again without a reopen, dropping only the failed group.
func TestFailedSyncRecovers(t *testing.T) {
	g := newGatedSync()
	l, err := Open(Config{Dir: t.TempDir(), sync: g.sync, RetryBackoff: 20 * time.Millisecond}, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()

	first := l.AppendAsync("ch", [][]byte{[]byte("a")})
	<-g.entered
	// Queue more appends while the first commit is syncing: they are
	// written by the next commit.
	second := l.AppendAsync("ch", [][]byte{[]byte("b")})
	g.release <- nil
	require.NoError(t, (<-first).Err)
	<-g.entered
	injected := errors.New("injected: disk gone")
	g.release <- injected
	res := <-second
	require.ErrorIs(t, res.Err, injected)

	// The failed record is never exposed, and the failure is reported.
	end, err := l.End(context.Background(), "ch")
	require.NoError(t, err)
	require.Equal(t, int64(1), end)
	probs := l.Problems()
	require.Len(t, probs, 1)
	require.Equal(t, "pchannel ch", probs[0].Subject)
	require.True(t, probs[0].WritesUnavailable)
	require.Contains(t, probs[0].Reason, "injected: disk gone")

	// Once syncs work again, appends resume at the durable end.
	g.open.Store(true)
	var got wal.AppendResult
	require.Eventually(t, func() bool {
		got = <-l.AppendAsync("ch", [][]byte{[]byte("c")})
		if got.Err != nil {
			require.ErrorIs(t, got.Err, injected, "while backing off, appends fail with the cause")
		}
		return got.Err == nil
	}, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, int64(1), got.Offset)
	require.Empty(t, l.Problems())
	recs, err := readAll(t, l, 0)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, []byte("a"), recs[0].Data)
	require.Equal(t, []byte("c"), recs[1].Data)
	// Other pchannels are unaffected.
	require.NoError(t, (<-l.AppendAsync("other", [][]byte{[]byte("x")})).Err)
}

func TestGroupCommit(t *testing.T) {
	var syncs atomic.Int64
	slow := func(f *os.File) error {
		syncs.Add(1)
		time.Sleep(2 * time.Millisecond)
		return f.Sync()
	}
	l, err := Open(Config{Dir: t.TempDir(), sync: slow}, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	const workers, per = 32, 10
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range per {
				if res := <-l.AppendAsync("ch", [][]byte{[]byte("r")}); res.Err != nil {
					t.Error(res.Err)
				}
			}
		})
	}
	wg.Wait()
	require.Less(t, syncs.Load(), int64(workers*per/4), "concurrent appends share fsyncs")
}

func TestCloseCompletesQueued(t *testing.T) {
	g := newGatedSync()
	l, err := Open(Config{Dir: t.TempDir(), sync: g.sync}, testLogger(t))
	require.NoError(t, err)
	first := l.AppendAsync("ch", [][]byte{[]byte("a")})
	<-g.entered
	queued := l.AppendAsync("ch", [][]byte{[]byte("b")})
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	// Close waits for the writer, which drains the queue.
	g.release <- nil
	<-g.entered
	g.release <- nil
	require.NoError(t, <-closed)
	require.NoError(t, (<-first).Err)
	res := <-queued
	if res.Err != nil {
		require.ErrorIs(t, res.Err, wal.ErrClosed)
	} else {
		require.Equal(t, int64(1), res.Offset)
	}
}

// TestLargeCallSyncsWithinBound checks that a call larger than
// MaxBatchBytes is fsynced inside, so that the unsynced bytes of a segment
// never exceed MaxBatchBytes (or one larger frame), which the repair rule
// relies on.
func TestLargeCallSyncsWithinBound(t *testing.T) {
	var mu sync.Mutex
	var unsyncedAt []int64 // file size minus the size at the previous sync, at each sync
	last := int64(0)
	record := func(f *os.File) error {
		if filepath.Ext(f.Name()) == segmentExt {
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			mu.Lock()
			unsyncedAt = append(unsyncedAt, fi.Size()-last)
			last = fi.Size()
			mu.Unlock()
		}
		return f.Sync()
	}
	l, err := Open(Config{Dir: t.TempDir(), MaxBatchBytes: 64, sync: record}, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	recs := make([][]byte, 10)
	for i := range recs {
		recs[i] = payload(i, 20) // 28 framed bytes
	}
	recs = append(recs, payload(10, 100)) // one frame larger than the bound
	require.NoError(t, (<-l.AppendAsync("ch", recs)).Err)
	mu.Lock()
	defer mu.Unlock()
	require.Greater(t, len(unsyncedAt), 5, "the call is fsynced inside")
	for i, n := range unsyncedAt {
		require.True(t, n <= 64 || n == headerSize+100, "sync %d covered %d unsynced bytes", i, n)
	}
}
