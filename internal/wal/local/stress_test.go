package local

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTailWhileAppendingAndTruncating runs appenders, a tailing reader and
// a truncator concurrently over small segments (run it with -race).
func TestTailWhileAppendingAndTruncating(t *testing.T) {
	l, err := Open(Config{Dir: t.TempDir(), SegmentSize: 512}, testLogger(t))
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const appenders, per = 4, 300
	const total = appenders * per
	var wg sync.WaitGroup
	for g := range appenders {
		wg.Go(func() {
			for i := range per {
				rec := binary.LittleEndian.AppendUint64(nil, uint64(g<<32|i))
				if res := <-l.AppendAsync("ch", [][]byte{rec, rec}); res.Err != nil {
					t.Error(res.Err)
					return
				}
			}
		})
	}
	var readPos atomic.Int64
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		r, err := l.Read(ctx, "ch", 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer r.Close()
		last := map[uint64]int64{}
		for off := int64(0); off < 2*total; off++ {
			rec, err := r.Next(ctx)
			if err != nil {
				t.Errorf("offset %d: %v", off, err)
				return
			}
			if rec.Offset != off {
				t.Errorf("got offset %d, want %d", rec.Offset, off)
				return
			}
			v := binary.LittleEndian.Uint64(rec.Data)
			g, i := v>>32, int64(v&0xffffffff)
			// Each call's two copies are adjacent and calls of one
			// appender are in order.
			if prev, ok := last[g]; ok && i < prev {
				t.Errorf("appender %d went backwards: %d after %d", g, i, prev)
			}
			last[g] = i
			readPos.Store(off)
		}
	}()
	stop := make(chan struct{})
	truncDone := make(chan struct{})
	go func() {
		defer close(truncDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if err := l.Truncate(ctx, "ch", readPos.Load()-20); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	<-readDone
	close(stop)
	<-truncDone
	end, err := l.End(ctx, "ch")
	require.NoError(t, err)
	require.Equal(t, int64(2*total), end)
}

func TestTornTailAfterRollover(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), SegmentSize: 100}
	recs := make([][]byte, 10)
	for i := range recs {
		recs[i] = payload(i, 20) // 4 per segment: 0, 4, 8
	}
	writeRecords(t, cfg, recs)
	for _, tc := range []struct {
		name string
		size int64
		keep int
	}{
		{"Empty", 0, 8},
		{"HalfHeader", 4, 8},
		{"FirstWhole", 28, 9},
		{"SecondTorn", 28 + 27, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, cfg.Dir)
			require.NoError(t, os.Truncate(filepath.Join(dir, "ch", segmentName(8)), tc.size))
			checkRecovered(t, Config{Dir: dir, SegmentSize: 100}, recs[:tc.keep])
		})
	}
}
