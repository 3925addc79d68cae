package hnsw

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
	"github.com/strata-db/strata/internal/index/quant"
)

// clustered returns n vectors of dimension dim around 32 random centres
// (spread 1, noise 0.15 per dimension), with a per-dimension offset and
// scale so that the dimensions' ranges differ, as in real embeddings.
func clustered(seed uint64, n, dim int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	const centres = 32
	c := indextest.Gaussian(rand.New(rand.NewPCG(seed, 1)), centres, dim)
	v := make([]float32, n*dim)
	for i := range n {
		k := rng.IntN(centres)
		for j := range dim {
			scale := 1 + float32(j%5)
			v[i*dim+j] = scale*(c[k*dim+j]+0.15*float32(rng.NormFloat64())) + float32(j%3)
		}
	}
	return v
}

const quantN, quantDim, quantQ = 4000, 32, 100

// quantRecall returns the mean recall@10 of x at ef 64 (refine_k rk)
// against the exact top 10 of data, checking every result's order.
func quantRecall(t *testing.T, x *Index, data, queries []float32, m index.Metric, rk float64) float64 {
	t.Helper()
	var sum float64
	for i := range quantQ {
		q := queries[i*quantDim : (i+1)*quantDim]
		got, err := x.Search(q, 10, index.SearchParams{Ef: 64, RefineK: rk}, nil)
		require.NoError(t, err)
		require.Len(t, got, 10)
		indextest.RequireOrdered(t, got, m)
		sum += indextest.Recall(got, exact(data, quantDim, m, q, 10, nil))
	}
	return sum / quantQ
}

// TestQuantRecall checks recall@10 at ef 64 of every encoding against
// exact brute force on low-rank data (lowRank, where the float32 graph
// reaches about 0.97): above a floor, and within a margin of the float32
// index built the same way (the graph is built on the exact vectors, so
// quantization costs only distance accuracy). With an FP32 refine store
// and refine_k 4 the recall comes back to that of the float32 index and
// the scores are exact.
func TestQuantRecall(t *testing.T) {
	data := lowRank(11, quantN, quantDim, 8)
	queries := lowRank(11, quantQ, quantDim, 8)
	base := map[index.Metric]float64{}
	for _, tc := range []struct {
		metric index.Metric
		q      QuantConfig
		floor  float64 // without refine
	}{
		{index.L2, QuantConfig{Kind: quant.SQ8}, 0.9},
		{index.IP, QuantConfig{Kind: quant.SQ8}, 0.9},
		{index.Cosine, QuantConfig{Kind: quant.SQ8}, 0.9},
		{index.L2, QuantConfig{Kind: quant.SQ6}, 0.8},
		{index.L2, QuantConfig{Kind: quant.FP16}, 0.9},
		{index.Cosine, QuantConfig{Kind: quant.BF16}, 0.9},
		{index.L2, QuantConfig{Kind: quant.PQ, M: 8, Nbits: 8}, 0.4},
		{index.IP, QuantConfig{Kind: quant.PQ, M: 8, Nbits: 8}, 0.4},
		{index.Cosine, QuantConfig{Kind: quant.PQ, M: 16, Nbits: 6}, 0.4},
	} {
		t.Run(fmt.Sprintf("%v/%v", tc.metric, tc.q.Kind), func(t *testing.T) {
			cfg := Config{M: 16, EfConstruction: 100, Seed: 3, Workers: 2}
			if _, ok := base[tc.metric]; !ok {
				f, err := Build(context.Background(), data, quantDim, tc.metric, cfg)
				require.NoError(t, err)
				base[tc.metric] = quantRecall(t, f, data, queries, tc.metric, 0)
			}
			cfg.Quant = tc.q
			x, err := Build(context.Background(), data, quantDim, tc.metric, cfg)
			require.NoError(t, err)
			require.Nil(t, x.vecs, "a quantized index drops the float32 vectors")
			require.Nil(t, x.RawVectors())
			plain := quantRecall(t, x, data, queries, tc.metric, 0)

			cfg.Quant.Refine, cfg.Quant.RefineType = true, quant.FP32
			r, err := Build(context.Background(), data, quantDim, tc.metric, cfg)
			require.NoError(t, err)
			refined := quantRecall(t, r, data, queries, tc.metric, 4)
			t.Logf("%v %v recall@10 ef=64: %.3f, with quant.FP32 refine (refine_k 4) %.3f; float32 HNSW %.3f",
				tc.metric, tc.q.Kind, plain, refined, base[tc.metric])
			require.GreaterOrEqual(t, plain, tc.floor)
			require.GreaterOrEqual(t, refined, base[tc.metric]-0.02)
			// The two parallel builds may link a few nodes differently.
			require.GreaterOrEqual(t, refined, plain-0.01)
			if tc.q.Kind == quant.PQ {
				require.Greater(t, refined, plain+0.1, "refinement recovers what quant.PQ loses")
			}
			q := queries[:quantDim]
			got, err := r.Search(q, 5, index.SearchParams{RefineK: 4}, nil)
			require.NoError(t, err)
			for _, h := range got {
				e := exact(data[int(h.Row)*quantDim:(int(h.Row)+1)*quantDim], quantDim, tc.metric, q, 1, nil)
				require.InDelta(t, e[0].Score, h.Score, 1e-3*(1+float64(abs(e[0].Score))), "refined scores are exact")
			}
			if tc.metric != index.Cosine {
				require.Equal(t, data, r.RawVectors(), "an quant.FP32 refine store holds the vectors bit for bit")
			}
			require.Less(t, x.MemoryBytes(), r.MemoryBytes())
		})
	}
}

