package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestFill(t *testing.T) {
	nullable := &schemapb.FieldSchema{FieldID: 101, Name: "a", DataType: schemapb.DataType_Int32, Nullable: true}
	c, err := Fill(nullable, 3)
	require.NoError(t, err)
	require.Equal(t, []bool{false, false, false}, c.Validity())
	require.Equal(t, schemapb.DataType_Int32, c.Type())

	def := &schemapb.FieldSchema{
		FieldID: 102, Name: "b", DataType: schemapb.DataType_Double, Nullable: true,
		DefaultValue: &schemapb.ValueField{Data: &schemapb.ValueField_DoubleData{DoubleData: 1.5}},
	}
	c, err = Fill(def, 2)
	require.NoError(t, err)
	require.Equal(t, []float64{1.5, 1.5}, c.(*Floats).Data)
	require.Equal(t, []bool{true, true}, c.Validity())

	vec := &schemapb.FieldSchema{
		FieldID: 103, Name: "v", DataType: schemapb.DataType_FloatVector, Nullable: true,
		TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}},
	}
	c, err = Fill(vec, 1)
	require.NoError(t, err)
	require.Equal(t, []bool{false}, c.Validity(), "a nullable vector fills as a null, zero-filled row")
	require.Equal(t, []float32{0, 0}, c.(*FloatVectors).Data)
	require.False(t, Fillable(&schemapb.FieldSchema{FieldID: 104, DataType: schemapb.DataType_Int64}))
	require.True(t, Fillable(nullable))
}

// TestInsertColumnsFillsAddedField: an insert message written before a
// nullable field was added lacks it and reads it as null; a message that
// lacks a required field is still refused.
func TestInsertColumnsFillsAddedField(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "added", DataType: schemapb.DataType_VarChar, Nullable: true},
	}}
	ids := &schemapb.FieldData{
		FieldId: 100, FieldName: "id", Type: schemapb.DataType_Int64,
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1, 2}}},
		}},
	}
	cols, err := InsertColumns(schema, []*schemapb.FieldData{ids}, 2)
	require.NoError(t, err)
	require.Equal(t, []bool{false, false}, cols[101].Validity())

	schema.Fields[1].Nullable = false
	_, err = InsertColumns(schema, []*schemapb.FieldData{ids}, 2)
	require.ErrorContains(t, err, `insert lacks field "added"`)
}
