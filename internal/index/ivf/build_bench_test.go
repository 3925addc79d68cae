package ivf

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/strata-db/strata/internal/index"
)

// BenchmarkBuildFlat times an IVF_FLAT build of the fixture (20,000 × 64,
// nlist 128, 10 iterations) on one worker, which is k-means++ seeding, the
// blocked assignment passes and the grouping. Besides wall time it reports
// the building thread's CPU time (cpu-ns/op), which is steadier on a loaded
// machine.
func BenchmarkBuildFlat(b *testing.B) {
	f := fix()
	cfg := testConfig(Flat)
	cfg.Workers = 1
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	start := threadCPUNanos()
	for range b.N {
		if _, err := Build(context.Background(), f.data, fixDim, index.L2, cfg); err != nil {
			b.Fatal(err)
		}
	}
	if end := threadCPUNanos(); start > 0 && end > start {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkAssign times one k-means assignment pass of the IVF build's
// shape (16,384 Gaussian rows × 128 dimensions against 1,024 centroids,
// the blocked products and the argmin) on one worker and reports the
// calling thread's CPU time (cpu-ns/op) and its multiply-add rate.
func BenchmarkAssign(b *testing.B) {
	const n, dim, k = 16384, 128, 1024
	rng := rand.New(rand.NewPCG(7, 8))
	data, cent := make([]float32, n*dim), make([]float32, k*dim)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	for i := range cent {
		cent[i] = float32(rng.NormFloat64())
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	start := threadCPUNanos()
	for range b.N {
		assign(context.Background(), data, dim, cent, 1)
	}
	if end := threadCPUNanos(); start > 0 && end > start {
		cpu := float64(end-start) / float64(b.N)
		b.ReportMetric(cpu, "cpu-ns/op")
		b.ReportMetric(2*n*dim*k/cpu, "cpu-GFLOP/s")
	}
}
