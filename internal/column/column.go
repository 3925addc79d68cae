// Package column holds Strata's in-memory columnar data: one typed Go slice
// per field, with an optional validity mask for nullable fields.
//
// Every component that touches row data (proxy validation, data node write
// buffers, binlog encoding, query node segments, the filter evaluator) uses
// these types, so conversions to and from the Milvus wire format
// (schemapb.FieldData) live here and nowhere else.
//
// Integer types (Int8, Int16, Int32, Int64) share one representation, Ints,
// whose values are int64; floating types (Float, Double) share Floats, whose
// values are float64. Float32 values convert to float64 and back exactly, so
// nothing is lost; the column's DataType says how it is stored on disk.
package column

import (
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// Column is one field's values for a run of rows.
type Column interface {
	// Type is the Milvus data type of the column.
	Type() schemapb.DataType
	// Len is the number of rows.
	Len() int
	// IsNull reports whether row i is null (always false for non-nullable columns).
	IsNull(i int) bool
	// Take returns a new column holding rows idx, in that order.
	Take(idx []int) Column
	// AppendFrom appends row i of src, which must have the same concrete type.
	AppendFrom(src Column, i int)
	// Validity returns the validity mask (true = value present); nil means no nulls.
	Validity() []bool
	// MemorySize estimates the bytes the values occupy (used for buffer accounting).
	MemorySize() int
}

// Nulls is an optional validity mask embedded in every column type.
// A nil Valid slice means every row holds a value.
type Nulls struct {
	Valid []bool
}

// IsNull reports whether row i is null.
func (n *Nulls) IsNull(i int) bool { return n.Valid != nil && !n.Valid[i] }

// Validity returns the mask (nil when every row is valid).
func (n *Nulls) Validity() []bool { return n.Valid }

// nulls gives the column types that embed Nulls one way to reach their mask.
func (n *Nulls) nulls() *Nulls { return n }

func (n *Nulls) takeValid(idx []int) []bool {
	if n.Valid == nil {
		return nil
	}
	out := make([]bool, len(idx))
	for k, i := range idx {
		out[k] = n.Valid[i]
	}
	return out
}

func (n *Nulls) appendValid(src *Nulls, i, curLen int) {
	if src.Valid == nil && n.Valid == nil {
		return
	}
	if n.Valid == nil {
		n.Valid = make([]bool, curLen, curLen+1)
		for k := range n.Valid {
			n.Valid[k] = true
		}
	}
	n.Valid = append(n.Valid, src.Valid == nil || src.Valid[i])
}

// Bools is a Bool column.
type Bools struct {
	Nulls
	Data []bool
}

// Ints is an Int8, Int16, Int32 or Int64 column (values widened to int64).
type Ints struct {
	Nulls
	T    schemapb.DataType
	Data []int64
}

// Floats is a Float or Double column (values widened to float64).
type Floats struct {
	Nulls
	T    schemapb.DataType
	Data []float64
}

// Strings is a VarChar or String column.
type Strings struct {
	Nulls
	T    schemapb.DataType
	Data []string
}

// JSONs is a JSON column; each value is one raw JSON document.
type JSONs struct {
	Nulls
	Data [][]byte
}

// Arrays is an Array column; each value is a typed scalar list.
type Arrays struct {
	Nulls
	Elem schemapb.DataType
	Data []*schemapb.ScalarField
}

// FloatVectors is a FloatVector column stored row-major: row i is Data[i*Dim:(i+1)*Dim].
type FloatVectors struct {
	Nulls
	Dim  int
	Data []float32
}

// ByteVectors is a fixed-width byte vector column (BinaryVector, Float16Vector,
// BFloat16Vector, Int8Vector): row i is Data[i*Width:(i+1)*Width].
type ByteVectors struct {
	Nulls
	T     schemapb.DataType
	Dim   int
	Width int
	Data  []byte
}

// SparseVectors is a SparseFloatVector column; each row is n×(uint32 index, float32 value) LE.
type SparseVectors struct {
	Nulls
	Dim  int64
	Data [][]byte
}

// Type implements Column.
func (c *Bools) Type() schemapb.DataType { return schemapb.DataType_Bool }

// Type implements Column.
func (c *Ints) Type() schemapb.DataType { return c.T }

// Type implements Column.
func (c *Floats) Type() schemapb.DataType { return c.T }

// Type implements Column.
func (c *Strings) Type() schemapb.DataType { return c.T }

// Type implements Column.
func (c *JSONs) Type() schemapb.DataType { return schemapb.DataType_JSON }

// Type implements Column.
func (c *Arrays) Type() schemapb.DataType { return schemapb.DataType_Array }

// Type implements Column.
func (c *FloatVectors) Type() schemapb.DataType { return schemapb.DataType_FloatVector }

// Type implements Column.
func (c *ByteVectors) Type() schemapb.DataType { return c.T }

// Type implements Column.
func (c *SparseVectors) Type() schemapb.DataType { return schemapb.DataType_SparseFloatVector }

// Len implements Column.
func (c *Bools) Len() int { return len(c.Data) }

// Len implements Column.
func (c *Ints) Len() int { return len(c.Data) }

// Len implements Column.
func (c *Floats) Len() int { return len(c.Data) }

// Len implements Column.
func (c *Strings) Len() int { return len(c.Data) }

// Len implements Column.
func (c *JSONs) Len() int { return len(c.Data) }

// Len implements Column.
func (c *Arrays) Len() int { return len(c.Data) }

// Len implements Column.
func (c *FloatVectors) Len() int {
	if c.Dim == 0 {
		return 0
	}
	return len(c.Data) / c.Dim
}

// Len implements Column.
func (c *ByteVectors) Len() int {
	if c.Width == 0 {
		return 0
	}
	return len(c.Data) / c.Width
}

// Len implements Column.
func (c *SparseVectors) Len() int { return len(c.Data) }

// Row returns vector i.
func (c *FloatVectors) Row(i int) []float32 { return c.Data[i*c.Dim : (i+1)*c.Dim] }

// Row returns vector i.
func (c *ByteVectors) Row(i int) []byte { return c.Data[i*c.Width : (i+1)*c.Width] }

func takeSlice[T any](data []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = data[i]
	}
	return out
}