// TestQuantMemory: an SQ8 index holds a quarter of the vector bytes of a
// plain one, PQ less still.
func TestQuantMemory(t *testing.T) {
	data := clustered(1, 2000, 64)
	build := func(q QuantConfig) int64 {
		x, err := Build(context.Background(), data, 64, index.L2, Config{M: 8, EfConstruction: 40, Seed: 1, Workers: 2, Quant: q})
		require.NoError(t, err)
		return x.MemoryBytes()
	}
	plain, sq8, pq := build(QuantConfig{}), build(QuantConfig{Kind: quant.SQ8}), build(QuantConfig{Kind: quant.PQ, M: 8, Nbits: 8})
	vecBytes := int64(len(data) * 4)
	require.Greater(t, plain-sq8, vecBytes*3/4, "SQ8 saves at least 3/4 of the vector bytes")
	require.Less(t, pq, sq8)
}

// TestQuantFiltered: a filtered search over codes returns only allowed
// rows, k of them whenever k are allowed, through the graph walk and the
// exact scan alike.
func TestQuantFiltered(t *testing.T) {
	data := clustered(4, 3000, 16)
	x, err := Build(context.Background(), data, 16, index.L2,
		Config{M: 8, EfConstruction: 60, Seed: 1, Workers: 2, Quant: QuantConfig{Kind: quant.SQ8, Refine: true, RefineType: quant.FP16}})
	require.NoError(t, err)
	for _, every := range []int{2, 97} {
		allowed := make([]bool, x.Len())
		for i := range allowed {
			allowed[i] = i%every == 0
		}
		got, err := x.Search(data[:16], 10, index.SearchParams{RefineK: 2}, allowed)
		require.NoError(t, err)
		require.Len(t, got, 10)
		for _, h := range got {
			require.True(t, allowed[h.Row])
		}
	}
	require.Error(t, x.Add(context.Background(), data[:16]), "a quantized index takes no more rows")
}

