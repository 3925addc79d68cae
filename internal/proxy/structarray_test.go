package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/rootcoord"
)

// structCollection is a collection with a struct field "clips" {tag Int64,
// emb FloatVector dim 2}, max_capacity 2, in its stored form.
func structCollection(t *testing.T) *catalog.Collection {
	t.Helper()
	kv := func(k, v string) *commonpb.KeyValuePair { return &commonpb.KeyValuePair{Key: k, Value: v} }
	in := &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{kv("dim", "2")}},
	}, StructArrayFields: []*schemapb.StructArrayFieldSchema{{Name: "clips", Fields: []*schemapb.FieldSchema{
		{
			Name: "tag", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int64,
			TypeParams: []*commonpb.KeyValuePair{kv("max_capacity", "2")},
		},
		{
			Name: "emb", DataType: schemapb.DataType_ArrayOfVector, ElementType: schemapb.DataType_FloatVector,
			TypeParams: []*commonpb.KeyValuePair{kv("dim", "2"), kv("max_capacity", "2")},
		},
	}}}}
	s, err := rootcoord.PrepareSchema(in)
	require.NoError(t, err)
	return &catalog.Collection{CollectionInfo: catalog.CollectionInfo{Name: "c"}, Schema: s}
}

// structData is a struct column of rows whose tags and embedding lists are given.
func structData(tags [][]int64, embs [][]float32) *schemapb.FieldData {
	tagCol := &column.Arrays{Elem: schemapb.DataType_Int64}
	for _, r := range tags {
		tagCol.Data = append(tagCol.Data, &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: r}}})
	}
	return &schemapb.FieldData{
		FieldName: "clips", Type: schemapb.DataType_ArrayOfStruct,
		Field: &schemapb.FieldData_StructArrays{StructArrays: &schemapb.StructArrayField{Fields: []*schemapb.FieldData{
			column.ToFieldData("tag", 0, tagCol),
			column.ToFieldData("emb", 0, &column.VectorArrays{Dim: 2, Data: embs}),
		}}},
	}
}

func TestStructSplitAndJoin(t *testing.T) {
	col := structCollection(t)
	fds, err := flattenStructs(col, []*schemapb.FieldData{structData([][]int64{{1, 2}, {}}, [][]float32{{1, 0, 0, 1}, {}})})
	require.NoError(t, err)
	require.Len(t, fds, 2)
	require.Equal(t, "clips[tag]", fds[0].GetFieldName())
	require.Equal(t, col.Field("clips[tag]").GetFieldID(), fds[0].GetFieldId())
	require.Equal(t, "clips[emb]", fds[1].GetFieldName())

	joined := joinStructs(col, fds)
	require.Len(t, joined, 1)
	require.Equal(t, "clips", joined[0].GetFieldName())
	require.Equal(t, schemapb.DataType_ArrayOfStruct, joined[0].GetType())
	subs := joined[0].GetStructArrays().GetFields()
	require.Equal(t, []string{"tag", "emb"}, []string{subs[0].GetFieldName(), subs[1].GetFieldName()})

	// describe shows the sub-fields inside the struct only.
	shown := userSchema(col)
	require.Len(t, shown.GetFields(), 2)
	require.Len(t, shown.GetStructArrayFields()[0].GetFields(), 2)
}

func TestStructSplitRejects(t *testing.T) {
	col := structCollection(t)
	for _, tc := range []struct {
		name string
		fd   *schemapb.FieldData
		msg  string
	}{
		{"over capacity", structData([][]int64{{1, 2, 3}}, [][]float32{{1, 0, 0, 1, 1, 1}}), "exceeds max_capacity"},
		{"uneven elements", structData([][]int64{{1, 2}}, [][]float32{{1, 0}}), "different numbers of elements"},
		{"uneven rows", structData([][]int64{{1}, {2}}, [][]float32{{1, 0}}), "the number of rows"},
		{"missing sub-field", func() *schemapb.FieldData {
			fd := structData([][]int64{{1}}, [][]float32{{1, 0}})
			fd.GetStructArrays().Fields = fd.GetStructArrays().Fields[:1]
			return fd
		}(), "is not passed"},
		{"NaN", structData([][]int64{{1}}, [][]float32{{float32Nan(), 0}}), "NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := flattenStructs(col, []*schemapb.FieldData{tc.fd})
			require.Error(t, err)
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func float32Nan() float32 {
	zero := float32(0)
	return zero / zero
}

func TestEmbListMetric(t *testing.T) {
	f := &schemapb.FieldSchema{Name: "clips[emb]", DataType: schemapb.DataType_ArrayOfVector}
	for _, tc := range []struct {
		requested, index string
		element          bool
		want             string
		fails            bool
	}{
		{"", "", false, "MAX_SIM_COSINE", false},
		{"", "MAX_SIM_IP", false, "MAX_SIM_IP", false},
		{"max_sim_l2", "", false, "MAX_SIM_L2", false},
		{"MAX_SIM_IP", "MAX_SIM_COSINE", false, "", true},
		{"COSINE", "", false, "", true},
		{"", "COSINE", true, "COSINE", false},
		{"L2", "", true, "L2", false},
		{"MAX_SIM_COSINE", "", true, "", true},
	} {
		got, err := embListMetric(f, tc.requested, tc.index, tc.element)
		if tc.fails {
			require.Error(t, err, "%+v", tc)
			continue
		}
		require.NoError(t, err, "%+v", tc)
		require.Equal(t, tc.want, got, "%+v", tc)
	}
}
