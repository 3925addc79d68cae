package ivf

import (
	"context"
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