// TestQuantMarshalRoundTrip: every encoding, with and without a refine
// store, reads back to an index that answers identically and writes the
// same bytes again.
func TestQuantMarshalRoundTrip(t *testing.T) {
	data := clustered(5, 600, 16)
	for _, q := range []QuantConfig{
		{Kind: quant.SQ8},
		{Kind: quant.SQ6, Refine: true, RefineType: quant.SQ8},
		{Kind: quant.FP16, Refine: true, RefineType: quant.FP32},
		{Kind: quant.BF16, Refine: true, RefineType: quant.BF16},
		{Kind: quant.PQ, M: 4, Nbits: 5, Refine: true, RefineType: quant.SQ6},
		{Kind: quant.PQ, M: 16, Nbits: 8},
	} {
		for _, m := range metrics {
			t.Run(fmt.Sprintf("%v/%v/%v", q.Kind, q.RefineType, m), func(t *testing.T) {
				x, err := Build(context.Background(), data, 16, m, Config{M: 6, EfConstruction: 30, Seed: 2, Workers: 1, Quant: q})
				require.NoError(t, err)
				b := indextest.Bytes(t, x)
				back, err := UnmarshalQuantized(bytes.NewReader(b))
				require.NoError(t, err)
				require.Equal(t, x.Quant(), back.Quant())
				for i := range 20 {
					qv := data[i*16 : (i+1)*16]
					want, err := x.Search(qv, 5, index.SearchParams{RefineK: 3}, nil)
					require.NoError(t, err)
					got, err := back.Search(qv, 5, index.SearchParams{RefineK: 3}, nil)
					require.NoError(t, err)
					require.Equal(t, want, got)
				}
				require.Equal(t, b, indextest.Bytes(t, back))
				_, err = Unmarshal(bytes.NewReader(b))
				require.ErrorIs(t, err, ErrCorrupt, "the plain decoder refuses a quantized file")
			})
		}
	}
}

// TestQuantUnmarshalRejectsDamage: every truncation and every flipped byte
// of a small quantized index is an error wrapping ErrCorrupt, never a
// panic.
func TestQuantUnmarshalRejectsDamage(t *testing.T) {
	for _, q := range []QuantConfig{{Kind: quant.SQ6, Refine: true, RefineType: quant.FP32}, {Kind: quant.PQ, M: 2, Nbits: 2}} {
		x, err := Build(context.Background(), indextest.Gaussian(newRng(), 40, 4), 4, index.IP,
			Config{M: 2, EfConstruction: 8, Seed: 1, Workers: 1, Quant: q})
		require.NoError(t, err)
		indextest.RequireRejects(t, indextest.Bytes(t, x), ErrCorrupt, indextest.FromReader(UnmarshalQuantized))
	}
}

func TestParseQuantParams(t *testing.T) {
	sq := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cfg, err := ParseSQParams(sq())
	require.NoError(t, err)
	require.Equal(t, QuantConfig{Kind: quant.SQ8, RefineType: quant.FP32}, cfg.Quant)
	cfg, err = ParseSQParams(sq("sq_type", "BF16", "refine", "true", "refine_type", "fp16", "M", "8"))
	require.NoError(t, err)
	require.Equal(t, QuantConfig{Kind: quant.BF16, Refine: true, RefineType: quant.FP16}, cfg.Quant)
	require.Equal(t, 8, cfg.M)
	cfg, err = ParsePQParams(sq("m", "16", "nbits", "4", "refine", "True"), 64)
	require.NoError(t, err)
	require.Equal(t, QuantConfig{Kind: quant.PQ, M: 16, Nbits: 4, Refine: true, RefineType: quant.FP32}, cfg.Quant)

	for _, tc := range []struct {
		params map[string]string
		pq     bool
		want   string
	}{
		{sq("sq_type", "FP32"), false, "invalid scalar quantizer type"},
		{sq("sq_type", "8"), false, "invalid scalar quantizer type"},
		{sq("refine", "test"), false, "param 'refine' (test) should be a boolean"},
		{sq("refine", "1"), false, "should be a boolean"},
		{sq("refine_type", "INT8"), false, "invalid refine type : INT8, optional types are [sq4u, sq6, sq8, fp16, bf16, fp32, flat]"},
		{sq("M", "2049"), false, "param 'M' (2049) should be in range [2, 2048]"},
		{sq("m", "7"), true, "dimension 64 is not a multiple of m(7)"},
		{sq("m", "0"), true, "param 'm' (0) should be in range [1, 65536]"},
		{sq("nbits", "17"), true, "param 'nbits' (17) should be in range [1, 16]"},
		{sq("nbits", "12"), true, "nbits(12) is not supported, use at most 8"},
		{sq("refine_type", "PQ"), true, "invalid refine type"},
	} {
		var err error
		if tc.pq {
			_, err = ParsePQParams(tc.params, 64)
		} else {
			_, err = ParseSQParams(tc.params)
		}
		require.ErrorContains(t, err, tc.want, "%v", tc.params)
	}
}
