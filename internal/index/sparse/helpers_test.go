package sparse

import (
	"math/rand/v2"
	"slices"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// synth returns n random rows over a vocabulary of vocab dimensions with
// about nnz entries each, dimensions drawn from a Zipf distribution (as in
// learned sparse embeddings: a few dimensions are very common) and values
// from an exponential distribution.
func synth(seed uint64, n, vocab, nnz int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 7))
	z := rand.NewZipf(r, 1.1, 2, uint64(vocab-1))
	rows := make([][]byte, n)
	for i := range rows {
		m := map[uint32]float32{}
		want := 1 + r.IntN(2*nnz)
		for len(m) < want {
			m[uint32(z.Uint64())] = float32(r.ExpFloat64()) + 0.01
		}
		rows[i] = fromMap(m)
	}
	return rows
}

// fromMap encodes a map of dimension → value as a wire row.
func fromMap(m map[uint32]float32) []byte {
	v := Vector{}
	for d := range m {
		v.Indices = append(v.Indices, d)
	}
	slices.Sort(v.Indices)
	for _, d := range v.Indices {
		v.Values = append(v.Values, m[d])
	}
	return v.Encode()
}

// exact is the brute-force reference: every allowed row with a positive
// dot product, best first, ties by row.
func exact(rows [][]byte, q Vector, k int, allowed []bool) []index.Hit {
	return indextest.TopK(len(rows), k, index.IP, func(r int) (float32, bool) {
		if allowed != nil && !allowed[r] {
			return 0, false
		}
		s := Dot(q, Decode(rows[r]))
		return s, s > 0
	})
}

// uniform returns n rows of exactly nnz dimensions drawn uniformly from
// vocab, with values uniform in [0, 1).
func uniform(seed uint64, n, vocab, nnz int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([][]byte, n)
	for i := range rows {
		m := map[uint32]float32{}
		for len(m) < nnz {
			m[uint32(r.IntN(vocab))] = r.Float32()
		}
		rows[i] = fromMap(m)
	}
	return rows
}
