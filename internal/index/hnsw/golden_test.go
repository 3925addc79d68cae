package hnsw

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
	"github.com/strata-db/strata/internal/index/quant"
)

// TestMarshalGolden pins the file format: a fixed small index marshals to
// the bytes of testdata/l2.golden, and that file still loads. The vectors
// hold small integers so that every distance is exact whatever SIMD kernel
// the machine uses, and the build is single-threaded so that it is
// deterministic.
func TestMarshalGolden(t *testing.T) {
	const n, dim = 120, 8
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.IntN(9) - 4)
	}
	x, err := Build(context.Background(), data, dim, index.L2, Config{M: 4, EfConstruction: 16, Seed: 3, Workers: 1})
	require.NoError(t, err)
	back := indextest.MarshalGolden(t, "l2.golden", x, indextest.FromReader(Unmarshal))
	require.Equal(t, n, back.Len())
}

// TestMarshalQuantGolden pins the quantized format the same way: an SQ8
// index with an FP16 refine store (both encodings are computed without
// SIMD kernels, so the bytes do not depend on the machine).
func TestMarshalQuantGolden(t *testing.T) {
	const n, dim = 120, 8
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.IntN(9) - 4)
	}
	x, err := Build(context.Background(), data, dim, index.L2, Config{
		M: 4, EfConstruction: 16, Seed: 3, Workers: 1,
		Quant: QuantConfig{Kind: quant.SQ8, Refine: true, RefineType: quant.FP16},
	})
	require.NoError(t, err)
	back := indextest.MarshalGolden(t, "sq8_fp16_l2.golden", x, indextest.FromReader(UnmarshalQuantized))
	require.Equal(t, n, back.Len())
	require.Equal(t, x.Quant(), back.Quant())
}
