package topk

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeapKeepsBest offers random items, with many equal distances, and
// compares the result with a full sort.
func TestHeapKeepsBest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Heap
	for _, k := range []int{0, 1, 2, 7, 50} {
		for _, n := range []int{0, 1, 5, 49, 200} {
			all := make([]Item, n)
			for i := range all {
				all[i] = Item{D: float32(r.IntN(20)), ID: int32(r.IntN(1000))}
			}
			h.Reset(k)
			for _, it := range all {
				h.Offer(it)
				if h.Len() > 0 {
					for _, kept := range h.items {
						require.False(t, Worse(kept, h.Top()))
					}
				}
			}
			require.Equal(t, n >= k, h.Full())
			want := slices.Clone(all)
			slices.SortFunc(want, Compare)
			got := h.Sorted()
			require.True(t, slices.Equal(want[:min(k, n)], got), "k=%d n=%d: %v", k, n, got)
		}
	}
}
