package binivf

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/indextest"
)

// clustered returns n packed rows of dim bits around c random centres, each
// bit flipped with probability 1/10.
func clustered(n, dim, c int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := dim / 8
	centres := make([]byte, c*w)
	for i := range centres {
		centres[i] = byte(rng.Uint32())
	}
	out := make([]byte, n*w)
	for i := range n {
		ctr := centres[rng.IntN(c)*w:]
		for j := range w {
			b := ctr[j]
			for bit := range 8 {
				if rng.IntN(10) == 0 {
					b ^= 1 << bit
				}
			}
			out[i*w+j] = b
		}
	}
	return out
}

// exact is the brute-force top k under metric, ties by ascending row.
func exact(data, q []byte, k int, metric index.Metric, allowed []bool) []index.Hit {
	w := len(q)
	return indextest.TopK(len(data)/w, k, metric, func(r int) (float32, bool) {
		if allowed != nil && !allowed[r] {
			return 0, false
		}
		v := data[r*w : (r+1)*w]
		if metric == index.Jaccard {
			return distance.Jaccard(q, v), true
		}
		return float32(distance.Hamming(q, v)), true
	})
}

func TestSearchMatchesBruteForce(t *testing.T) {
	const n, dim, k = 4000, 256, 10
	all := clustered(n+50, dim, 40, 1)
	data, queries := all[:n*dim/8], all[n*dim/8:]
	for _, m := range []index.Metric{index.Hamming, index.Jaccard} {
		t.Run(m.String(), func(t *testing.T) {
			x, err := Build(context.Background(), data, dim, m, Config{Nlist: 32, Seed: 3})
			require.NoError(t, err)
			require.Equal(t, n, x.Len())
			var sum float64
			for i := range 50 {
				q := queries[i*dim/8 : (i+1)*dim/8]
				want := exact(data, q, k, m, nil)
				all, err := x.SearchBinary(q, k, index.SearchParams{Nprobe: 32}, nil)
				require.NoError(t, err)
				require.Equal(t, scores(want), scores(all), "nprobe = nlist is exact")
				got, err := x.SearchBinary(q, k, index.SearchParams{Nprobe: 4}, nil)
				require.NoError(t, err)
				require.Len(t, got, k)
				sum += indextest.Recall(got, want)
			}
			require.GreaterOrEqual(t, sum/50, 0.9, "recall@10 with nprobe 4 of 32 on clustered data")
		})
	}
}

func scores(h []index.Hit) []float32 {
	out := make([]float32, len(h))
	for i, x := range h {
		out[i] = x.Score
	}
	return out
}

func TestSearchFiltered(t *testing.T) {
	const n, dim = 1000, 64
	data := clustered(n, dim, 10, 2)
	x, err := Build(context.Background(), data, dim, index.Hamming, Config{Nlist: 16, Seed: 1})
	require.NoError(t, err)
	allowed := make([]bool, n)
	for i := 0; i < n; i += 97 {
		allowed[i] = true
	}
	q := data[:8]
	got, err := x.SearchBinary(q, 5, index.SearchParams{Nprobe: 1}, allowed)
	require.NoError(t, err)
	require.Equal(t, exact(data, q, 5, index.Hamming, allowed), got)
	none := make([]bool, n)
	got, err = x.SearchBinary(q, 5, index.SearchParams{}, none)
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestFewRowsAndErrors(t *testing.T) {
	data := clustered(3, 16, 2, 3)
	x, err := Build(context.Background(), data, 16, index.Jaccard, Config{Nlist: 8, Seed: 1})
	require.NoError(t, err)
	got, err := x.SearchBinary(data[:2], 10, index.SearchParams{Nprobe: 1}, nil)
	require.NoError(t, err)
	require.Len(t, got, 3, "goes on past nprobe lists until k rows or every list")
	_, err = x.SearchBinary(data[:1], 1, index.SearchParams{}, nil)
	require.ErrorContains(t, err, "query has 1 bytes")
	_, err = x.SearchBinary(data[:2], 1, index.SearchParams{Nprobe: 9}, nil)
	require.ErrorContains(t, err, "nprobe(9)")
	_, err = x.SearchBinary(data[:2], 1, index.SearchParams{}, []bool{true})
	require.ErrorContains(t, err, "allowed mask")
	_, err = Build(context.Background(), data, 12, index.Hamming, Defaults())
	require.ErrorContains(t, err, "multiple of 8")
	_, err = Build(context.Background(), data, 16, index.L2, Defaults())
	require.ErrorContains(t, err, "not a binary metric")
	_, err = Build(context.Background(), data[:5], 16, index.Hamming, Defaults())
	require.ErrorContains(t, err, "not a multiple")
	empty, err := Build(context.Background(), nil, 16, index.Hamming, Config{Nlist: 4})
	require.NoError(t, err)
	got, err = empty.SearchBinary([]byte{1, 2}, 3, index.SearchParams{}, nil)
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestParseParams(t *testing.T) {
	cfg, err := ParseParams(map[string]string{"nlist": "64", "other": "x"})
	require.NoError(t, err)
	require.Equal(t, 64, cfg.Nlist)
	cfg, err = ParseParams(nil)
	require.NoError(t, err)
	require.Equal(t, DefaultNlist, cfg.Nlist)
	_, err = ParseParams(map[string]string{"nlist": "0"})
	require.ErrorContains(t, err, "nlist(0)")
	_, err = ParseParams(map[string]string{"nlist": "many"})
	require.ErrorContains(t, err, "invalid integer value, key: 'nlist', value: 'many'")
}

func TestMarshalRoundTrip(t *testing.T) {
	data := clustered(500, 128, 5, 4)
	x, err := Build(context.Background(), data, 128, index.Jaccard, Config{Nlist: 8, Seed: 9})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, x.Marshal(&buf))
	raw := buf.Bytes()
	y, err := Unmarshal(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Equal(t, x.Len(), y.Len())
	require.Equal(t, x.Metric(), y.Metric())
	require.Equal(t, x.Config(), y.Config())
	require.Equal(t, x.MemoryBytes(), y.MemoryBytes())
	for i := range 20 {
		q := data[i*16 : (i+1)*16]
		a, err := x.SearchBinary(q, 7, index.SearchParams{Nprobe: 2}, nil)
		require.NoError(t, err)
		b, err := y.SearchBinary(q, 7, index.SearchParams{Nprobe: 2}, nil)
		require.NoError(t, err)
		require.Equal(t, a, b)
	}
}

// TestUnmarshalRejectsDamage: every truncation and every flipped byte of a
// small index is an error wrapping ErrCorrupt, never a panic.
func TestUnmarshalRejectsDamage(t *testing.T) {
	x, err := Build(context.Background(), clustered(40, 32, 3, 6), 32, index.Hamming, Config{Nlist: 3, Seed: 1})
	require.NoError(t, err)
	indextest.RequireRejects(t, indextest.Bytes(t, x), ErrCorrupt, indextest.FromReader(Unmarshal))
}

func BenchmarkSearch(b *testing.B) {
	const n, dim = 100000, 256
	data := clustered(n, dim, 200, 5)
	x, err := Build(context.Background(), data, dim, index.Hamming, Config{Nlist: 256, Seed: 1})
	require.NoError(b, err)
	q := clustered(1, dim, 200, 5)
	for b.Loop() {
		if _, err := x.SearchBinary(q, 10, index.SearchParams{Nprobe: 16}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	const n, dim = 60000, 784
	data := clustered(n, dim, 100, 6)
	for b.Loop() {
		if _, err := Build(context.Background(), data, dim, index.Hamming, Config{Nlist: 256, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
