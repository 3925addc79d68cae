package sparse

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWANDWindows compares searchWAND with the inverted search on data
// spanning several windows, in each way split can handle a window (exact
// term-at-a-time, and MaxScore with non-essential terms probed), with and
// without an allowed mask, including values from a tiny set so that ties
// at the k-th place are common.
func TestWANDWindows(t *testing.T) {
	ties := func(seed uint64, n, vocab, nnz int) [][]byte {
		r := rand.New(rand.NewPCG(seed, 5))
		vals := []float32{0.5, 1, 2}
		rows := make([][]byte, n)
		for i := range rows {
			m := map[uint32]float32{}
			for j := r.IntN(nnz); j > 0; j-- {
				m[uint32(r.IntN(vocab))] = vals[r.IntN(len(vals))]
			}
			rows[i] = fromMap(m)
		}
		return rows
	}
	sets := []struct {
		name string
		gen  func(seed uint64, n, vocab, nnz int) [][]byte
	}{{"zipf", synth}, {"uniform", uniform}, {"ties", ties}}
	for _, ds := range sets {
		n := 3*wandWindow + 123
		rows := ds.gen(41, n, 400, 12)
		x, err := Build(context.Background(), rows, BuildParams{Kind: WAND})
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(43, 47))
		allowed := make([]bool, n)
		for i := range allowed {
			allowed[i] = r.IntN(3) > 0
		}
		for qi, qb := range ds.gen(42, 8, 400, 10) {
			q := Decode(qb)
			terms, _ := x.terms(q, 0)
			for _, k := range []int{1, 10, 100} {
				for _, mask := range [][]bool{nil, allowed} {
					want := x.searchInverted(terms, k, mask)
					for _, mode := range []wandSplit{wandAuto, wandTAAT, wandMaxScore} {
						got, _ := x.searchWAND(terms, k, mask, mode)
						require.Equal(t, want, got, "%s query %d k %d mode %d mask %v", ds.name, qi, k, mode, mask != nil)
					}
				}
			}
		}
	}
}
