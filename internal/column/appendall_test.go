package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestAppendAllMatchesAppendFrom(t *testing.T) {
	cases := []struct {
		name string
		dst  func() Column
		src  Column
	}{
		{
			"ints", func() Column { return &Ints{T: schemapb.DataType_Int64, Data: []int64{1}} },
			&Ints{T: schemapb.DataType_Int64, Data: []int64{2, 3}},
		},
		{
			"nullable src", func() Column { return &Ints{T: schemapb.DataType_Int64, Data: []int64{1}} },
			&Ints{Nulls: Nulls{Valid: []bool{false, true}}, T: schemapb.DataType_Int64, Data: []int64{0, 3}},
		},
		{"nullable dst", func() Column {
			return &Strings{Nulls: Nulls{Valid: []bool{false}}, T: schemapb.DataType_VarChar, Data: []string{""}}
		}, &Strings{T: schemapb.DataType_VarChar, Data: []string{"a", "b"}}},
		{
			"vectors", func() Column { return &FloatVectors{Dim: 2, Data: []float32{1, 2}} },
			&FloatVectors{Dim: 2, Data: []float32{3, 4, 5, 6}},
		},
		{
			"bytes", func() Column {
				return &ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 8, Width: 1, Data: []byte{1}}
			},
			&ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 8, Width: 1, Data: []byte{2, 3}},
		},
		{"json", func() Column { return &JSONs{} }, &JSONs{Data: [][]byte{[]byte(`{}`)}}},
		{"bools", func() Column { return &Bools{Data: []bool{true}} }, &Bools{Data: []bool{false}}},
		{"floats", func() Column { return &Floats{T: schemapb.DataType_Double} }, &Floats{T: schemapb.DataType_Double, Data: []float64{1.5}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bulk, rowwise := tc.dst(), tc.dst()
			AppendAll(bulk, tc.src)
			for i := 0; i < tc.src.Len(); i++ {
				rowwise.AppendFrom(tc.src, i)
			}
			require.Equal(t, rowwise, bulk)
		})
	}
}
