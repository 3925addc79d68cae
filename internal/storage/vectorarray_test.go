package storage

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

// TestVectorArrayInsertLog checks that an ArrayOfVector column (the vector
// sub-field of an Array of Structs field) is written as one Binary payload
// row per embedding list, each a protobuf VectorField, and reads back with
// its dim and every list unchanged, empty lists included.
func TestVectorArrayInsertLog(t *testing.T) {
	field := fieldOf(105, schemapb.DataType_ArrayOfVector, dim(3))
	field.ElementType = schemapb.DataType_FloatVector
	col := &column.VectorArrays{Dim: 3, Data: [][]float32{
		{1, 2, 3, 4, 5, 6},
		{},
		{-1, 0.5, 7},
	}}
	data, err := EncodeInsertLog(testDesc(), field, col)
	require.NoError(t, err)
	b, err := DecodeBinlog(data)
	require.NoError(t, err)
	require.Equal(t, schemapb.DataType_ArrayOfVector, b.Descriptor.PayloadType)
	got, ok := b.Column().(*column.VectorArrays)
	require.True(t, ok, "got %T", b.Column())
	require.Equal(t, 3, got.Dim)
	require.Len(t, got.Data, 3)
	require.Equal(t, []int{2, 0, 1}, []int{got.Count(0), got.Count(1), got.Count(2)})
	require.Equal(t, col.Data[0], got.Data[0])
	require.Equal(t, col.Data[2], got.Data[2])
}
