package rabitq

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/indextest"
	"github.com/strata-db/strata/internal/index/quant"
)

// clustered returns n rows of dimension dim around 16 Gaussian centres,
// spread within their cluster along 8 latent directions (plus 0.05 noise):
// embeddings have a low intrinsic dimension, and in i.i.d. Gaussian noise
// every row of a cluster is nearly equidistant from a query, which no
// 1-bit code ranks.
func clustered(seed uint64, n, dim int) []float32 {
	c := indextest.Gaussian(rand.New(rand.NewPCG(seed, 1)), 16, dim)
	basis := indextest.Gaussian(rand.New(rand.NewPCG(seed, 3)), 8, dim)
	rng := rand.New(rand.NewPCG(seed, 2))
	v := make([]float32, n*dim)
	for i := range n {
		k := rng.IntN(16)
		row := v[i*dim : (i+1)*dim]
		for j := range row {
			row[j] = c[k*dim+j] + 0.05*float32(rng.NormFloat64())
		}
		for l := range 8 {
			z := 0.3 * float32(rng.NormFloat64())
			for j, b := range basis[l*dim : (l+1)*dim] {
				row[j] += z * b
			}
		}
	}
	return v
}

// exact is the brute-force top k under m, scored as Milvus scores.
func exact(data []float32, dim int, m index.Metric, q []float32, k int) []index.Hit {
	qn := distance.Norm(q)
	return indextest.TopK(len(data)/dim, k, m, func(i int) (float32, bool) {
		row := data[i*dim : (i+1)*dim]
		switch m {
		case index.IP:
			return distance.Dot(q, row), true
		case index.Cosine:
			return distance.Dot(q, row) / (qn * distance.Norm(row)), true
		}
		return distance.L2Squared(q, row), true
	})
}

const tn, tdim, tq = 5000, 64, 50

func recall(t *testing.T, x *Index, data, queries []float32, m index.Metric, p index.SearchParams) float64 {
	t.Helper()
	var sum float64
	for i := range tq {
		q := queries[i*tdim : (i+1)*tdim]
		got, err := x.Search(q, 10, p, nil)
		require.NoError(t, err)
		require.Len(t, got, 10)
		indextest.RequireOrdered(t, got, m)
		sum += indextest.Recall(got, exact(data, tdim, m, q, 10))
	}
	return sum / tq
}

// TestRecall: with every list probed, 1-bit codes alone reach a floor of
// recall@10, and an FP32 refine store with refine_k 5 makes the search
// nearly exact with exact scores; fewer probes lose recall; a 4-bit query
// costs little.
func TestRecall(t *testing.T) {
	all := clustered(1, tn+tq, tdim) // queries from the same clusters
	data, queries := all[:tn*tdim], all[tn*tdim:]
	for _, m := range []index.Metric{index.L2, index.IP, index.Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			cfg := Config{Nlist: 16, Seed: 1, Workers: 2, RefineType: quant.FP32}
			x, err := Build(context.Background(), data, tdim, m, cfg)
			require.NoError(t, err)
			full := recall(t, x, data, queries, m, index.SearchParams{Nprobe: 16})
			q4 := recall(t, x, data, queries, m, index.SearchParams{Nprobe: 16, QueryBits: 4})

			cfg.Refine = true
			r, err := Build(context.Background(), data, tdim, m, cfg)
			require.NoError(t, err)
			refined := recall(t, r, data, queries, m, index.SearchParams{Nprobe: 16, RefineK: 5})
			one := recall(t, r, data, queries, m, index.SearchParams{Nprobe: 1, RefineK: 5})
			t.Logf("%v recall@10 all lists: %.3f (4-bit query %.3f), FP32 refine refine_k 5: %.3f, nprobe 1: %.3f", m, full, q4, refined, one)
			require.GreaterOrEqual(t, full, 0.7)
			require.GreaterOrEqual(t, q4, full-0.1)
			require.GreaterOrEqual(t, refined, 0.99)
			require.LessOrEqual(t, one, refined)
			require.Nil(t, x.RawVectors())
			if m != index.Cosine {
				require.Equal(t, data, r.RawVectors(), "an FP32 refine store holds the vectors bit for bit")
			} else {
				require.Nil(t, r.RawVectors())
			}
			q := queries[:tdim]
			got, err := r.Search(q, 5, index.SearchParams{Nprobe: 16, RefineK: 5}, nil)
			require.NoError(t, err)
			for _, h := range got {
				e := exact(data[int(h.Row)*tdim:(int(h.Row)+1)*tdim], tdim, m, q, 1)
				require.InDelta(t, e[0].Score, h.Score, 1e-3*(1+float64(max(e[0].Score, -e[0].Score))))
			}
		})
	}
}

