package column_test

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func field(t schemapb.DataType, params ...string) *schemapb.FieldSchema {
	f := &schemapb.FieldSchema{FieldID: 101, Name: "f", DataType: t}
	for i := 0; i+1 < len(params); i += 2 {
		f.TypeParams = append(f.TypeParams, &commonpb.KeyValuePair{Key: params[i], Value: params[i+1]})
	}
	return f
}

func scalars(s *schemapb.ScalarField) *schemapb.FieldData_Scalars {
	return &schemapb.FieldData_Scalars{Scalars: s}
}

func vectors(v *schemapb.VectorField) *schemapb.FieldData_Vectors {
	return &schemapb.FieldData_Vectors{Vectors: v}
}

func intArr(v ...int32) *schemapb.ScalarField {
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: v}}}
}

// TestFieldDataRoundTrip converts every type wire → Column → wire and checks
// the column's length, nulls and that the wire form comes back unchanged.
func TestFieldDataRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     *schemapb.FieldSchema
		data  any // FieldData.Field
		valid []bool
		rows  int
	}{
		{
			"bool", field(schemapb.DataType_Bool),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: []bool{true, false, true}}}}), nil, 3,
		},
		{"int8", field(schemapb.DataType_Int8), scalars(intArr(-128, 0, 127)), nil, 3},
		{"int16", field(schemapb.DataType_Int16), scalars(intArr(-32768, 32767)), nil, 2},
		{"int32", field(schemapb.DataType_Int32), scalars(intArr(-1<<31, 1<<31-1)), nil, 2},
		{
			"int64", field(schemapb.DataType_Int64),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{-1 << 63, 0, 1<<63 - 1}}}}), nil, 3,
		},
		{
			"float", field(schemapb.DataType_Float),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: []float32{1.5, -2.25}}}}), nil, 2,
		},
		{
			"double", field(schemapb.DataType_Double),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: []float64{1e300, -1e-300}}}}), nil, 2,
		},
		{
			"varchar", field(schemapb.DataType_VarChar, "max_length", "8"),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"", "héllo"}}}}), nil, 2,
		},
		{
			"json", field(schemapb.DataType_JSON),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: [][]byte{[]byte(`{"a":1}`), []byte(`[]`)}}}}), nil, 2,
		},
		{
			"array", &schemapb.FieldSchema{FieldID: 101, Name: "f", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int32},
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_ArrayData{ArrayData: &schemapb.ArrayArray{
				ElementType: schemapb.DataType_Int32, Data: []*schemapb.ScalarField{intArr(1, 2), intArr()},
			}}}), nil, 2,
		},
		{
			"float vector", field(schemapb.DataType_FloatVector, "dim", "2"),
			vectors(&schemapb.VectorField{Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: []float32{1, 2, 3, 4, 5, 6}}}}), nil, 3,
		},
		{
			"binary vector", field(schemapb.DataType_BinaryVector, "dim", "16"),
			vectors(&schemapb.VectorField{Dim: 16, Data: &schemapb.VectorField_BinaryVector{BinaryVector: []byte{1, 2, 3, 4}}}), nil, 2,
		},
		{
			"float16 vector", field(schemapb.DataType_Float16Vector, "dim", "2"),
			vectors(&schemapb.VectorField{Dim: 2, Data: &schemapb.VectorField_Float16Vector{Float16Vector: []byte{1, 2, 3, 4}}}), nil, 1,
		},
		{
			"bfloat16 vector", field(schemapb.DataType_BFloat16Vector, "dim", "1"),
			vectors(&schemapb.VectorField{Dim: 1, Data: &schemapb.VectorField_Bfloat16Vector{Bfloat16Vector: []byte{1, 2, 3, 4}}}), nil, 2,
		},
		{
			"int8 vector", field(schemapb.DataType_Int8Vector, "dim", "3"),
			vectors(&schemapb.VectorField{Dim: 3, Data: &schemapb.VectorField_Int8Vector{Int8Vector: []byte{1, 2, 3, 4, 5, 6}}}), nil, 2,
		},
		{
			"sparse vector", field(schemapb.DataType_SparseFloatVector),
			vectors(&schemapb.VectorField{Dim: 10, Data: &schemapb.VectorField_SparseFloatVector{SparseFloatVector: &schemapb.SparseFloatArray{
				Dim: 10, Contents: [][]byte{{1, 0, 0, 0, 0, 0, 128, 63}, {}},
			}}}), nil, 2,
		},
		{
			"nullable int64, full", field(schemapb.DataType_Int64),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1, 0, 3}}}}),
			[]bool{true, false, true},
			3,
		},
		{
			"nullable varchar, full", field(schemapb.DataType_VarChar, "max_length", "8"),
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"", "b"}}}}),
			[]bool{false, true},
			2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd := &schemapb.FieldData{Type: tc.f.GetDataType(), FieldName: "f", FieldId: 101, ValidData: tc.valid}
			switch d := tc.data.(type) {
			case *schemapb.FieldData_Scalars:
				fd.Field = d
			case *schemapb.FieldData_Vectors:
				fd.Field = d
			}
			c, err := column.FromFieldData(tc.f, fd)
			require.NoError(t, err)
			require.Equal(t, tc.f.GetDataType(), c.Type())
			require.Equal(t, tc.rows, c.Len())
			for i := range tc.rows {
				require.Equal(t, tc.valid != nil && !tc.valid[i], c.IsNull(i), "row %d", i)
			}
			back := column.ToFieldData("f", 101, c)
			require.True(t, proto.Equal(fd, back), "round trip changed the wire form:\n%v\n%v", fd, back)

			// Take and AppendFrom keep values and nulls.
			idx := make([]int, 0, tc.rows)
			for i := tc.rows - 1; i >= 0; i-- {
				idx = append(idx, i)
			}
			rev := c.Take(idx)
			require.Equal(t, tc.rows, rev.Len())
			again, err := column.New(tc.f)
			require.NoError(t, err)
			for i := range idx {
				again.AppendFrom(rev, idx[i])
			}
			if tc.valid == nil {
				require.Nil(t, again.Validity())
			}
			require.True(t, proto.Equal(fd, column.ToFieldData("f", 101, again)), "take+append reversed twice")
		})
	}
}