// Take implements Column.
func (c *Bools) Take(idx []int) Column {
	return &Bools{Nulls{c.takeValid(idx)}, takeSlice(c.Data, idx)}
}

// Take implements Column.
func (c *Ints) Take(idx []int) Column {
	return &Ints{Nulls{c.takeValid(idx)}, c.T, takeSlice(c.Data, idx)}
}

// Take implements Column.
func (c *Floats) Take(idx []int) Column {
	return &Floats{Nulls{c.takeValid(idx)}, c.T, takeSlice(c.Data, idx)}
}

// Take implements Column.
func (c *Strings) Take(idx []int) Column {
	return &Strings{Nulls{c.takeValid(idx)}, c.T, takeSlice(c.Data, idx)}
}

// Take implements Column.
func (c *JSONs) Take(idx []int) Column {
	return &JSONs{Nulls{c.takeValid(idx)}, takeSlice(c.Data, idx)}
}

// Take implements Column.
func (c *Arrays) Take(idx []int) Column {
	return &Arrays{Nulls{c.takeValid(idx)}, c.Elem, takeSlice(c.Data, idx)}
}

// Take implements Column.
func (c *FloatVectors) Take(idx []int) Column {
	out := make([]float32, 0, len(idx)*c.Dim)
	for _, i := range idx {
		out = append(out, c.Row(i)...)
	}
	return &FloatVectors{Nulls{c.takeValid(idx)}, c.Dim, out}
}

// Take implements Column.
func (c *ByteVectors) Take(idx []int) Column {
	out := make([]byte, 0, len(idx)*c.Width)
	for _, i := range idx {
		out = append(out, c.Row(i)...)
	}
	return &ByteVectors{Nulls{c.takeValid(idx)}, c.T, c.Dim, c.Width, out}
}

// Take implements Column.
func (c *SparseVectors) Take(idx []int) Column {
	return &SparseVectors{Nulls{c.takeValid(idx)}, c.Dim, takeSlice(c.Data, idx)}
}

