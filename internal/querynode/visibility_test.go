package querynode_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/stacktest"
)

// searchKeys returns the sorted primary keys a Strong search of the stack's
// collection returns (filtered by filter), asking for more hits than rows.
func searchKeys(t *testing.T, s *stacktest.Stack, filter string) []int64 {
	t.Helper()
	res, err := s.QueryNode.Search(context.Background(), &plan.Search{
		Read:    plan.Read{CollectionID: s.CollectionID, Strong: true, Filter: filter},
		FieldID: 101, Metric: "L2", Vectors: [][]float32{{0, 1}}, TopK: 1000,
	})
	require.NoError(t, err)
	require.Len(t, res.Hits, 1)
	keys := make([]int64, 0, len(res.Hits[0]))
	for _, h := range res.Hits[0] {
		keys = append(keys, h.PK.(int64))
	}
	slices.Sort(keys)
	return keys
}

// keyRange returns [from, to) without the keys in skip.
func keyRange(from, to int64, skip ...int64) []int64 {
	var out []int64
	for k := from; k < to; k++ {
		if !slices.Contains(skip, k) {
			out = append(out, k)
		}
	}
	return out
}

// Search and query see exactly the rows visible at the read timestamp,
// through every stage of a row's life: growing, deleted while growing,
// sealed, deleted once sealed, upserted, compacted. Each step is checked
// with and without a filter, twice in a row (a sealed segment's filtered
// mask is cached: the second read must not reuse a mask a delete made
// stale).
func TestSearchVisibilityThroughLifecycle(t *testing.T) {
	s := stacktest.New(t)
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	check := func(step string, want []int64) {
		t.Helper()
		for range 2 {
			require.Equal(t, want, searchKeys(t, s, ""), "%s: search", step)
			require.Equal(t, want, s.Keys(), "%s: query", step)
			var low []int64
			for _, k := range want {
				if k < 15 {
					low = append(low, k)
				}
			}
			require.Equal(t, low, searchKeys(t, s, "id < 15"), "%s: filtered search", step)
		}
	}
	s.Insert(0, 10)
	s.Flush()
	s.Insert(10, 20)
	s.Flush()
	check("two sealed segments", keyRange(0, 20))
	// Compaction before any delete (a delete makes an L0 segment, whose
	// forced compaction continues in the coordinator's background loop,
	// which the stack does not run).
	s.Compact()
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	check("compacted", keyRange(0, 20))
	s.Delete(10, 12)
	check("deleted once sealed", keyRange(0, 20, 10, 11))
	s.Insert(20, 30)
	check("growing", keyRange(0, 30, 10, 11))
	s.Delete(23, 25)
	check("deleted while growing", keyRange(0, 30, 10, 11, 23, 24))
	s.Upsert(10, 11) // brings back a deleted key
	s.Upsert(5, 7)   // replaces live ones: each key once
	s.Upsert(25, 26) // of the growing segment
	check("upserted", keyRange(0, 30, 11, 23, 24))
	s.Delete(12, 13) // of a sealed segment with a cached filter mask
	s.Delete(5, 6)   // an upserted key, whose new row is growing
	check("deleted again", keyRange(0, 30, 5, 11, 12, 23, 24))
	s.Flush()
	check("all sealed", keyRange(0, 30, 5, 11, 12, 23, 24))
	s.Delete(0, 1)
	s.Delete(29, 30)
	check("deleted after the flush", keyRange(1, 29, 5, 11, 12, 23, 24))
}
