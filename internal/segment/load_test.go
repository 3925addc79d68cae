package segment

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

func TestLoadAdoptsColumns(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{
			FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}},
		},
	}}
	s, err := New(Info{ID: 1}, schema)
	require.NoError(t, err)
	pks := &column.Ints{T: schemapb.DataType_Int64, Data: []int64{7, 8, 7}}
	vecs := &column.FloatVectors{Dim: 2, Data: []float32{1, 2, 3, 4, 5, 6}}
	require.NoError(t, s.Load(map[int64]column.Column{100: pks, 101: vecs}, []uint64{10, 10, 20}))
	require.Equal(t, 3, s.Len())
	// The key index covers loaded rows: deleting key 7 at ts 15 hides only the first copy.
	require.Equal(t, 1, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{7}}, []uint64{15}))
	require.NoError(t, s.Read(func(v *View) error {
		require.Equal(t, []bool{false, true, true}, v.Visible(30))
		require.Same(t, vecs, v.Column(101), "loaded columns are adopted, not copied")
		return nil
	}))
	// Loading into a non-empty segment appends.
	require.NoError(t, s.Load(map[int64]column.Column{
		100: &column.Ints{T: schemapb.DataType_Int64, Data: []int64{9}},
		101: &column.FloatVectors{Dim: 2, Data: []float32{7, 8}},
	}, []uint64{30}))
	require.Equal(t, 4, s.Len())
	// A wrongly typed column is refused.
	s2, err := New(Info{ID: 2}, schema)
	require.NoError(t, err)
	require.Error(t, s2.Load(map[int64]column.Column{100: &column.Strings{Data: []string{"a"}}, 101: vecs}, []uint64{1}))
}

// TestLoadedKeyIndex: deletes find loaded rows through the sorted key index
// (every copy of a key, string keys too) and rows appended later through the
// hash index.
func TestLoadedKeyIndex(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{
			FieldID: 100, Name: "id", DataType: schemapb.DataType_VarChar, IsPrimaryKey: true,
			TypeParams: []*commonpb.KeyValuePair{{Key: "max_length", Value: "8"}},
		},
	}}
	s, err := New(Info{ID: 1}, schema)
	require.NoError(t, err)
	require.NoError(t, s.Load(map[int64]column.Column{100: &column.Strings{Data: []string{"c", "a", "b", "a", "d"}}},
		[]uint64{10, 10, 10, 20, 10}))
	require.NoError(t, s.Append(map[int64]column.Column{100: &column.Strings{Data: []string{"a", "e"}}}, []uint64{30, 30}))
	// "a" at 25 hides the copies inserted at 10 and 20, not the one at 30;
	// "e" at 25 hides nothing (inserted later); "z" is absent.
	require.Equal(t, 2, s.Delete(&column.Strings{Data: []string{"a", "e", "z"}}, []uint64{25, 25, 25}))
	require.Equal(t, 1, s.Delete(&column.Strings{Data: []string{"a"}}, []uint64{35}))
	require.NoError(t, s.Read(func(v *View) error {
		require.Equal(t, []bool{true, false, true, false, true, false, true}, v.Visible(40))
		return nil
	}))
}
