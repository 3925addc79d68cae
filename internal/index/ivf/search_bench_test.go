package ivf

import (
	"testing"

	"github.com/strata-db/strata/internal/index"
)

// benchmarkSearch times one search of the fixture at nprobe.
func benchmarkSearch(b *testing.B, k Kind, m index.Metric, nprobe int) {
	f := fix()
	x := f.index(b, k, m)
	b.ResetTimer()
	for i := range b.N {
		_, _ = x.Search(f.query(i%fixQ), 10, index.SearchParams{Nprobe: nprobe}, nil)
	}
}

func BenchmarkSearchFlatL2(b *testing.B) { benchmarkSearch(b, Flat, index.L2, 16) }
func BenchmarkSearchSQ8L2(b *testing.B)  { benchmarkSearch(b, SQ8, index.L2, 16) }
func BenchmarkSearchPQL2(b *testing.B)   { benchmarkSearch(b, PQ, index.L2, 16) }
func BenchmarkSearchPQIP(b *testing.B)   { benchmarkSearch(b, PQ, index.IP, 16) }
