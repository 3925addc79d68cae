package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

// TestAppendValue: a value of the column's element type is a new row, nil
// the type's zero slot; anything else is refused and leaves the column as
// it was.
func TestAppendValue(t *testing.T) {
	row := func(idx uint32) []byte { return []byte{byte(idx), 0, 0, 0, 0, 0, 0x80, 0x3f} } // (idx, 1.0)
	for _, tc := range []struct {
		name   string
		c      Column
		values []any
		want   Column
	}{
		{"bools", &Bools{}, []any{true, nil}, &Bools{Data: []bool{true, false}}},
		{"ints", &Ints{T: schemapb.DataType_Int16}, []any{int64(-3), nil}, &Ints{T: schemapb.DataType_Int16, Data: []int64{-3, 0}}},
		{"floats", &Floats{T: schemapb.DataType_Float}, []any{1.5}, &Floats{T: schemapb.DataType_Float, Data: []float64{1.5}}},
		{"strings", &Strings{T: schemapb.DataType_VarChar}, []any{"a", nil}, &Strings{T: schemapb.DataType_VarChar, Data: []string{"a", ""}}},
		{"jsons", &JSONs{}, []any{[]byte(`{}`)}, &JSONs{Data: [][]byte{[]byte(`{}`)}}},
		{"arrays", &Arrays{Elem: schemapb.DataType_Bool}, []any{nil}, &Arrays{Elem: schemapb.DataType_Bool, Data: []*schemapb.ScalarField{{}}}},
		{"float vectors", &FloatVectors{Dim: 2}, []any{[]float32{1, 2}, nil}, &FloatVectors{Dim: 2, Data: []float32{1, 2, 0, 0}}},
		{
			"byte vectors", &ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2},
			[]any{nil, []byte{1, 2}},
			&ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2, Data: []byte{0, 0, 1, 2}},
		},
		{"sparse vectors", &SparseVectors{}, []any{row(4), nil, row(2)}, &SparseVectors{Dim: 5, Data: [][]byte{row(4), nil, row(2)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range tc.values {
				require.NoError(t, AppendValue(tc.c, v))
			}
			require.Equal(t, tc.want, tc.c)
		})
	}

	for _, tc := range []struct {
		name string
		c    Column
		v    any
	}{
		{"int into ints", &Ints{T: schemapb.DataType_Int32}, 3},
		{"string into bools", &Bools{}, "true"},
		{"short vector", &FloatVectors{Dim: 2}, []float32{1}},
		{"float64 vector", &FloatVectors{Dim: 1}, []float64{1}},
		{"wide byte vector", &ByteVectors{T: schemapb.DataType_Int8Vector, Dim: 1, Width: 1}, []byte{1, 2}},
		{"geometries", &Geometries{}, []byte{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, AppendValue(tc.c, tc.v))
			require.Zero(t, tc.c.Len())
		})
	}
}

func TestSetValidity(t *testing.T) {
	c := &FloatVectors{Dim: 1, Data: []float32{1, 0}}
	SetValidity(c, []bool{true, false})
	require.True(t, c.IsNull(1))
	require.False(t, c.IsNull(0))
	require.Equal(t, []bool{true, false}, c.Validity())
	SetValidity(c, nil)
	require.False(t, c.IsNull(1))
}
