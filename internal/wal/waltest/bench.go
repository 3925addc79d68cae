package waltest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/wal"
)

// Logger returns a logger that sends warnings and errors to t's log.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// tbWriter sends log output to the test log.
type tbWriter struct{ t testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// BenchAppend runs the append benchmark shared by every implementation:
// records of 1 and 16 KiB, one record per AppendAsync call, with 1, 8 and 64
// concurrent appenders each waiting for its append to be durable. open
// returns a Log on fresh storage; BenchAppend closes it. It reports
// records/s and the p99 append latency.
func BenchAppend(b *testing.B, open func(b *testing.B) wal.Log) {
	for _, size := range []int{1 << 10, 16 << 10} {
		for _, appenders := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("size=%dKiB/appenders=%d", size>>10, appenders), func(b *testing.B) {
				benchAppend(b, open(b), size, appenders)
			})
		}
	}
}

func benchAppend(b *testing.B, l wal.Log, size, appenders int) {
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	rec := make([]byte, size)
	for i := range rec {
		rec[i] = byte(i * 31)
	}
	lat := make([][]time.Duration, appenders)
	var next atomic.Int64
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for g := range appenders {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if res := <-l.AppendAsync("bench", [][]byte{rec}); res.Err != nil {
					b.Error(res.Err)
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
}

// BenchReadTail measures reading back 1 KiB records written in calls of
// 1000 before the timer starts. It closes l.
func BenchReadTail(b *testing.B, l wal.Log) {
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	rec := make([]byte, 1<<10)
	for i := range rec {
		rec[i] = byte(i * 31)
	}
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
	defer func() { _ = r.Close() }()
	b.SetBytes(int64(len(rec)))
	b.ResetTimer()
	for range b.N {
		if _, err := r.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
