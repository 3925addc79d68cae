package hnsw

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHeaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 50 {
		n := rng.IntN(200) + 1
		items := make([]item, n)
		for i := range items {
			items[i] = item{float32(rng.IntN(20)), uint32(i)}
		}
		var mn minHeap
		var mx maxHeap
		for _, it := range items {
			mn.push(it)
			mx.push(it)
		}
		sorted := slices.Clone(items)
		slices.SortFunc(sorted, cmpItem)
		for i := range n {
			require.Equal(t, sorted[i], mn.pop())
			require.Equal(t, sorted[n-1-i], mx.pop())
		}
		require.Empty(t, mn)
		require.Empty(t, mx)

		// A bounded max-heap via replaceTop keeps the k smallest.
		k := min(n, 7)
		var top maxHeap
		for _, it := range items {
			if len(top) < k {
				top.push(it)
			} else if before(it, top[0]) {
				top.replaceTop(it)
			}
		}
		got := slices.Clone([]item(top))
		slices.SortFunc(got, cmpItem)
		require.Equal(t, sorted[:k], got)
	}
}
