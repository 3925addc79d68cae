package indextest

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

// Gaussian returns n*dim standard normal values: n random vectors.
func Gaussian(rng *rand.Rand, n, dim int) []float32 {
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// TopK is the brute-force reference search over rows 0..n-1: score returns
// a row's score under metric, and false to leave the row out. The result is
// the k best rows, best first, ties by ascending row, as every index
// returns them; nil when no row scores.
func TopK(n, k int, metric index.Metric, score func(row int) (float32, bool)) []index.Hit {
	var hits []index.Hit
	for r := range n {
		if s, ok := score(r); ok {
			hits = append(hits, index.Hit{Row: int32(r), Score: s})
		}
	}
	index.SortHits(hits, metric)
	return hits[:min(k, len(hits))]
}

// RequireOrdered checks the order every index returns hits in: best
// first under metric, ties by ascending row.
func RequireOrdered(t testing.TB, hits []index.Hit, metric index.Metric) {
	t.Helper()
	sorted := slices.Clone(hits)
	index.SortHits(sorted, metric)
	require.Equal(t, sorted, hits, "hits best first, ties by row")
}

// Recall is |got ∩ want| / |want| over rows: recall@k when want is the
// exact top k. It is 1 when want is empty.
func Recall(got, want []index.Hit) float64 {
	if len(want) == 0 {
		return 1
	}
	set := make(map[int32]bool, len(want))
	for _, h := range want {
		set[h.Row] = true
	}
	n := 0
	for _, h := range got {
		if set[h.Row] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// RequireRejects checks that load fails with an error wrapping corrupt,
// and does not panic, for every truncation of the file data and for every
// single byte of it flipped.
func RequireRejects[T any](t testing.TB, data []byte, corrupt error, load func([]byte) (T, error)) {
	t.Helper()
	for n := range len(data) {
		_, err := load(data[:n])
		require.ErrorIs(t, err, corrupt, "truncated to %d of %d bytes", n, len(data))
	}
	bad := bytes.Clone(data)
	for i := range bad {
		bad[i] ^= 0x41
		_, err := load(bad)
		require.ErrorIs(t, err, corrupt, "byte %d of %d flipped", i, len(data))
		bad[i] ^= 0x41
	}
}
