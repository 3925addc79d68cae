package querynode

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// TestSegmentFilterTextMatch runs text_match and phrase_match through the
// query node's per-segment filter: visibility (insert and delete
// timestamps) and the text filter combine, and rows appended to a growing
// segment after a first read are found by the next one.
func TestSegmentFilterTextMatch(t *testing.T) {
	schema := &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "text", DataType: schemapb.DataType_VarChar, TypeParams: []*commonpb.KeyValuePair{
			{Key: "max_length", Value: "100"}, {Key: "enable_analyzer", Value: "true"}, {Key: "enable_match", Value: "true"},
		}},
	}}
	seg, err := segment.New(segment.Info{ID: 7}, schema)
	require.NoError(t, err)
	add := func(ts uint64, ids []int64, texts ...string) {
		require.NoError(t, seg.Append(map[int64]column.Column{
			100: &column.Ints{T: schemapb.DataType_Int64, Data: ids},
			101: &column.Strings{T: schemapb.DataType_VarChar, Data: texts},
		}, []uint64{ts, ts, ts}[:len(ids)]))
	}
	add(10, []int64{1, 2, 3}, "red apple pie", "green apple", "pie of red apples")
	filter := func(src string, ts uint64) []int {
		t.Helper()
		e, err := expr.Compile(src, schema, nil)
		require.NoError(t, err)
		var out []int
		require.NoError(t, seg.Read(func(v *segment.View) error {
			mask, _, err := searchMask(v, &plan.Read{Filter: src}, ts, 0, e, 0)
			for i := range v.Len() {
				if mask == nil || mask[i] {
					out = append(out, i)
				}
			}
			return err
		}))
		return out
	}
	require.Equal(t, []int{0, 1}, filter("text_match(text, 'apple')", 100))
	require.Equal(t, []int{0, 2}, filter("text_match(text, 'red')", 100))
	require.Equal(t, []int{0}, filter("phrase_match(text, 'red apple')", 100))
	require.Empty(t, filter("text_match(text, 'apple')", 5), "nothing is visible before the insert")

	add(20, []int64{4, 5}, "apple crumble", "red apple")
	require.Equal(t, []int{0, 1, 3, 4}, filter("text_match(text, 'apple')", 100))
	require.Equal(t, []int{0, 1}, filter("text_match(text, 'apple')", 15), "rows inserted after ts stay hidden")
	require.Equal(t, []int{0, 4}, filter("phrase_match(text, 'red apple') and id != 2", 100))

	seg.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{30})
	require.Equal(t, []int{4}, filter("phrase_match(text, 'red apple')", 100))
	require.Equal(t, []int{0, 4}, filter("phrase_match(text, 'red apple')", 25), "a read before the delete still sees the row")
}
