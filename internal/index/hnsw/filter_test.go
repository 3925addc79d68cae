package hnsw

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

// TestFilteredSearchIsExact forces each search path (the plan's choice,
// the graph walk and the scan) on a small index with an ef large enough
// for the walk to reach every allowed row, and requires each filtered
// result to equal the exact filtered top k (the same rows in the same
// order; scores up to rounding) for every selectivity, for L2 and COSINE,
// with the allowed rows spread at random and in one block (a filter that
// correlates with insertion order). (IP is left out: inner product is not
// a distance, and a graph built on it can leave rows no walk reaches, with
// or without a filter.)
func TestFilteredSearchIsExact(t *testing.T) {
	const n, dim, k = 1500, 16, 10
	data := lowRank(31, n, dim, 8)
	queries := lowRank(32, 8, dim, 8)
	for _, m := range []index.Metric{index.L2, index.Cosine} {
		idx, err := Build(context.Background(), data, dim, m, Config{M: 8, EfConstruction: 100, Seed: 3})
		require.NoError(t, err)
		for _, pct := range []int{1, 10, 20, 50, 100} {
			for _, layout := range []string{"random", "block"} {
				rng := rand.New(rand.NewPCG(uint64(pct), 9))
				allowed := make([]bool, n)
				for i := range allowed {
					if layout == "random" {
						allowed[i] = rng.IntN(100) < pct
					} else {
						allowed[i] = i < n*pct/100
					}
				}
				for _, mode := range []struct {
					name string
					m    searchMode
				}{{"auto", modeAuto}, {"graph", modeGraph}, {"brute", modeBrute}} {
					t.Run(fmt.Sprintf("%s/%d%%/%s/%s", m, pct, layout, mode.name), func(t *testing.T) {
						for qi := range 8 {
							q := queries[qi*dim : (qi+1)*dim]
							got, err := idx.search(q, k, index.SearchParams{Ef: n}, allowed, mode.m)
							require.NoError(t, err)
							want := exact(data, dim, m, q, k, allowed)
							require.Len(t, got, len(want))
							for i := range want {
								require.Equal(t, want[i].Row, got[i].Row, "hit %d", i)
								require.InDelta(t, want[i].Score, got[i].Score, 1e-5, "hit %d", i)
							}
						}
					})
				}
			}
		}
	}
}

// TestPlan pins the cost model's choices: the scan when few rows are
// allowed (relative to what the walk would score), the walk otherwise.
func TestPlan(t *testing.T) {
	idx, err := New(4, index.L2, Config{M: 16, EfConstruction: 64})
	require.NoError(t, err)
	idx.n = 200_000
	for _, c := range []struct {
		filtered bool
		allowed  int
		ef       int
		want     searchMode
	}{
		{false, 200_000, 64, modeGraph},
		{true, 200_000, 64, modeGraph},
		{true, 50, 64, modeBrute},
		{true, 2_000, 64, modeBrute},
		{true, 6_000, 64, modeBrute},
		{true, 20_000, 64, modeGraph},
		{true, 40_000, 64, modeGraph},
		{true, 70_000, 64, modeGraph},
		{true, 100_000, 64, modeGraph},
		{true, 180_000, 64, modeGraph},
		{true, 20_000, 2_000, modeBrute},
	} {
		require.Equal(t, c.want, idx.plan(c.filtered, c.allowed, c.ef), "%+v", c)
	}
}
