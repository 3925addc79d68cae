package bench

import (
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
)

// GroundTruth returns the exact k nearest base rows of every query under
// metric, best first with ties broken by row, scored with the distance
// kernels on workers goroutines.
func GroundTruth(ds *Dataset, metric index.Metric, k, workers int) [][]int32 {
	base, dim := ds.Base, ds.Dim
	if metric == index.Cosine {
		base = normalized(base, dim)
	}
	out := make([][]int32, ds.NQ())
	forEach(ds.NQ(), workers, func() func(i int) {
		scores := make([]float32, ds.N())
		q := make([]float32, dim)
		return func(i int) {
			copy(q, ds.Query(i))
			if metric == index.L2 {
				distance.L2SquaredBatch(q, base, scores)
			} else {
				if metric == index.Cosine {
					normalize(q)
				}
				distance.DotBatch(q, base, scores)
				for j := range scores {
					scores[j] = -scores[j]
				}
			}
			out[i] = smallest(scores, k)
		}
	})
	return out
}

// smallest returns the indices of the k smallest scores in ascending order
// of score, then index.
func smallest(scores []float32, k int) []int32 {
	k = min(k, len(scores))
	top := make([]int32, 0, k+1)
	less := func(a, b int32) bool {
		return scores[a] < scores[b] || (scores[a] == scores[b] && a < b)
	}
	for i := range scores {
		id := int32(i)
		if len(top) == k && !less(id, top[k-1]) {
			continue
		}
		// Insertion into the sorted prefix; k is small.
		j := len(top)
		if j < k {
			top = append(top, id)
		} else {
			j = k - 1
		}
		for ; j > 0 && less(id, top[j-1]); j-- {
			top[j] = top[j-1]
		}
		top[j] = id
	}
	return top
}

// normalized returns a copy of the rows of v scaled to unit length.
func normalized(v []float32, dim int) []float32 {
	out := append([]float32(nil), v...)
	for i := 0; i < len(out); i += dim {
		normalize(out[i : i+dim])
	}
	return out
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) {
	n := distance.Norm(v)
	if n == 0 {
		return
	}
	for i := range v {
		v[i] /= n
	}
}

// recallAt is |got ∩ want| / |want|.
func recallAt(got []index.Hit, want []int32) float64 {
	if len(want) == 0 {
		return 1
	}
	n := 0
	for _, h := range got {
		for _, w := range want {
			if h.Row == w {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(want))
}
