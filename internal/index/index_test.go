package index

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMetric(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Metric
	}{
		{"L2", L2},
		{"l2", L2},
		{"IP", IP},
		{"COSINE", Cosine},
		{"cosine", Cosine},
		{"HAMMING", Hamming},
		{"jaccard", Jaccard},
	} {
		t.Run(tc.in, func(t *testing.T) {
			m, err := ParseMetric(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, m)
			require.True(t, m.Valid())
		})
	}
	_, err := ParseMetric("SUBSTRUCTURE")
	require.Error(t, err)
	require.True(t, Cosine.Float())
	require.False(t, Hamming.Float())
	require.True(t, Jaccard.Binary())
	require.False(t, L2.Binary())
	require.False(t, Hamming.HigherIsBetter())
	require.Equal(t, "JACCARD", Jaccard.String())
	require.Equal(t, "COSINE", Cosine.String())
	require.False(t, Metric(7).Valid())
}

func TestSortHits(t *testing.T) {
	hits := []Hit{{3, 1}, {1, 2}, {2, 1}, {0, 0.5}}
	SortHits(hits, L2)
	require.Equal(t, []Hit{{0, 0.5}, {2, 1}, {3, 1}, {1, 2}}, hits)
	SortHits(hits, IP)
	require.Equal(t, []Hit{{1, 2}, {2, 1}, {3, 1}, {0, 0.5}}, hits)
}

func TestAllowedCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		m := make([]bool, n+3)
		want := 0
		for i := range m {
			m[i] = rng.IntN(2) == 0
			if m[i] && i >= 3 {
				want++
			}
		}
		// A mis-aligned slice is counted exactly, the tail byte by byte.
		require.Equal(t, want, AllowedCount(m[3:], n, SearchParams{}))
	}
	require.Equal(t, 7, AllowedCount(nil, 7, SearchParams{}), "nil allows every row")
	require.Equal(t, 2, AllowedCount([]bool{true, true, true}, 3, SearchParams{Allowed: 2}), "the caller's count is trusted")
}
