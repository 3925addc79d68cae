package local

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend measures durable (fsynced) append throughput and latency
// with several concurrent appenders, one record per call.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{1 << 10, 16 << 10} {
		for _, appenders := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("size=%dKiB/appenders=%d", size>>10, appenders), func(b *testing.B) {
				benchAppend(b, size, appenders)
			})
		}
	}
}

func benchAppend(b *testing.B, size, appenders int) {
	l, err := Open(Config{Dir: b.TempDir()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	rec := payload(1, size)
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
