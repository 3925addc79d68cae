//go:build linux

package diskann

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// BenchmarkDiskANN builds an index over DISKANN_BENCH_N (default 200000)
// clustered 128-dimensional vectors at Milvus's defaults, writes it to a
// file and loads it, then searches 200 queries at search_list 100 (k 10)
// per iteration. It reports the build time, recall@10 against exact
// search, the CPU time per query, the heap the loaded index holds (Go heap
// in use after loading minus before, and MemoryBytes) against the raw
// vectors' size, and the bytes of records left on disk.
//
//	DISKANN_BENCH_N=200000 go test ./internal/index/diskann -run '^$' -bench DiskANN -benchtime 3x -timeout 60m
func BenchmarkDiskANN(b *testing.B) {
	n := 200000
	if s := os.Getenv("DISKANN_BENCH_N"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(b, err)
		n = v
	}
	const dim, queries, k = 128, 200, 10
	data := clustered(11, n, dim, 100)
	qs := clustered(11, queries, dim, 100)

	start := time.Now()
	built, err := Build(context.Background(), data, dim, index.L2, Defaults())
	require.NoError(b, err)
	buildTime := time.Since(start)
	path := filepath.Join(b.TempDir(), "DISKANN")
	f, err := os.Create(path)
	require.NoError(b, err)
	require.NoError(b, built.Marshal(f))
	require.NoError(b, f.Close())
	built = nil //nolint:ineffassign,wastedassign // let the build's memory go before measuring the load

	heapBefore := heapInUse()
	f, err = os.Open(path)
	require.NoError(b, err)
	b.Cleanup(func() { _ = f.Close() })
	st, err := f.Stat()
	require.NoError(b, err)
	x, err := Open(f, st.Size())
	require.NoError(b, err)
	heap := heapInUse() - heapBefore

	want := make([][]index.Hit, queries)
	for i := range queries {
		want[i] = exactTopK(data, dim, qs[i*dim:(i+1)*dim], k, index.L2, nil)
	}
	var recall float64
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		recall = 0
		for i := range queries {
			got, err := x.Search(qs[i*dim:(i+1)*dim], k, index.SearchParams{Ef: DefaultSearchList}, nil)
			require.NoError(b, err)
			recall += indextest.Recall(got, want[i])
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	raw := float64(n * dim * 4)
	b.ReportMetric(recall/queries, "recall@10")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*queries), "cpu-µs/query")
	b.ReportMetric(buildTime.Seconds(), "build-s")
	b.ReportMetric(float64(heap)/raw, "heap/raw")
	b.ReportMetric(float64(x.MemoryBytes())/raw, "index-mem/raw")
	b.ReportMetric(float64(x.DiskBytes())/(1<<20), "records-MiB")
	runtime.KeepAlive(x)
}

// heapInUse returns the Go heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
