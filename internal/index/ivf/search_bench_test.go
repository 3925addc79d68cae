package ivf

import (
	"runtime"
	"testing"

	"github.com/strata-db/strata/internal/index"
)

// benchmarkSearch times one search of the fixture at nprobe. Besides wall
// time it reports the searching thread's CPU time per search (cpu-ns/op),
// which is far steadier than wall time on a loaded machine.
func benchmarkSearch(b *testing.B, k Kind, m index.Metric, nprobe int) {
	f := fix()
	x := f.index(b, k, m)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	start := threadCPUNanos()
	for i := range b.N {
		_, _ = x.Search(f.query(i%fixQ), 10, index.SearchParams{Nprobe: nprobe}, nil)
	}
	if end := threadCPUNanos(); start > 0 && end > start {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkSearchFlatL2(b *testing.B) { benchmarkSearch(b, Flat, index.L2, 16) }
func BenchmarkSearchFlatIP(b *testing.B) { benchmarkSearch(b, Flat, index.IP, 16) }
func BenchmarkSearchSQ8L2(b *testing.B)  { benchmarkSearch(b, SQ8, index.L2, 16) }
func BenchmarkSearchSQ8IP(b *testing.B)  { benchmarkSearch(b, SQ8, index.IP, 16) }
func BenchmarkSearchPQL2(b *testing.B)   { benchmarkSearch(b, PQ, index.L2, 16) }
func BenchmarkSearchPQIP(b *testing.B)   { benchmarkSearch(b, PQ, index.IP, 16) }
