package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

// TestHybridGroupScorers: a hybrid search's groups are ordered by
// rank_group_scorer, as Milvus orders them: the best hit (max, the
// default), the mean of the group's hits (avg) or their sum (sum); any
// other scorer is refused.
func TestHybridGroupScorers(t *testing.T) {
	// Fused hits, best first (higher is better), of three groups: a holds
	// the best hit but a weak second, b two good ones, c one fair hit.
	hits := []fusedHit{
		{pk: int64(1), score: 0.9},
		{pk: int64(2), score: 0.8},
		{pk: int64(3), score: 0.75},
		{pk: int64(4), score: 0.7},
		{pk: int64(5), score: 0.1},
	}
	values := &column.Ints{T: schemapb.DataType_Int64, Data: []int64{10, 20, 20, 30, 10}} // group of each hit
	order := func(scorer string) []any {
		t.Helper()
		kvs := []*commonpb.KeyValuePair{{Key: "group_by_field", Value: "n"}, {Key: "group_size", Value: "2"}}
		if scorer != "" {
			kvs = append(kvs, &commonpb.KeyValuePair{Key: "rank_group_scorer", Value: scorer})
		}
		g, err := parseHybridGroup(parseColl(), kvs)
		require.NoError(t, err)
		g.at = map[any]int{}
		for i, h := range hits {
			g.at[h.pk] = i
		}
		got, _ := g.pick(hits, values, 0, 10)
		var pks []any
		for _, h := range got {
			pks = append(pks, h.pk)
		}
		return pks
	}
	require.Equal(t, []any{int64(1), int64(5), int64(2), int64(3), int64(4)}, order(""), "max: by the best hit")
	require.Equal(t, order(""), order("max"))
	require.Equal(t, []any{int64(2), int64(3), int64(4), int64(1), int64(5)}, order("avg"), "avg: 0.775, 0.7, 0.5")
	require.Equal(t, []any{int64(2), int64(3), int64(1), int64(5), int64(4)}, order("sum"), "sum: 1.55, 1.0, 0.7")

	bad := []*commonpb.KeyValuePair{{Key: "group_by_field", Value: "n"}, {Key: "rank_group_scorer", Value: "median"}}
	_, err := parseHybridGroup(parseColl(), bad)
	require.ErrorContains(t, err, `unsupported rank_group_scorer "median"`)
}
