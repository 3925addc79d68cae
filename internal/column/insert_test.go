package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestInsertColumns(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_VarChar, IsPrimaryKey: true},
		{
			FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}},
		},
	}}
	strs := func(v ...string) *schemapb.FieldData {
		return &schemapb.FieldData{FieldId: 100, FieldName: "id", Type: schemapb.DataType_VarChar, Field: &schemapb.FieldData_Scalars{
			Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: v}}},
		}}
	}
	longs := func(v ...int64) *schemapb.FieldData {
		return &schemapb.FieldData{FieldId: 100, FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{
			Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: v}}},
		}}
	}
	vecs := func(v ...float32) *schemapb.FieldData {
		return &schemapb.FieldData{FieldId: 101, FieldName: "v", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{
			Vectors: &schemapb.VectorField{Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: v}}},
		}}
	}
	cases := []struct {
		name string
		fds  []*schemapb.FieldData
		n    int
		err  string
	}{
		{"valid", []*schemapb.FieldData{strs("1", "2"), vecs(1, 2, 3, 4)}, 2, ""},
		{"int64 data for a varchar key", []*schemapb.FieldData{longs(1, 2), vecs(1, 2, 3, 4)}, 2, "does not fit the field type VarChar"},
		{"missing field", []*schemapb.FieldData{strs("1", "2")}, 2, `lacks field "v"`},
		{"row count", []*schemapb.FieldData{strs("1"), vecs(1, 2, 3, 4)}, 2, `field "id" has 1 rows, want 2`},
		{"partial vector", []*schemapb.FieldData{strs("1", "2"), vecs(1, 2, 3)}, 2, "not whole vectors"},
		{"field twice", []*schemapb.FieldData{strs("1", "2"), strs("1", "2"), vecs(1, 2, 3, 4)}, 2, "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := InsertColumns(schema, tc.fds, tc.n)
			if tc.err == "" {
				require.NoError(t, err)
				require.Len(t, cols, 2)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}
