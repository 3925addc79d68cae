package querynode

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/plan"
)

// TestMaxSim checks the MAX_SIM scores against hand-computed values: per
// query vector the best match among the row's vectors, summed.
func TestMaxSim(t *testing.T) {
	// Two query vectors and three row vectors of dim 2.
	query := []float32{1, 0, 0, 2}
	doc := []float32{3, 0, 0, 1, 1, 1}
	qn := vectorNorms(query, 2)
	for _, tc := range []struct {
		metric string
		want   float32
	}{
		// cos: q1 best (3,0) → 1; q2 best (0,1) → 1.
		{plan.MetricMaxSimCosine, 2},
		{plan.MetricMaxSim, 2},
		// ip: q1 best (3,0) → 3; q2 best (0,1)·(0,2) = 2 and (1,1)·(0,2) = 2 → 2.
		{plan.MetricMaxSimIP, 5},
		// l2²: q1 nearest (1,1) → 1; q2 nearest (0,1) → 1.
		{plan.MetricMaxSimL2, 2},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			got := maxSim(tc.metric, query, qn, doc, 2)
			require.InDelta(t, tc.want, got, 1e-6)
		})
	}
	// A zero vector scores 0 under cosine.
	require.InDelta(t, 0, maxSim(plan.MetricMaxSimCosine, []float32{1, 0}, []float32{1}, []float32{0, 0}, 2), 1e-6)
	require.False(t, math.IsNaN(float64(maxSim(plan.MetricMaxSimCosine, []float32{0, 0}, []float32{0}, []float32{1, 0}, 2))))
}

// TestElementScore checks the per-element scores of element-level search.
func TestElementScore(t *testing.T) {
	q := []float32{1, 0}
	require.InDelta(t, 2, elementScore(plan.MetricL2, q, 1, []float32{0, 1}), 1e-6)
	require.InDelta(t, 3, elementScore(plan.MetricIP, q, 1, []float32{3, 4}), 1e-6)
	require.InDelta(t, 0.6, elementScore(plan.MetricCosine, q, 1, []float32{3, 4}), 1e-6)
}

// TestElementHitsShareAKey checks that element-level candidates of one
// primary key are kept apart by the hit heap while row-level duplicates
// of a key still collapse.
func TestElementHitsShareAKey(t *testing.T) {
	h := &hitHeap{better: func(a, b float32) bool { return a > b }}
	h.offer(candidate{score: 0.9, pk: int64(1), elem: 1}, 3)
	h.offer(candidate{score: 0.8, pk: int64(1), elem: 2}, 3)
	h.offer(candidate{score: 0.7, pk: int64(2), elem: 1}, 3)
	h.offer(candidate{score: 0.95, pk: int64(3), elem: 1}, 3)
	require.Len(t, h.items, 3)
	var pks []any
	for _, it := range h.items {
		pks = append(pks, it.pk)
	}
	require.ElementsMatch(t, []any{int64(1), int64(1), int64(3)}, pks)

	r := &hitHeap{better: func(a, b float32) bool { return a > b }}
	r.offer(candidate{score: 0.9, pk: int64(1)}, 3)
	r.offer(candidate{score: 0.8, pk: int64(1)}, 3)
	require.Len(t, r.items, 1)
}
