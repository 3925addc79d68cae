package segment_test

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/segment"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func schema(pk schemapb.DataType) *schemapb.CollectionSchema {
	pkf := &schemapb.FieldSchema{FieldID: 100, Name: "pk", DataType: pk, IsPrimaryKey: true}
	if pk == schemapb.DataType_VarChar {
		pkf.TypeParams = []*commonpb.KeyValuePair{{Key: "max_length", Value: "16"}}
	}
	return &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
		pkf,
		{FieldID: 101, Name: "val", DataType: schemapb.DataType_Int64},
		{
			FieldID: 102, Name: "v", DataType: schemapb.DataType_FloatVector,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}},
		},
		{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
		{FieldID: 1, Name: "Timestamp", DataType: schemapb.DataType_Int64},
	}}
}

// rows builds an Append batch of int64 keys with values vals.
func rows(pks, vals []int64) map[int64]column.Column {
	vec := make([]float32, 2*len(pks))
	return map[int64]column.Column{
		100: &column.Ints{T: schemapb.DataType_Int64, Data: pks},
		101: &column.Ints{T: schemapb.DataType_Int64, Data: vals},
		102: &column.FloatVectors{Dim: 2, Data: vec},
	}
}

func newSeg(t *testing.T) *segment.Segment {
	t.Helper()
	s, err := segment.New(segment.Info{ID: 1, CollectionID: 2, PartitionID: 3, VChannel: "v"}, schema(schemapb.DataType_Int64))
	require.NoError(t, err)
	require.EqualValues(t, 100, s.PKField())
	return s
}

// visible returns pk→val of the rows visible at ts; it fails on a key seen twice.
func visible(t *testing.T, s *segment.Segment, ts uint64) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	require.NoError(t, s.Read(func(v *segment.View) error {
		pk := v.Column(100).(*column.Ints)
		val := v.Column(101).(*column.Ints)
		for i, ok := range v.Visible(ts) {
			if !ok {
				continue
			}
			_, dup := out[pk.Data[i]]
			require.False(t, dup, "key %d visible twice at %d", pk.Data[i], ts)
			out[pk.Data[i]] = val.Data[i]
		}
		return nil
	}))
	return out
}

func TestVisibility(t *testing.T) {
	s := newSeg(t)
	// Rows 1,2 at ts 10; row 3 at ts 20.
	require.NoError(t, s.Append(rows([]int64{1, 2}, []int64{10, 20}), []uint64{10, 10}))
	require.NoError(t, s.Append(rows([]int64{3}, []int64{30}), []uint64{20}))
	// Delete 2 at 15; delete 3 at 15, before its insert at 20: no effect.
	require.Equal(t, 1, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{2, 3}}, []uint64{15, 15}))
	// Upsert of 1 at ts 30: delete and insert at one timestamp.
	require.Equal(t, 1, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{30}))
	require.NoError(t, s.Append(rows([]int64{1}, []int64{11}), []uint64{30}))
	require.Equal(t, 4, s.Len())

	for _, tc := range []struct {
		name string
		ts   uint64
		want map[int64]int64
	}{
		{"before any insert", 9, map[int64]int64{}},
		{"at first insert", 10, map[int64]int64{1: 10, 2: 20}},
		{"at delete of 2", 15, map[int64]int64{1: 10}},
		{"between", 19, map[int64]int64{1: 10}},
		{"delete before insert does not hide 3", 20, map[int64]int64{1: 10, 3: 30}},
		{"just before upsert", 29, map[int64]int64{1: 10, 3: 30}},
		{"at upsert: new value only", 30, map[int64]int64{1: 11, 3: 30}},
		{"later", 1000, map[int64]int64{1: 11, 3: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, visible(t, s, tc.ts))
		})
	}
}

func TestDeleteKeepsEarliestMark(t *testing.T) {
	s := newSeg(t)
	require.NoError(t, s.Append(rows([]int64{1}, []int64{1}), []uint64{10}))
	require.Equal(t, 1, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{50}))
	require.Equal(t, 1, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{20}), "an earlier delete moves the mark")
	require.Equal(t, 0, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{30}), "a later one does not")
	require.Equal(t, 0, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{10}), "a delete at the insert ts does not hide it")
	require.Equal(t, map[int64]int64{1: 1}, visible(t, s, 19))
	require.Empty(t, visible(t, s, 20))
	require.Equal(t, 0, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{99}}, []uint64{60}), "unknown key")
	require.Equal(t, 0, s.Delete(&column.Strings{T: schemapb.DataType_VarChar, Data: []string{"1"}}, []uint64{60}), "wrong key type")
}