// TestNullableCompact checks that compact valid_data (values only for valid
// rows, as the SDKs send them) is spread over the rows and comes back with one
// slot per row, null rows holding the zero value.
func TestNullableCompact(t *testing.T) {
	valid := []bool{false, true, false, true, true}
	for _, tc := range []struct {
		name string
		f    *schemapb.FieldSchema
		in   *schemapb.ScalarField
		want *schemapb.ScalarField
	}{
		{"int32", field(schemapb.DataType_Int32), intArr(1, 2, 3), intArr(0, 1, 0, 2, 3)},
		{
			"int64", field(schemapb.DataType_Int64),
			&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1, 2, 3}}}},
			&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{0, 1, 0, 2, 3}}}},
		},
		{
			"bool", field(schemapb.DataType_Bool),
			&schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: []bool{true, true, true}}}},
			&schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: []bool{false, true, false, true, true}}}},
		},
		{
			"float", field(schemapb.DataType_Float),
			&schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: []float32{1, 2, 3}}}},
			&schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: []float32{0, 1, 0, 2, 3}}}},
		},
		{
			"double", field(schemapb.DataType_Double),
			&schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: []float64{1, 2, 3}}}},
			&schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: []float64{0, 1, 0, 2, 3}}}},
		},
		{
			"varchar", field(schemapb.DataType_VarChar, "max_length", "4"),
			&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"a", "b", "c"}}}},
			&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"", "a", "", "b", "c"}}}},
		},
		{
			"json", field(schemapb.DataType_JSON),
			&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: [][]byte{[]byte("1"), []byte("2"), []byte("3")}}}},
			&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: [][]byte{nil, []byte("1"), nil, []byte("2"), []byte("3")}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Nullable = true
			fd := &schemapb.FieldData{
				Type: tc.f.GetDataType(), FieldName: "f", FieldId: 101, ValidData: valid,
				Field: &schemapb.FieldData_Scalars{Scalars: tc.in},
			}
			c, err := column.FromFieldData(tc.f, fd)
			require.NoError(t, err)
			require.Equal(t, len(valid), c.Len())
			require.Equal(t, valid, c.Validity())
			back := column.ToFieldData("f", 101, c)
			require.Equal(t, valid, back.GetValidData())
			require.True(t, proto.Equal(tc.want, back.GetScalars()), "got %v", back.GetScalars())
		})
	}
}

func TestFromFieldDataErrors(t *testing.T) {
	longs := &schemapb.FieldData{Field: scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1}}}})}
	for _, tc := range []struct {
		name string
		f    *schemapb.FieldSchema
		fd   *schemapb.FieldData
		msg  string
	}{
		{"type mismatch", field(schemapb.DataType_Bool), longs, "does not fit"},
		{"varchar gets longs", field(schemapb.DataType_VarChar, "max_length", "3"), longs, "does not fit"},
		{"vector without dim", field(schemapb.DataType_FloatVector), longs, "dim is missing"},
		{"dim not a number", field(schemapb.DataType_FloatVector, "dim", "x"), longs, "not an integer"},
		{"partial vector", field(schemapb.DataType_FloatVector, "dim", "4"), &schemapb.FieldData{Field: vectors(&schemapb.VectorField{
			Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: []float32{1, 2, 3}}},
		})}, "whole vectors"},
		{"partial binary vector", field(schemapb.DataType_BinaryVector, "dim", "16"), &schemapb.FieldData{Field: vectors(&schemapb.VectorField{
			Data: &schemapb.VectorField_BinaryVector{BinaryVector: []byte{1, 2, 3}},
		})}, "whole vectors"},
		{"unsupported type", field(schemapb.DataType_None), longs, "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := column.FromFieldData(tc.f, tc.fd)
			require.ErrorContains(t, err, tc.msg)
			require.ErrorContains(t, err, `"f"`, "the error names the field")
		})
	}
}
