package plan_test

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/plan"
)

func ints(v ...int64) *column.Ints { return &column.Ints{T: schemapb.DataType_Int64, Data: v} }

func hits(pairs ...any) []plan.Hit {
	var out []plan.Hit
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, plan.Hit{PK: pairs[i], Score: float32(pairs[i+1].(float64))})
	}
	return out
}

// TestMergeSearch: per query the best hit of each key, best first (the
// lower key on a tie), TopK of them, with their output fields.
func TestMergeSearch(t *testing.T) {
	req := &plan.Search{Metric: plan.MetricL2, TopK: 3, Vectors: [][]float32{{0}, {1}}}
	a := &plan.SearchResult{
		Hits:   [][]plan.Hit{hits(int64(1), 0.5, int64(3), 2.0), hits(int64(5), 1.0)},
		Fields: map[int64]column.Column{100: ints(10, 30, 50)},
	}
	b := &plan.SearchResult{
		Hits:   [][]plan.Hit{hits(int64(2), 0.5, int64(4), 1.0, int64(3), 1.5), hits(int64(6), 0.1)},
		Fields: map[int64]column.Column{100: ints(20, 40, 31, 60)},
	}
	got, err := plan.MergeSearch(req, []*plan.SearchResult{a, b})
	require.NoError(t, err)
	require.Equal(t, [][]plan.Hit{
		hits(int64(1), 0.5, int64(2), 0.5, int64(4), 1.0), // 3 (1.5 best) is fourth
		hits(int64(6), 0.1, int64(5), 1.0),
	}, got.Hits)
	require.Equal(t, ints(10, 20, 40, 60, 50), got.Fields[100])

	// Larger is better under IP; one part is returned as is.
	ip := &plan.Search{Metric: plan.MetricIP, TopK: 2, Vectors: [][]float32{{0}}}
	got, err = plan.MergeSearch(ip, []*plan.SearchResult{{Hits: [][]plan.Hit{hits("a", 0.1, "b", 0.9)}}, {Hits: [][]plan.Hit{hits("c", 0.5)}}})
	require.NoError(t, err)
	require.Equal(t, [][]plan.Hit{hits("b", 0.9, "c", 0.5)}, got.Hits)
	one := &plan.SearchResult{Hits: [][]plan.Hit{hits("x", 1.0)}}
	got, err = plan.MergeSearch(ip, []*plan.SearchResult{one})
	require.NoError(t, err)
	require.Same(t, one, got)

	// Element-level hits of one key are distinct.
	el := &plan.Search{Metric: plan.MetricL2, TopK: 3, Vectors: [][]float32{{0}}, ElementLevel: true}
	got, err = plan.MergeSearch(el, []*plan.SearchResult{
		{Hits: [][]plan.Hit{{{PK: int64(1), Score: 1, Element: 1}, {PK: int64(1), Score: 2, Element: 2}}}},
		{Hits: [][]plan.Hit{{{PK: int64(1), Score: 1.5, Element: 3}}}},
	})
	require.NoError(t, err)
	require.Equal(t, []int{1, 3, 2}, []int{got.Hits[0][0].Element, got.Hits[0][1].Element, got.Hits[0][2].Element})

	// A part whose columns do not match its hits is refused.
	_, err = plan.MergeSearch(req, []*plan.SearchResult{a, {Hits: b.Hits, Fields: map[int64]column.Column{100: ints(1)}}})
	require.Error(t, err)
}

// TestMergeSearchGroups: the TopK best groups over both parts, GroupSize
// hits each, strict_group_size applied after the merge.
func TestMergeSearchGroups(t *testing.T) {
	req := &plan.Search{Metric: plan.MetricL2, TopK: 2, GroupByField: 101, GroupSize: 2, Vectors: [][]float32{{0}}}
	a := &plan.SearchResult{Hits: [][]plan.Hit{hits(int64(1), 0.1, int64(2), 0.2, int64(3), 0.3)}, GroupValues: ints(7, 8, 7)}
	b := &plan.SearchResult{Hits: [][]plan.Hit{hits(int64(4), 0.15, int64(5), 0.4)}, GroupValues: ints(7, 9)}
	got, err := plan.MergeSearch(req, []*plan.SearchResult{a, b})
	require.NoError(t, err)
	require.Equal(t, [][]plan.Hit{hits(int64(1), 0.1, int64(4), 0.15, int64(2), 0.2)}, got.Hits)
	require.Equal(t, ints(7, 7, 8), got.GroupValues)

	strict := *req
	strict.StrictGroupSize = true
	got, err = plan.MergeSearch(&strict, []*plan.SearchResult{a, b})
	require.NoError(t, err)
	require.Equal(t, [][]plan.Hit{hits(int64(1), 0.1, int64(4), 0.15)}, got.Hits, "group 8 has one hit")
}

// TestMergeQuery: rows in key order, a key once, offset and limit after
// the merge; counts summed.
func TestMergeQuery(t *testing.T) {
	a := &plan.QueryResult{Rows: 3, Fields: map[int64]column.Column{100: ints(1, 4, 6), 101: ints(10, 40, 60)}}
	b := &plan.QueryResult{Rows: 3, Fields: map[int64]column.Column{100: ints(2, 4, 5), 101: ints(20, 41, 50)}}
	got, err := plan.MergeQuery(&plan.Query{Offset: 1, Limit: 3}, 100, []*plan.QueryResult{a, b})
	require.NoError(t, err)
	require.Equal(t, 3, got.Rows)
	require.Equal(t, ints(2, 4, 5), got.Fields[100])
	require.Equal(t, ints(20, 40, 50), got.Fields[101])

	got, err = plan.MergeQuery(&plan.Query{Offset: 10}, 100, []*plan.QueryResult{a, b})
	require.NoError(t, err)
	require.Zero(t, got.Rows)
	require.Equal(t, 0, got.Fields[100].Len())

	got, err = plan.MergeQuery(&plan.Query{CountOnly: true}, 100, []*plan.QueryResult{{Count: 3}, {Count: 4}})
	require.NoError(t, err)
	require.Equal(t, int64(7), got.Count)

	_, err = plan.MergeQuery(&plan.Query{}, 100, []*plan.QueryResult{{Rows: 1, Fields: map[int64]column.Column{101: ints(1)}}})
	require.ErrorContains(t, err, "no primary keys")
}

// TestTopGroups: groups rank by their best item.
func TestTopGroups(t *testing.T) {
	items := []int{10, 21, 11, 32, 22, 12} // group = tens digit, sorted best first
	g := func(i int) any { return i / 10 }
	require.Equal(t, []int{10, 11, 21, 22}, plan.TopGroups(items, g, 2, 2, false))
	require.Equal(t, []int{10, 11, 12, 21, 22}, plan.TopGroups(items, g, 2, 3, false))
	require.Equal(t, []int{10, 11, 12}, plan.TopGroups(items, g, 2, 3, true))
}
