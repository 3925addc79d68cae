package column_test

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

func TestNullableVectorsFromCompactWire(t *testing.T) {
	valid := []bool{true, false, false, true}
	f := field(schemapb.DataType_FloatVector, "dim", "2")
	f.Nullable = true
	fd := &schemapb.FieldData{Type: schemapb.DataType_FloatVector, ValidData: valid, Field: vectors(&schemapb.VectorField{
		Dim:  2,
		Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: []float32{1, 2, 7, 8}}},
	})}
	c, err := column.FromFieldData(f, fd)
	require.NoError(t, err)
	fv := c.(*column.FloatVectors)
	require.Equal(t, 4, fv.Len())
	require.Equal(t, []float32{1, 2, 0, 0, 0, 0, 7, 8}, fv.Data)
	require.True(t, fv.IsNull(1))
	require.False(t, fv.IsNull(3))

	// Back on the wire only the non-null rows travel, with valid_data for all.
	out := column.ToFieldData("v", 101, c)
	require.Equal(t, valid, out.GetValidData())
	require.Equal(t, []float32{1, 2, 7, 8}, out.GetVectors().GetFloatVector().GetData())

	// Full-width data (one slot per row) is accepted as well.
	fd.GetVectors().GetFloatVector().Data = []float32{1, 2, 9, 9, 9, 9, 7, 8}
	c, err = column.FromFieldData(f, fd)
	require.NoError(t, err)
	require.Equal(t, 4, c.Len())
	require.Equal(t, []float32{1, 2, 7, 8}, column.ToFieldData("v", 101, c).GetVectors().GetFloatVector().GetData())
}

func TestNullableByteAndSparseVectors(t *testing.T) {
	valid := []bool{false, true, false}
	bf := field(schemapb.DataType_BinaryVector, "dim", "16")
	bf.Nullable = true
	c, err := column.FromFieldData(bf, &schemapb.FieldData{ValidData: valid, Field: vectors(&schemapb.VectorField{
		Dim:  16,
		Data: &schemapb.VectorField_BinaryVector{BinaryVector: []byte{0xab, 0xcd}},
	})})
	require.NoError(t, err)
	require.Equal(t, 3, c.Len())
	require.Equal(t, []byte{0, 0, 0xab, 0xcd, 0, 0}, c.(*column.ByteVectors).Data)
	require.Equal(t, []byte{0xab, 0xcd}, column.ToFieldData("b", 1, c).GetVectors().GetBinaryVector())

	sf := field(schemapb.DataType_SparseFloatVector)
	sf.Nullable = true
	row := []byte{1, 0, 0, 0, 0, 0, 0x80, 0x3f}
	c, err = column.FromFieldData(sf, &schemapb.FieldData{ValidData: valid, Field: vectors(&schemapb.VectorField{
		Data: &schemapb.VectorField_SparseFloatVector{SparseFloatVector: &schemapb.SparseFloatArray{Dim: 2, Contents: [][]byte{row}}},
	})})
	require.NoError(t, err)
	require.Equal(t, 3, c.Len())
	require.True(t, c.IsNull(0))
	require.Equal(t, [][]byte{row}, column.ToFieldData("s", 1, c).GetVectors().GetSparseFloatVector().GetContents())

	// All rows null: no vector data at all.
	c, err = column.FromFieldData(bf, &schemapb.FieldData{ValidData: []bool{false, false}, Field: vectors(&schemapb.VectorField{
		Dim:  16,
		Data: &schemapb.VectorField_BinaryVector{},
	})})
	require.NoError(t, err)
	require.Equal(t, 2, c.Len())
}

func TestNullableVectorsRowCountMismatch(t *testing.T) {
	f := field(schemapb.DataType_FloatVector, "dim", "2")
	f.Nullable = true
	_, err := column.FromFieldData(f, &schemapb.FieldData{ValidData: []bool{true, false, true}, Field: vectors(&schemapb.VectorField{
		Dim:  2,
		Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: []float32{1, 2}}},
	})})
	require.ErrorContains(t, err, "valid_data marks 2 of 3 rows as not null")
}

func TestNullableVectorsAllNullWithoutData(t *testing.T) {
	f := field(schemapb.DataType_FloatVector, "dim", "2")
	f.Nullable = true
	c, err := column.FromFieldData(f, &schemapb.FieldData{ValidData: []bool{false, false}, Field: vectors(&schemapb.VectorField{Dim: 2})})
	require.NoError(t, err)
	require.Equal(t, 2, c.Len())
	require.Empty(t, column.ToFieldData("v", 1, c).GetVectors().GetFloatVector().GetData())
	sf := field(schemapb.DataType_SparseFloatVector)
	sf.Nullable = true
	c, err = column.FromFieldData(sf, &schemapb.FieldData{ValidData: []bool{false}, Field: vectors(&schemapb.VectorField{})})
	require.NoError(t, err)
	require.Equal(t, 1, c.Len())
}
