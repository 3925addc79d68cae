package sparse

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkSearch measures single-threaded top-10 searches (one query per
// op, cycling over 100 queries) of the exact scan, SPARSE_INVERTED_INDEX and
// SPARSE_WAND over 100,000 rows, on two synthetic data sets: "zipf" (a few
// very common dimensions, exponential values, like learned sparse
// embeddings) and "uniform" (uniform dimensions and values). Report QPS as
// 1e9 / ns/op.
func BenchmarkSearch(b *testing.B) {
	const n, vocab = 100000, 30000
	for _, ds := range []struct {
		name string
		gen  func(seed uint64, n, vocab, nnz int) [][]byte
	}{{"zipf", synth}, {"uniform", uniform}} {
		rows := ds.gen(21, n, vocab, 60)
		queries := make([]Vector, 100)
		for i, qb := range ds.gen(22, len(queries), vocab, 20) {
			queries[i] = Decode(qb)
		}
		b.Run(fmt.Sprintf("%s/exact", ds.name), func(b *testing.B) {
			dec := make([]Vector, len(rows))
			for i, r := range rows {
				dec[i] = Decode(r)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := queries[i%len(queries)]
				top := newTopK(10)
				for r, v := range dec {
					if s := Dot(q, v); s > 0 {
						top.offer(uint32(r), s)
					}
				}
				_ = top.sorted()
			}
		})
		for _, kind := range []Kind{Inverted, WAND} {
			x, err := Build(context.Background(), rows, BuildParams{Kind: kind})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s", ds.name, kind), func(b *testing.B) {
				runtime.GC() // the build's garbage is not the search's cost
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := x.Search(queries[i%len(queries)], 10, SearchParams{}, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
