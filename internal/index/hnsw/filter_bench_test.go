package hnsw

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/cputime"
	"github.com/strata-db/strata/internal/index"
)

// The clustered filtered-search benchmark's data: 200,000 × 128 vectors
// around 1,000 Gaussian centres (the data of docs/bench/filtered-search.md),
// a label row%100 per row, and an HNSW graph (M 16, efConstruction 64)
// cached in the temporary directory so that runs compare searches.
const (
	clRows, clDim, clCentres, clQueries = 200_000, 128, 1000, 100
)

var clFixture struct {
	once    sync.Once
	data    []float32
	queries [][]float32
	idx     *Index
	err     error
}

func clusteredFixture(b *testing.B) {
	f := &clFixture
	f.once.Do(func() {
		rng := rand.New(rand.NewPCG(7, 11))
		centres := make([]float32, clCentres*clDim)
		for i := range centres {
			centres[i] = rng.Float32() * 10
		}
		f.data = make([]float32, clRows*clDim)
		for r := range clRows {
			c := rng.IntN(clCentres)
			for d := range clDim {
				f.data[r*clDim+d] = centres[c*clDim+d] + float32(rng.NormFloat64())
			}
		}
		for range clQueries {
			q := make([]float32, clDim)
			c := rng.IntN(clCentres)
			for d := range q {
				q[d] = centres[c*clDim+d] + float32(rng.NormFloat64())
			}
			f.queries = append(f.queries, q)
		}
		cfg := Config{M: 16, EfConstruction: 64, Seed: 1}
		path := filepath.Join(os.TempDir(), fmt.Sprintf("strata-bench-filtered-%d-%d-m%d-ef%d.hnsw", clRows, clDim, cfg.M, cfg.EfConstruction))
		if fh, err := os.Open(path); err == nil {
			defer fh.Close()
			if x, err := Unmarshal(bufio.NewReader(fh)); err == nil && x.Len() == clRows {
				f.idx = x
				return
			}
		}
		if f.idx, f.err = Build(context.Background(), f.data, clDim, index.L2, cfg); f.err != nil {
			return
		}
		if fh, err := os.Create(path + ".tmp"); err == nil {
			w := bufio.NewWriter(fh)
			if f.idx.Marshal(w) == nil && w.Flush() == nil && fh.Close() == nil {
				_ = os.Rename(path+".tmp", path)
			}
		}
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
}

// BenchmarkFilteredClustered runs one top-10 query at ef 64 over the
// clustered 200k × 128 graph with a filter that keeps 1, 10, 20 or 50 % of
// the rows (label < p for label = row % 100), in the mode the cost model
// picks and in each mode forced, and reports the recall against the exact
// filtered top 10.
func BenchmarkFilteredClustered(b *testing.B) {
	clusteredFixture(b)
	f := &clFixture
	const k, ef = 10, 64
	for _, pct := range []int{1, 10, 20, 50} {
		allowed := make([]bool, clRows)
		for r := range allowed {
			allowed[r] = r%100 < pct
		}
		truth := make([][]index.Hit, len(f.queries))
		for i, q := range f.queries {
			hs, err := f.idx.search(q, k, index.SearchParams{Ef: ef}, allowed, modeBrute)
			if err != nil {
				b.Fatal(err)
			}
			truth[i] = hs
		}
		for _, m := range []struct {
			name string
			mode searchMode
		}{{"auto", modeAuto}, {"graph", modeGraph}, {"brute", modeBrute}} {
			b.Run(fmt.Sprintf("allowed=%d%%/%s", pct, m.name), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				found, i := 0, 0
				cpu := time.Duration(0)
				for b.Loop() {
					c0 := cputime.Thread()
					q := i % len(f.queries)
					hs, err := f.idx.search(f.queries[q], k, index.SearchParams{Ef: ef}, allowed, m.mode)
					cpu += cputime.Thread() - c0
					if err != nil {
						b.Fatal(err)
					}
					for _, h := range hs {
						if slices.ContainsFunc(truth[q], func(t index.Hit) bool { return t.Row == h.Row }) {
							found++
						}
					}
					i++
				}
				b.ReportMetric(float64(found)/float64(i*k), "recall")
				b.ReportMetric(float64(cpu.Microseconds())/float64(i), "cpu-µs/op")
			})
		}
	}
}