// TestFilteredAndSmall: a filter admitting few rows still returns k of
// them (lists beyond nprobe are scanned), nlist above the rows builds, k
// above the rows returns every row, and bad parameters are refused.
func TestFilteredAndSmall(t *testing.T) {
	data := clustered(3, 500, 8)
	x, err := Build(context.Background(), data, 8, index.L2, Config{Nlist: 32, Seed: 1, Refine: true, RefineType: quant.SQ8})
	require.NoError(t, err)
	allowed := make([]bool, 500)
	for i := range allowed {
		allowed[i] = i%50 == 0
	}
	got, err := x.Search(data[:8], 10, index.SearchParams{Nprobe: 1}, allowed)
	require.NoError(t, err)
	require.Len(t, got, 10)
	for _, h := range got {
		require.True(t, allowed[h.Row])
	}
	small, err := Build(context.Background(), data[:5*8], 8, index.IP, Config{Nlist: 16, Seed: 1})
	require.NoError(t, err)
	got, err = small.Search(data[:8], 10, index.SearchParams{Nprobe: 100}, nil)
	require.NoError(t, err)
	require.Len(t, got, 5)
	_, err = x.Search(data[:8], 10, index.SearchParams{QueryBits: 9}, nil)
	require.ErrorContains(t, err, "param 'rbq_bits_query' (9) should be in range [0, 8]")
	_, err = x.Search(data[:7], 10, index.SearchParams{}, nil)
	require.Error(t, err)
}

// TestMarshalRoundTrip: every refine encoding and metric reads back to an
// index answering identically and writing the same bytes; damage is an
// error wrapping ErrCorrupt, never a panic.
func TestMarshalRoundTrip(t *testing.T) {
	data := clustered(4, 400, 12)
	for _, rt := range []int{-1, int(quant.FP32), int(quant.FP16), int(quant.BF16), int(quant.SQ8), int(quant.SQ6)} {
		for _, m := range []index.Metric{index.L2, index.IP, index.Cosine} {
			t.Run(fmt.Sprintf("%d/%v", rt, m), func(t *testing.T) {
				cfg := Config{Nlist: 8, Seed: 2, RefineType: quant.FP32}
				if rt >= 0 {
					cfg.Refine, cfg.RefineType = true, quant.Kind(rt)
				}
				x, err := Build(context.Background(), data, 12, m, cfg)
				require.NoError(t, err)
				b := indextest.Bytes(t, x)
				back, err := Unmarshal(bytesReader(b))
				require.NoError(t, err)
				require.Equal(t, x.Config(), back.Config())
				for i := range 10 {
					q := data[i*12 : (i+1)*12]
					want, err := x.Search(q, 5, index.SearchParams{Nprobe: 3, RefineK: 2}, nil)
					require.NoError(t, err)
					got, err := back.Search(q, 5, index.SearchParams{Nprobe: 3, RefineK: 2}, nil)
					require.NoError(t, err)
					require.Equal(t, want, got)
				}
				require.Equal(t, b, indextest.Bytes(t, back))
			})
		}
	}
	x, err := Build(context.Background(), data[:30*12], 12, index.IP, Config{Nlist: 3, Seed: 2, Workers: 1, Refine: true, RefineType: quant.SQ6})
	require.NoError(t, err)
	indextest.RequireRejects(t, indextest.Bytes(t, x), ErrCorrupt, indextest.FromReader(Unmarshal))
}

func TestParseParams(t *testing.T) {
	cfg, err := ParseParams(map[string]string{})
	require.NoError(t, err)
	require.Equal(t, Defaults(), cfg)
	cfg, err = ParseParams(map[string]string{"nlist": "64", "refine": "TRUE", "refine_type": "sq6"})
	require.NoError(t, err)
	require.Equal(t, Config{Nlist: 64, Refine: true, RefineType: quant.SQ6, Seed: 42}, cfg)
	for params, want := range map[string]map[string]string{
		"param 'nlist' (65537) should be in range [1, 65536]":                                {"nlist": "65537"},
		"param 'nlist' (-1) should be in range [1, 65536]":                                   {"nlist": "-1"},
		"param 'nlist' (128.0) should be an integer: wrong data type in json":                {"nlist": "128.0"},
		"invalid integer value, key: 'nlist', value: 'True'":                                 {"nlist": "True"},
		"invalid integer value, key: 'nlist', value: '[128]'":                                {"nlist": "[128]"},
		"invalid refine type : PQ, optional types are [sq6, sq8, fp16, bf16, fp32, flat]":    {"refine_type": "PQ"},
		"invalid refine type :  SQ8 , optional types are [sq6, sq8, fp16, bf16, fp32, flat]": {"refine_type": " SQ8 "},
		"invalid refine type : Sq8.0, optional types are [sq6, sq8, fp16, bf16, fp32, flat]": {"refine_type": "Sq8.0"},
		"Type conflict in json: param 'refine' (\"1\") should be a boolean":                  {"refine": "1"},
	} {
		_, err := ParseParams(want)
		require.ErrorContains(t, err, params)
	}
}

// TestMarshalGolden pins the file format with a small L2 index over small
// integers (the rotation and codes are computed in float64 and pure Go).
func TestMarshalGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]float32, 120*8)
	for i := range data {
		data[i] = float32(rng.IntN(9) - 4)
	}
	x, err := Build(context.Background(), data, 8, index.L2, Config{Nlist: 4, Seed: 3, Workers: 1, Refine: true, RefineType: quant.FP16})
	require.NoError(t, err)
	back := indextest.MarshalGolden(t, "l2.golden", x, indextest.FromReader(Unmarshal))
	require.Equal(t, 120, back.Len())
}
