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

// BenchmarkBM25 measures single-threaded top-10 full-text searches over
// 60,000 documents of term frequencies (about 40 Zipf-distributed tokens
// each from 50,000 terms, like English text), with 2–6 term queries drawn
// mixing frequencies as natural-language queries do (one of the document's
// most common terms, the others its rarest): the statistics pass (Stats)
// and the search (SearchBM25). Report QPS as 1e9 / ns/op.
func BenchmarkBM25(b *testing.B) {
	rows := tfRows(31, 60000, 50000)
	x, err := Build(context.Background(), rows, BuildParams{Kind: Inverted})
	if err != nil {
		b.Fatal(err)
	}
	qrows := tfRows(32, 200, 50000)
	queries := make([]Vector, len(qrows))
	for i, qb := range qrows {
		v := Decode(qb)
		n := min(len(v.Indices), 2+i%5)
		lo := len(v.Indices) - n + 1
		queries[i] = idfWeighted(x, Vector{Indices: append([]uint32{v.Indices[0]}, v.Indices[lo:]...), Values: append([]float32{v.Values[0]}, v.Values[lo:]...)})
	}
	bm := BM25{K1: 1.2, B: 0.75}
	st := Stats{DF: make([]int64, 0)}
	if err := x.Stats(nil, nil, &st); err != nil {
		b.Fatal(err)
	}
	bm.Avgdl = float32(st.Avgdl())
	runtime.GC()
	b.Run("stats", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			q := queries[i%len(queries)]
			s := Stats{DF: make([]int64, len(q.Indices))}
			if err := x.Stats(q.Indices, nil, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := x.SearchBM25(queries[i%len(queries)], 10, bm, SearchParams{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// idfWeighted weighs a query's term frequencies by their IDF over x, as the
// query node does.
func idfWeighted(x *Index, q Vector) Vector {
	st := Stats{DF: make([]int64, len(q.Indices))}
	if err := x.Stats(q.Indices, nil, &st); err != nil {
		panic(err)
	}
	w := Vector{Indices: q.Indices, Values: make([]float32, len(q.Values))}
	for i, df := range st.DF {
		w.Values[i] = q.Values[i] * float32(st.IDF(df))
	}
	return w
}