// AppendFrom implements Column.
func (c *Bools) AppendFrom(src Column, i int) {
	s := src.(*Bools)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// AppendFrom implements Column.
func (c *Ints) AppendFrom(src Column, i int) {
	s := src.(*Ints)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// AppendFrom implements Column.
func (c *Floats) AppendFrom(src Column, i int) {
	s := src.(*Floats)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// AppendFrom implements Column.
func (c *Strings) AppendFrom(src Column, i int) {
	s := src.(*Strings)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// AppendFrom implements Column.
func (c *JSONs) AppendFrom(src Column, i int) {
	s := src.(*JSONs)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// AppendFrom implements Column.
func (c *Arrays) AppendFrom(src Column, i int) {
	s := src.(*Arrays)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// AppendFrom implements Column.
func (c *FloatVectors) AppendFrom(src Column, i int) {
	s := src.(*FloatVectors)
	c.appendValid(&s.Nulls, i, c.Len())
	c.Data = append(c.Data, s.Row(i)...)
}

// AppendFrom implements Column.
func (c *ByteVectors) AppendFrom(src Column, i int) {
	s := src.(*ByteVectors)
	c.appendValid(&s.Nulls, i, c.Len())
	c.Data = append(c.Data, s.Row(i)...)
}

// AppendFrom implements Column.
func (c *SparseVectors) AppendFrom(src Column, i int) {
	s := src.(*SparseVectors)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
	c.Dim = max(c.Dim, s.Dim)
}

// MemorySize implements Column.
func (c *Bools) MemorySize() int { return len(c.Data) }

// MemorySize implements Column.
func (c *Ints) MemorySize() int { return len(c.Data) * intWidth(c.T) }

// MemorySize implements Column.
func (c *Floats) MemorySize() int {
	if c.T == schemapb.DataType_Float {
		return len(c.Data) * 4
	}
	return len(c.Data) * 8
}

// MemorySize implements Column.
func (c *Strings) MemorySize() int {
	n := 0
	for _, s := range c.Data {
		n += len(s) + 16
	}
	return n
}

// MemorySize implements Column.
func (c *JSONs) MemorySize() int {
	n := 0
	for _, s := range c.Data {
		n += len(s) + 16
	}
	return n
}

// MemorySize implements Column.
func (c *Arrays) MemorySize() int {
	n := 0
	for _, a := range c.Data {
		n += 16
		if a != nil {
			n += scalarSize(a)
		}
	}
	return n
}

// MemorySize implements Column.
func (c *FloatVectors) MemorySize() int { return len(c.Data) * 4 }

// MemorySize implements Column.
func (c *ByteVectors) MemorySize() int { return len(c.Data) }

// MemorySize implements Column.
func (c *SparseVectors) MemorySize() int {
	n := 0
	for _, s := range c.Data {
		n += len(s) + 16
	}
	return n
}

func intWidth(t schemapb.DataType) int {
	switch t {
	case schemapb.DataType_Int8:
		return 1
	case schemapb.DataType_Int16:
		return 2
	case schemapb.DataType_Int32:
		return 4
	default:
		return 8
	}
}

// New returns an empty column of the field's type.
func New(f *schemapb.FieldSchema) (Column, error) {
	switch t := f.GetDataType(); t {
	case schemapb.DataType_Bool:
		return &Bools{}, nil
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64,
		schemapb.DataType_Timestamptz:
		return &Ints{T: t}, nil
	case schemapb.DataType_Float, schemapb.DataType_Double:
		return &Floats{T: t}, nil
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		return &Strings{T: t}, nil
	case schemapb.DataType_JSON:
		return &JSONs{}, nil
	case schemapb.DataType_Geometry:
		return &Geometries{}, nil
	case schemapb.DataType_Array:
		return &Arrays{Elem: f.GetElementType()}, nil
	case schemapb.DataType_FloatVector:
		dim, err := Dim(f)
		if err != nil {
			return nil, err
		}
		return &FloatVectors{Dim: dim}, nil
	case schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector:
		dim, err := Dim(f)
		if err != nil {
			return nil, err
		}
		return &ByteVectors{T: t, Dim: dim, Width: VectorWidth(t, dim)}, nil
	case schemapb.DataType_SparseFloatVector:
		return &SparseVectors{}, nil
	case schemapb.DataType_ArrayOfVector:
		dim, err := Dim(f)
		if err != nil {
			return nil, err
		}
		return &VectorArrays{Dim: dim}, nil
	default:
		return nil, fmt.Errorf("column: data type %s is not supported", t)
	}
}

// VectorWidth is the byte width of one fixed-width vector of type t and dimension dim.
func VectorWidth(t schemapb.DataType, dim int) int {
	switch t {
	case schemapb.DataType_BinaryVector:
		return (dim + 7) / 8
	case schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector:
		return dim * 2
	case schemapb.DataType_Int8Vector:
		return dim
	case schemapb.DataType_FloatVector:
		return dim * 4
	}
	return 0
}

// IsVector reports whether t is a vector type.
func IsVector(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector,
		schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector,
		schemapb.DataType_SparseFloatVector, schemapb.DataType_Int8Vector:
		return true
	}
	return false
}

// AppendAll appends every row of src to dst; both must have the same
// concrete type. It copies whole slices rather than row by row.
func AppendAll(dst, src Column) {
	n := dst.Len()
	switch d := dst.(type) {
	case *Bools:
		s := src.(*Bools)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
	case *Ints:
		s := src.(*Ints)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
	case *Floats:
		s := src.(*Floats)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
	case *Strings:
		s := src.(*Strings)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
	case *JSONs:
		s := src.(*JSONs)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
	case *Geometries:
		s := src.(*Geometries)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
	case *Arrays:
		s := src.(*Arrays)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
	case *FloatVectors:
		s := src.(*FloatVectors)
		d.appendValidAll(&s.Nulls, n, s.Len())
		d.Data = append(d.Data, s.Data...)
	case *ByteVectors:
		s := src.(*ByteVectors)
		d.appendValidAll(&s.Nulls, n, s.Len())
		d.Data = append(d.Data, s.Data...)
	case *SparseVectors:
		s := src.(*SparseVectors)
		d.appendValidAll(&s.Nulls, n, len(s.Data))
		d.Data = append(d.Data, s.Data...)
		if s.Dim > d.Dim {
			d.Dim = s.Dim
		}
	default:
		for i := 0; i < src.Len(); i++ {
			dst.AppendFrom(src, i)
		}
	}
}

// appendValidAll extends the mask for m appended rows from src.
func (n *Nulls) appendValidAll(src *Nulls, curLen, m int) {
	if src.Valid == nil && n.Valid == nil {
		return
	}
	if n.Valid == nil {
		n.Valid = make([]bool, curLen, curLen+m)
		for k := range n.Valid {
			n.Valid[k] = true
		}
	}
	if src.Valid == nil {
		for k := 0; k < m; k++ {
			n.Valid = append(n.Valid, true)
		}
		return
	}
	n.Valid = append(n.Valid, src.Valid[:m]...)
}
