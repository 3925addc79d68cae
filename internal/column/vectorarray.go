package column

import (
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// VectorArrays is an ArrayOfVector column: each row is an embedding list, a
// list of FloatVector values of one dimension (the vector sub-field of an
// Array of Structs field). Row i holds len(Data[i])/Dim vectors, row-major.
// FloatVector is the only element type Milvus 2.6 supports.
type VectorArrays struct {
	Nulls
	Dim  int
	Data [][]float32
}

// Type implements Column.
func (c *VectorArrays) Type() schemapb.DataType { return schemapb.DataType_ArrayOfVector }

// Len implements Column.
func (c *VectorArrays) Len() int { return len(c.Data) }

// Count is the number of vectors in row i.
func (c *VectorArrays) Count(i int) int {
	if c.Dim == 0 {
		return 0
	}
	return len(c.Data[i]) / c.Dim
}

// Take implements Column.
func (c *VectorArrays) Take(idx []int) Column {
	return &VectorArrays{Nulls{c.takeValid(idx)}, c.Dim, takeSlice(c.Data, idx)}
}

// AppendFrom implements Column.
func (c *VectorArrays) AppendFrom(src Column, i int) {
	s := src.(*VectorArrays)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// MemorySize implements Column.
func (c *VectorArrays) MemorySize() int {
	n := 0
	for _, r := range c.Data {
		n += 4*len(r) + 24
	}
	return n
}

// vectorArraysFromFieldData decodes an ArrayOfVector wire column: one
// VectorField per row in vectors.vector_array.data, each a FloatVector
// whose length is a whole number of vectors of the field's dim.
func vectorArraysFromFieldData(f *schemapb.FieldSchema, fd *schemapb.FieldData) (Column, error) {
	name := f.GetName()
	dim, err := Dim(f)
	if err != nil {
		return nil, err
	}
	va := fd.GetVectors().GetVectorArray()
	if va == nil {
		return nil, fmt.Errorf("column: field %q: data of type %s does not fit the field type %s", name, fd.GetType(), f.GetDataType())
	}
	if et := va.GetElementType(); et != schemapb.DataType_None && et != schemapb.DataType_FloatVector {
		return nil, fmt.Errorf("column: field %q: element type %s is not supported, only FloatVector", name, et)
	}
	if d := va.GetDim(); d != 0 && int(d) != dim {
		return nil, fmt.Errorf("column: field %q: the dim (%d) of the data is not the schema's dim (%d)", name, d, dim)
	}
	out := &VectorArrays{Dim: dim, Data: make([][]float32, len(va.GetData()))}
	for i, v := range va.GetData() {
		if d := v.GetDim(); d != 0 && int(d) != dim {
			return nil, fmt.Errorf("column: field %q: row %d: the dim (%d) of the data is not the schema's dim (%d)", name, i, d, dim)
		}
		if v.GetData() != nil && v.GetFloatVector() == nil {
			return nil, fmt.Errorf("column: field %q: row %d does not hold FloatVector data", name, i)
		}
		data := v.GetFloatVector().GetData()
		if dim <= 0 || len(data)%dim != 0 {
			return nil, fmt.Errorf("column: field %q: row %d: %d floats are not whole vectors of dim %d", name, i, len(data), dim)
		}
		out.Data[i] = data
	}
	return out, nil
}

// vectorArraysToFieldData is the wire form of c (see vectorArraysFromFieldData).
func vectorArraysToFieldData(c *VectorArrays) *schemapb.FieldData_Vectors {
	rows := make([]*schemapb.VectorField, len(c.Data))
	for i, r := range c.Data {
		rows[i] = &schemapb.VectorField{
			Dim:  int64(c.Dim),
			Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: r}},
		}
	}
	return &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
		Dim: int64(c.Dim),
		Data: &schemapb.VectorField_VectorArray{VectorArray: &schemapb.VectorArray{
			Dim: int64(c.Dim), Data: rows,
			ElementType: schemapb.DataType_FloatVector,
		}},
	}}
}
