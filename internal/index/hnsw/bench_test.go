package hnsw

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
	"github.com/strata-db/strata/internal/index/quant"
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
				_, err := Build(context.Background(), data, 64, index.L2, Config{M: 16, EfConstruction: 200, Seed: 1, Workers: w})
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
		b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
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

// BenchmarkFilteredSearch compares the filtered graph walk with the exact
// scan at several allowed fractions, to check the plan cost model
// (the mode it would pick is in the name).
func BenchmarkFilteredSearch(b *testing.B) {
	f := getFixture(b, index.L2)
	const ef = 64
	for _, frac := range []float64{0.02, 0.05, 0.1, 0.2, 0.3, 0.5} {
		rng := rand.New(rand.NewPCG(1, 1))
		allowed := make([]bool, fixN)
		for i := range allowed {
			allowed[i] = rng.Float64() < frac
		}
		auto := [...]string{modeGraph: "graph", modeBrute: "brute"}[f.idx.plan(true, index.AllowedCount(allowed, fixN, index.SearchParams{}), ef)]
		for _, m := range []struct {
			name string
			mode searchMode
		}{{"graph", modeGraph}, {"brute", modeBrute}} {
			b.Run(fmt.Sprintf("allowed=%.0f%%/auto=%s/%s", frac*100, auto, m.name), func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, err := f.idx.search(f.query(i%fixQ), 10, index.SearchParams{Ef: ef}, allowed, m.mode); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// benchIndex is a 5000-row, 64-dimension index for the Marshal benchmarks.
func benchIndex(b *testing.B) *Index {
	b.Helper()
	x, err := Build(context.Background(), indextest.Gaussian(newRng(), 5000, 64), 64, index.L2, Config{M: 16, EfConstruction: 40, Seed: 1})
	require.NoError(b, err)
	return x
}

func BenchmarkMarshal(b *testing.B) { indextest.BenchmarkMarshal(b, benchIndex(b)) }

func BenchmarkUnmarshal(b *testing.B) {
	indextest.BenchmarkUnmarshal(b, benchIndex(b), indextest.FromReader(Unmarshal))
}

// BenchmarkSearchQuant searches the L2 fixture's data (20,000×64) through
// each encoding, without and with an FP32 refine store (refine_k 2), at
// ef 64, next to BenchmarkSearch's float32 graph.
func BenchmarkSearchQuant(b *testing.B) {
	f := getFixture(b, index.L2)
	for _, q := range []QuantConfig{
		{Kind: quant.SQ8},
		{Kind: quant.FP16},
		{Kind: quant.PQ, M: 16, Nbits: 8},
		{Kind: quant.SQ8, Refine: true, RefineType: quant.FP32},
		{Kind: quant.PQ, M: 16, Nbits: 8, Refine: true, RefineType: quant.FP32},
	} {
		x, err := Build(context.Background(), f.data, f.dim, index.L2, Config{M: 16, EfConstruction: 200, Seed: 7, Quant: q})
		require.NoError(b, err)
		name := q.Kind.String()
		if q.Refine {
			name += "+" + q.RefineType.String()
		}
		b.Run(name, func(b *testing.B) {
			p := index.SearchParams{Ef: 64, RefineK: 2}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, err := x.Search(f.query(i%fixQ), 10, p, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
