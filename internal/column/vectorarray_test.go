package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func vectorArrayField(dim string) *schemapb.FieldSchema {
	return &schemapb.FieldSchema{
		FieldID: 105, Name: "clips[emb]", DataType: schemapb.DataType_ArrayOfVector,
		ElementType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: dim}},
	}
}

// TestVectorArraysWire checks the wire round trip of an ArrayOfVector
// column (one VectorField per row in vector_array) and the row operations.
func TestVectorArraysWire(t *testing.T) {
	f := vectorArrayField("2")
	c := &VectorArrays{Dim: 2, Data: [][]float32{{1, 2, 3, 4}, {}, {5, 6}}}
	fd := ToFieldData(f.GetName(), f.GetFieldID(), c)
	require.Equal(t, schemapb.DataType_ArrayOfVector, fd.GetType())
	va := fd.GetVectors().GetVectorArray()
	require.Equal(t, int64(2), va.GetDim())
	require.Equal(t, schemapb.DataType_FloatVector, va.GetElementType())
	require.Len(t, va.GetData(), 3)

	back, err := FromFieldData(f, fd)
	require.NoError(t, err)
	got := back.(*VectorArrays)
	require.Equal(t, 3, got.Len())
	require.Equal(t, []int{2, 0, 1}, []int{got.Count(0), got.Count(1), got.Count(2)})

	taken := got.Take([]int{2, 0}).(*VectorArrays)
	require.Equal(t, [][]float32{{5, 6}, {1, 2, 3, 4}}, taken.Data)
	taken.AppendFrom(got, 1)
	require.Equal(t, 3, taken.Len())
	require.Equal(t, 0, taken.Count(2))

	empty, err := New(f)
	require.NoError(t, err)
	AppendAll(empty, got)
	require.Equal(t, got.Data, empty.(*VectorArrays).Data)
}

// TestVectorArraysWireErrors checks that rows that are not whole vectors of
// the field's dim, or of another element type, are refused.
func TestVectorArraysWireErrors(t *testing.T) {
	f := vectorArrayField("2")
	for name, fd := range map[string]*schemapb.FieldData{
		"partial vector": ToFieldData("x", 105, &VectorArrays{Dim: 2, Data: [][]float32{{1, 2, 3}}}),
		"dim mismatch":   ToFieldData("x", 105, &VectorArrays{Dim: 3, Data: [][]float32{{1, 2, 3}}}),
		"not an array":   ToFieldData("x", 105, &FloatVectors{Dim: 2, Data: []float32{1, 2}}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := FromFieldData(f, fd)
			require.Error(t, err)
		})
	}
}
