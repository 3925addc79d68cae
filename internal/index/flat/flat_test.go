package flat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
)

// naive is the reference: every allowed row scored with the generic
// kernels, NaN dropped, fully sorted, first k; and every row's score, by row.
func naive(data []float32, dim int, metric index.Metric, q []float32, k int, allowed []bool) (best, byRow []index.Hit) {
	var all []index.Hit
	for r := 0; r*dim < len(data); r++ {
		x := data[r*dim : (r+1)*dim]
		var s float32
		switch metric {
		case index.L2:
			s = distance.L2SquaredGeneric(q, x)
		case index.IP:
			s = distance.DotGeneric(q, x)
		default:
			s = distance.CosineGeneric(q, x)
		}
		byRow = append(byRow, index.Hit{Row: int32(r), Score: s})
		if math.IsNaN(float64(s)) || allowed != nil && !allowed[r] {
			continue
		}
		all = append(all, index.Hit{Row: int32(r), Score: s})
	}
	index.SortHits(all, metric)
	return all[:min(k, len(all))], byRow
}

// requireSameHits checks got against want: the same rows in the same
// order, with scores within rounding. A row other than the reference's is
// accepted only if the reference scores it (all, by row) within rounding of
// the reference's row at that rank.
func requireSameHits(t *testing.T, want, got, all []index.Hit, msg ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg...)
	for i := range want {
		tol := 1e-4 * (1 + math.Abs(float64(want[i].Score)))
		require.InDelta(t, want[i].Score, got[i].Score, tol, msg...)
		if want[i].Row != got[i].Row {
			require.InDelta(t, want[i].Score, all[got[i].Row].Score, tol, msg...)
		}
	}
}

// testData returns n rows with duplicates (rows 1 and n-2 equal row 0),
// a zero row and a NaN row, and nq queries including a zero query.
func testData(r *rand.Rand, n, dim, nq int) (data, queries []float32) {
	data = make([]float32, n*dim)
	for i := range data {
		data[i] = r.Float32()*2 - 1
	}
	if n >= 6 {
		copy(data[dim:2*dim], data[:dim])
		copy(data[(n-2)*dim:(n-1)*dim], data[:dim])
		clear(data[3*dim : 4*dim])
		data[4*dim+dim/2] = float32(math.NaN())
	}
	queries = make([]float32, nq*dim)
	for i := range queries {
		queries[i] = r.Float32()*2 - 1
	}
	if nq >= 3 {
		clear(queries[2*dim : 3*dim])
	}
	return data, queries
}

func TestSearchMatchesNaive(t *testing.T) {
	const nq = 53 // a panel of 48 queries, a tile group of 4 and one more
	r := rand.New(rand.NewPCG(1, 2))
	for _, metric := range []index.Metric{index.L2, index.IP, index.Cosine} {
		for _, n := range []int{0, 1, 7, 300, 2500} {
			for _, dim := range []int{1, 5, 16, 37} {
				data, queries := testData(r, n, dim, nq)
				masks := [][]bool{nil, make([]bool, n), make([]bool, n)}
				for i := range n {
					masks[1][i] = r.IntN(3) == 0
					masks[2][i] = i >= 1100 && i < 1130 // one block only
				}
				for _, allowed := range masks {
					for _, k := range []int{0, 1, 10, 400} {
						batch, err := SearchBatch(data, dim, metric, queries, k, allowed)
						require.NoError(t, err)
						require.Len(t, batch, nq)
						for i := range nq {
							q := queries[i*dim : (i+1)*dim]
							want, all := naive(data, dim, metric, q, k, allowed)
							got, err := Search(data, dim, metric, q, k, allowed)
							require.NoError(t, err)
							msg := []any{"%v n=%d dim=%d k=%d q=%d", metric, n, dim, k, i}
							requireSameHits(t, want, got, all, msg...)
							requireSameHits(t, want, batch[i], all, msg...)
						}
					}
				}
			}
		}
	}
}

// TestSearchBatchManyQueries crosses the query chunk size and compares each
// query's batched result with the single-query search.
func TestSearchBatchManyQueries(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim, nq, k = 700, 24, queryChunk + 13, 7
	data, queries := testData(r, n, dim, nq)
	x, err := New(data, dim, index.L2)
	require.NoError(t, err)
	require.Equal(t, n, x.Len())
	require.Equal(t, int64(n*dim*4), x.MemoryBytes())
	batch, err := x.SearchBatch(queries, k, nil)
	require.NoError(t, err)
	for i := range nq {
		one, err := x.Search(queries[i*dim:(i+1)*dim], k, index.SearchParams{}, nil)
		require.NoError(t, err)
		_, all := naive(data, dim, index.L2, queries[i*dim:(i+1)*dim], k, nil)
		requireSameHits(t, one, batch[i], all, "query %d", i)
	}
}

func TestTiesByRow(t *testing.T) {
	const dim = 3
	data := slices.Repeat([]float32{1, 2, 3}, 9)
	q := []float32{0, 0, 0}
	for _, metric := range []index.Metric{index.L2, index.IP} {
		got, err := Search(data, dim, metric, q, 4, nil)
		require.NoError(t, err)
		batch, err := SearchBatch(data, dim, metric, slices.Repeat(q, 5), 4, nil)
		require.NoError(t, err)
		for _, hs := range append([][]index.Hit{got}, batch...) {
			rows := []int32{}
			for _, h := range hs {
				rows = append(rows, h.Row)
			}
			require.Equal(t, []int32{0, 1, 2, 3}, rows, "%v", metric)
		}
	}
}

func TestErrors(t *testing.T) {
	data := make([]float32, 12)
	q := make([]float32, 4)
	_, err := Search(data, 0, index.L2, q, 1, nil)
	require.ErrorContains(t, err, "dimension 0")
	_, err = Search(data, 5, index.L2, q, 1, nil)
	require.ErrorContains(t, err, "whole number")
	_, err = Search(data, 4, index.Metric(9), q, 1, nil)
	require.ErrorContains(t, err, "metric")
	_, err = Search(data, 4, index.L2, q, -1, nil)
	require.ErrorContains(t, err, "k(-1)")
	_, err = Search(data, 4, index.L2, q[:3], 1, nil)
	require.ErrorContains(t, err, "query dimension 3")
	_, err = Search(data, 4, index.L2, q, 1, []bool{true})
	require.ErrorContains(t, err, "allowed mask has 1 entries")
	_, err = SearchBatch(data, 4, index.L2, q[:3], 1, nil)
	require.ErrorContains(t, err, "query floats")
	_, err = New(data, 5, index.L2)
	require.Error(t, err)
}
