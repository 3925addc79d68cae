package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

// mountTmpfs mounts a tmpfs of size bytes on a new temporary directory and
// unmounts it at the end of the test; it skips the test where mounting is
// not permitted (not root, no CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { require.NoError(t, syscall.Unmount(dir, 0)) })
	return dir
}

// fill writes a ballast file at path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			break
		}
	}
	require.NoError(t, f.Close())
}

// counterClock is a strictly increasing Clock for Writer tests.
type counterClock struct {
	mu   sync.Mutex
	last uint64
}

func (c *counterClock) Allocate(_ context.Context, n uint32) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.last + 1
	c.last += uint64(n)
	return ts, nil
}

// TestFullDiskRecovers fills a real file system under the WAL: appends (and
// the Writer's ticks) fail and Problems says so; once space is freed they
// succeed again without reopening the Log, and exactly the acknowledged
// records are read back, with no gap or duplicate, before and after a reopen.
func TestFullDiskRecovers(t *testing.T) {
	mnt := mountTmpfs(t, 512<<10)
	cfg := Config{Dir: filepath.Join(mnt, "wal"), SegmentSize: 8 << 10, RetryBackoff: 5 * time.Millisecond}
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	first := l
	t.Cleanup(func() { _ = first.Close() }) // idempotent; closed below
	w := wal.NewWriter(l, &counterClock{}, wal.WriterConfig{}, testLogger(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var acked [][]byte
	seq := 0
	appendOne := func() error {
		rec := []byte(fmt.Sprintf("record-%06d-", seq))
		rec = append(rec, payload(seq, 1000)...)
		seq++
		res := <-l.AppendAsync("ch", [][]byte{rec})
		if res.Err == nil {
			require.Equal(t, int64(len(acked)), res.Offset, "offsets stay dense")
			acked = append(acked, rec)
		}
		return res.Err
	}
	for range 10 {
		require.NoError(t, appendOne())
	}
	_, err = w.Tick(ctx, "ticks")
	require.NoError(t, err)

	ballast := filepath.Join(mnt, "ballast")
	fill(t, ballast)
	var failure error
	for range 200 { // the last pages of the active segment may still take a few records
		if failure = appendOne(); failure != nil {
			break
		}
	}
	require.ErrorIs(t, failure, syscall.ENOSPC)
	for range 5 {
		err := appendOne()
		require.ErrorIs(t, err, syscall.ENOSPC, "appends keep failing while the disk is full")
		time.Sleep(10 * time.Millisecond)
	}
	for range 1000 { // ticks are small: the page of their segment may still take some
		if _, err = w.Tick(ctx, "ticks"); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, syscall.ENOSPC, "ticks fail while the disk is full")
	probs := l.Problems()
	require.Len(t, probs, 2)
	for i, p := range probs {
		require.Equal(t, "wal", p.Component)
		require.Equal(t, []string{"pchannel ch", "pchannel ticks"}[i], p.Subject)
		require.True(t, p.WritesUnavailable)
		require.Contains(t, p.Reason, "no space left on device")
	}

	require.NoError(t, os.Remove(ballast))
	require.Eventually(t, func() bool { return appendOne() == nil }, 10*time.Second, 10*time.Millisecond,
		"appends resume once space is back, without a reopen")
	for range 40 { // across several segment rolls
		require.NoError(t, appendOne())
	}
	require.Eventually(t, func() bool { _, err := w.Tick(ctx, "ticks"); return err == nil }, 10*time.Second, 10*time.Millisecond,
		"the Writer's ticks recover too")
	require.Empty(t, l.Problems())

	check := func(l *Log) {
		t.Helper()
		got, err := readAll(t, l, 0)
		require.NoError(t, err)
		require.Len(t, got, len(acked), "exactly the acknowledged records")
		for i := range acked {
			require.Equal(t, acked[i], got[i].Data, "record %d", i)
		}
	}
	check(l)
	require.NoError(t, l.Close())
	l, err = Open(cfg, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	require.Empty(t, l.Problems(), "the WAL reopens clean")
	check(l)
}
