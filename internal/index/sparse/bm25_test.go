package sparse

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// tfRows returns n rows of term frequencies (whole numbers) over vocab
// Zipf-distributed terms, as a BM25 function writes them.
func tfRows(seed uint64, n, vocab int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 11))
	z := rand.NewZipf(r, 1.2, 3, uint64(vocab-1))
	rows := make([][]byte, n)
	for i := range rows {
		m := map[uint32]float32{}
		for range 1 + r.IntN(40) {
			m[uint32(z.Uint64())]++
		}
		rows[i] = fromMap(m)
	}
	return rows
}

func TestBM25SearchEqualsExact(t *testing.T) {
	rows := tfRows(1, 3000, 500)
	allowed := make([]bool, len(rows))
	for i := range allowed {
		allowed[i] = i%5 != 0
	}
	b := BM25{K1: 1.2, B: 0.75, Avgdl: 17.5}
	for _, kind := range []Kind{Inverted, WAND} {
		for _, dropBuild := range []float64{0, 0.3} {
			x, err := Build(context.Background(), rows, BuildParams{Kind: kind, DropRatioBuild: dropBuild})
			require.NoError(t, err)
			for qi := range 20 {
				q := Vector{Indices: []uint32{uint32(qi), uint32(qi + 3), uint32(2*qi + 50)}, Values: []float32{1.5, 0.7, 2.2}}
				for _, mask := range [][]bool{nil, allowed} {
					want := indextest.TopK(len(rows), 10, index.IP, func(r int) (float32, bool) {
						if mask != nil && !mask[r] {
							return 0, false
						}
						s := b.ScoreRow(q, rows[r])
						return s, s > 0
					})
					got, err := x.SearchBM25(q, 10, b, SearchParams{RefineFactor: 1000}, mask)
					require.NoError(t, err)
					require.Equal(t, want, got, "kind %v drop %v query %d", kind, dropBuild, qi)
				}
			}
		}
	}
}

// TestBM25MaxScoreEqualsExhaustive checks the pruned search against an
// exhaustive one on queries that mix common and rare terms (where it
// prunes), for several k and masks, and that pruning happened.
func TestBM25MaxScoreEqualsExhaustive(t *testing.T) {
	rows := tfRows(3, 5000, 3000)
	x, err := Build(context.Background(), rows, BuildParams{Kind: Inverted})
	require.NoError(t, err)
	st := Stats{}
	require.NoError(t, x.Stats(nil, nil, &st))
	b := BM25{K1: 1.5, B: 0.6, Avgdl: float32(st.Avgdl())}
	r := rand.New(rand.NewPCG(4, 4))
	allowed := make([]bool, len(rows))
	for i := range allowed {
		allowed[i] = r.IntN(4) != 0
	}
	pruned := 0
	for qi := range 200 {
		m := map[uint32]float32{uint32(r.IntN(5)): 0.1 + r.Float32()}
		for range 1 + r.IntN(4) {
			m[uint32(20+r.IntN(2900))] = 1 + 5*r.Float32()
		}
		q := Decode(fromMap(m))
		for _, k := range []int{1, 5, 10, 50} {
			for _, mask := range [][]bool{nil, allowed} {
				want := indextest.TopK(len(rows), k, index.IP, func(row int) (float32, bool) {
					if mask != nil && !mask[row] {
						return 0, false
					}
					s := b.ScoreRow(q, rows[row])
					return s, s > 0
				})
				terms, _ := x.terms(q, 0)
				got, p := x.searchMaxScoreBM25(terms, k, b, x.docLens(), mask)
				pruned += p
				require.Equal(t, want, got, "query %d k %d", qi, k)
			}
		}
	}
	require.Positive(t, pruned, "the queries exercise pruning")
}

func TestBM25ScoreFormula(t *testing.T) {
	// One term, tf 2, row length 4, avgdl 2, k1 1.2, b 0.75, weight 3:
	// 3 · 2·2.2 / (2 + 1.2·(0.25 + 0.75·2)) = 13.2 / 4.1.
	row := fromMap(map[uint32]float32{7: 2, 9: 2})
	got := BM25{K1: 1.2, B: 0.75, Avgdl: 2}.ScoreRow(Vector{Indices: []uint32{7}, Values: []float32{3}}, row)
	require.InDelta(t, 13.2/4.1, got, 1e-5)
	require.Zero(t, BM25{K1: 1.2, B: 0.75, Avgdl: 2}.ScoreRow(Vector{Indices: []uint32{8}, Values: []float32{3}}, row))
}

func TestBM25StatsMatchRows(t *testing.T) {
	rows := tfRows(2, 2000, 300)
	dims := []uint32{0, 1, 5, 17, 299, 100000}
	allowed := make([]bool, len(rows))
	for i := range allowed {
		allowed[i] = i%3 != 0
	}
	for _, dropBuild := range []float64{0, 0.5} {
		x, err := Build(context.Background(), rows, BuildParams{Kind: Inverted, DropRatioBuild: dropBuild})
		require.NoError(t, err)
		for _, mask := range [][]bool{nil, allowed} {
			want := Stats{DF: make([]int64, len(dims))}
			for r, row := range rows {
				if mask == nil || mask[r] {
					want.RowStats(dims, row)
				}
			}
			got := Stats{DF: make([]int64, len(dims))}
			require.NoError(t, x.Stats(dims, mask, &got))
			require.Equal(t, want.Rows, got.Rows)
			require.Equal(t, want.DF, got.DF)
			require.InDelta(t, want.TotalLen, got.TotalLen, 1e-6)
		}
	}
	st := Stats{Rows: 10}
	require.InDelta(t, math.Log(1+(10-2+0.5)/(2+0.5)), st.IDF(2), 1e-12)
	_, err := (&Index{rowOff: []uint64{0}}).SearchBM25(Vector{}, 1, BM25{K1: 1.2, B: 0.75}, SearchParams{}, nil)
	require.Error(t, err, "avgdl 0 cannot score")
}
