package hnsw

import (
	"testing"

	"github.com/strata-db/strata/internal/index"
)

func BenchmarkBuild(b *testing.B) {
	data := lowRank(21, 10000, 64, 24)
	for _, w := range []int{1, 0} {
		name := "workers=1"
		if w == 0 {
			name = "workers=all"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_, err := Build(data, 64, index.L2, Config{M: 16, EfConstruction: 200, Seed: 1, Workers: w})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	f := getFixture(b, index.L2)
	for _, ef := range []int{16, 64} {
		b.Run("ef="+string(rune('0'+ef/10))+string(rune('0'+ef%10)), func(b *testing.B) {
			p := index.SearchParams{Ef: ef}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.idx.Search(f.query(i%fixQ), 10, p, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
