package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestWiden(t *testing.T) {
	f16 := &ByteVectors{T: schemapb.DataType_Float16Vector, Dim: 2, Width: 4, Data: []byte{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38, 0x00, 0x00}}
	require.Equal(t, &FloatVectors{Dim: 2, Data: []float32{1, -2, 0.5, 0}}, f16.Widen())
	bf16 := &ByteVectors{T: schemapb.DataType_BFloat16Vector, Dim: 1, Width: 2, Data: []byte{0x80, 0x3f}}
	require.Equal(t, []float32{1}, bf16.Widen().Data)
	i8 := &ByteVectors{T: schemapb.DataType_Int8Vector, Dim: 3, Width: 3, Data: []byte{0x80, 0xff, 0x7f}}
	require.Equal(t, []float32{-128, -1, 127}, i8.Widen().Data)
	bin := &ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 8, Width: 1, Data: []byte{1}}
	require.Nil(t, bin.Widen())
	require.Nil(t, WidenFunc(schemapb.DataType_FloatVector))
}
