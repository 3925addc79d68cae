package local

import (
	"context"
	"testing"

	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/waltest"
)

// BenchmarkAppend measures durable (fsynced) append throughput and latency
// with several concurrent appenders, one record per call (waltest.BenchAppend).
func BenchmarkAppend(b *testing.B) {
	waltest.BenchAppend(b, func(b *testing.B) wal.Log {
		l, err := Open(Config{Dir: b.TempDir()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return l
	})
}

// BenchmarkReadTail measures reading back 1 KiB records from the page cache.
func BenchmarkReadTail(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir(), SegmentSize: 8 << 20}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	rec := payload(1, 1<<10)
	batch := make([][]byte, 1000)
	for i := range batch {
		batch[i] = rec
	}
	for written := 0; written < b.N; written += len(batch) {
		if res := <-l.AppendAsync("bench", batch); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
	ctx := context.Background()
	r, err := l.Read(ctx, "bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.SetBytes(int64(len(rec)))
	b.ResetTimer()
	for range b.N {
		if _, err := r.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
