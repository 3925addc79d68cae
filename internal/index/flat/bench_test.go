package flat

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/strata-db/strata/internal/cputime"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
)

// fmnistShape returns random data of the Fashion-MNIST training set's
// shape, 60,000 × 784 float32 (188 MB), and nq queries.
func fmnistShape(nq int) (data, queries []float32, dim int) {
	const n, d = 60000, 784
	r := rand.New(rand.NewPCG(5, 6))
	data = make([]float32, n*d)
	for i := range data {
		data[i] = float32(r.IntN(256))
	}
	queries = make([]float32, nq*d)
	for i := range queries {
		queries[i] = float32(r.IntN(256))
	}
	return data, queries, d
}

// cpuQPS reports queries per second of the benchmark thread's CPU time,
// which excludes time descheduled on a loaded machine, and the rows' read
// rate in GB/s of CPU time. run is timed with the goroutine locked to its
// thread.
func cpuQPS(b *testing.B, queries int, bytes int64, run func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := cputime.Thread()
	for b.Loop() {
		run()
	}
	cpu := (cputime.Thread() - t0).Seconds()
	b.ReportMetric(float64(queries*b.N)/b.Elapsed().Seconds(), "QPS")
	b.ReportMetric(float64(queries*b.N)/cpu, "cpu-QPS")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/cpu/1e9, "cpu-GB/s")
	}
}

// BenchmarkFMNIST measures single-query search (memory-bound: GB/s is the
// rate the rows are read at, to compare with BenchmarkStream) and batched
// search (compute-bound), reporting queries per second.
func BenchmarkFMNIST(b *testing.B) {
	data, queries, dim := fmnistShape(1000)
	bytes := int64(len(data) * 4)
	var sink float32
	b.Run("stream", func(b *testing.B) {
		cpuQPS(b, 1, bytes, func() { sink += distance.Sum(data) })
	})
	b.Run("single", func(b *testing.B) {
		i := 0
		cpuQPS(b, 1, bytes, func() {
			if _, err := Search(data, dim, index.L2, queries[i*dim:(i+1)*dim], 10, nil); err != nil {
				b.Fatal(err)
			}
			i = (i + 1) % 256
		})
	})
	for _, nq := range []int{16, 64, 256, 1000} {
		b.Run(fmt.Sprintf("batch/nq=%d", nq), func(b *testing.B) {
			cpuQPS(b, nq, 0, func() {
				if _, err := SearchBatch(data, dim, index.L2, queries[:nq*dim], 10, nil); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	_ = sink
}