func TestDuplicateKeys(t *testing.T) {
	s := newSeg(t)
	// The same key inserted twice without a delete (no upsert): both rows are
	// kept and visible; the proxy reduces duplicates by the latest timestamp.
	require.NoError(t, s.Append(rows([]int64{7, 7}, []int64{1, 2}), []uint64{10, 11}))
	require.NoError(t, s.Read(func(v *segment.View) error {
		require.Equal(t, []bool{true, true}, v.Visible(11))
		require.Equal(t, []bool{true, false}, v.Visible(10))
		require.EqualValues(t, 11, v.Timestamp(1))
		return nil
	}))
	// One delete after both hides both.
	require.Equal(t, 2, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{7}}, []uint64{12}))
	require.Empty(t, visible(t, s, 12))
	// A delete between them hides only the first.
	s = newSeg(t)
	require.NoError(t, s.Append(rows([]int64{7}, []int64{1}), []uint64{10}))
	require.Equal(t, 1, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{7}}, []uint64{15}))
	require.NoError(t, s.Append(rows([]int64{7}, []int64{2}), []uint64{20}))
	require.Equal(t, map[int64]int64{7: 2}, visible(t, s, 25))
}

func TestVarCharKeys(t *testing.T) {
	s, err := segment.New(segment.Info{ID: 1}, schema(schemapb.DataType_VarChar))
	require.NoError(t, err)
	cols := map[int64]column.Column{
		100: &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"a", "b"}},
		101: &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2}},
		102: &column.FloatVectors{Dim: 2, Data: make([]float32, 4)},
	}
	require.NoError(t, s.Append(cols, []uint64{5, 5}))
	require.Equal(t, 1, s.Delete(&column.Strings{T: schemapb.DataType_VarChar, Data: []string{"b"}}, []uint64{6}))
	require.Equal(t, 0, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{6}))
	require.NoError(t, s.Read(func(v *segment.View) error {
		require.Equal(t, []bool{true, false}, v.Visible(6))
		require.Equal(t, 2, v.Len())
		require.Len(t, v.Fields(), 3, "system fields are not columns")
		require.Nil(t, v.Column(0))
		require.EqualValues(t, 1, v.Segment().ID)
		return nil
	}))
}

func TestAppendAndNewErrors(t *testing.T) {
	s := newSeg(t)
	for _, tc := range []struct {
		name string
		cols map[int64]column.Column
		tss  []uint64
		msg  string
	}{
		{"missing field", map[int64]column.Column{100: &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}}, []uint64{1}, "missing"},
		{"short column", rows([]int64{1, 2}, []int64{1, 2}), []uint64{1}, "rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, s.Append(tc.cols, tc.tss), tc.msg)
			require.Equal(t, 0, s.Len(), "a failed append changes nothing")
		})
	}
	noPK := schema(schemapb.DataType_Int64)
	noPK.Fields[0].IsPrimaryKey = false
	_, err := segment.New(segment.Info{}, noPK)
	require.ErrorContains(t, err, "primary key")
}

func TestAllVisible(t *testing.T) {
	s := newSeg(t)
	require.NoError(t, s.Append(rows([]int64{1, 2, 3}, []int64{1, 2, 3}), []uint64{10, 20, 30}))
	read := func(ts uint64) (all bool, mask []bool) {
		require.NoError(t, s.Read(func(v *segment.View) error {
			all, mask = v.AllVisible(ts), v.Visible(ts)
			return nil
		}))
		return
	}
	all, _ := read(25)
	require.False(t, all, "row 3 is newer")
	all, mask := read(30)
	require.True(t, all)
	require.Equal(t, []bool{true, true, true}, mask)
	s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{2}}, []uint64{40})
	all, mask = read(50)
	require.False(t, all, "row 2 is deleted")
	require.Equal(t, []bool{true, false, true}, mask)
}
