package column

import (
	"fmt"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"
)

// Dim returns the "dim" type parameter of a vector field.
func Dim(f *schemapb.FieldSchema) (int, error) {
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == "dim" {
			d, err := strconv.Atoi(kv.GetValue())
			if err != nil {
				return 0, fmt.Errorf("column: field %q: dim %q is not an integer", f.GetName(), kv.GetValue())
			}
			return d, nil
		}
	}
	return 0, fmt.Errorf("column: field %q: dim is missing", f.GetName())
}

func scalarSize(s *schemapb.ScalarField) int { return proto.Size(s) }

// FromFieldData converts a wire column into a Column for field f.
// It checks that the wire type fits the field and that fixed-width vectors
// are whole rows; it does not validate values (the proxy does that).
func FromFieldData(f *schemapb.FieldSchema, fd *schemapb.FieldData) (Column, error) {
	name := f.GetName()
	valid := fd.GetValidData()
	if len(valid) == 0 {
		valid = nil
	}
	bad := func() error {
		return fmt.Errorf("column: field %q: data of type %s does not fit the field type %s", name, fd.GetType(), f.GetDataType())
	}
	switch t := f.GetDataType(); t {
	case schemapb.DataType_Bool:
		d := fd.GetScalars().GetBoolData()
		if d == nil {
			return nil, bad()
		}
		return &Bools{Nulls{valid}, expand(d.GetData(), valid)}, nil
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		d := fd.GetScalars().GetIntData()
		if d == nil {
			return nil, bad()
		}
		src := expand(d.GetData(), valid)
		out := make([]int64, len(src))
		for i, v := range src {
			out[i] = int64(v)
		}
		return &Ints{Nulls{valid}, t, out}, nil
	case schemapb.DataType_Int64:
		d := fd.GetScalars().GetLongData()
		if d == nil {
			return nil, bad()
		}
		return &Ints{Nulls{valid}, t, expand(d.GetData(), valid)}, nil
	case schemapb.DataType_Timestamptz:
		return timestamptzFromFieldData(f, fd, valid)
	case schemapb.DataType_Float:
		d := fd.GetScalars().GetFloatData()
		if d == nil {
			return nil, bad()
		}
		src := expand(d.GetData(), valid)
		out := make([]float64, len(src))
		for i, v := range src {
			out[i] = float64(v)
		}
		return &Floats{Nulls{valid}, t, out}, nil
	case schemapb.DataType_Double:
		d := fd.GetScalars().GetDoubleData()
		if d == nil {
			return nil, bad()
		}
		return &Floats{Nulls{valid}, t, expand(d.GetData(), valid)}, nil
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		d := fd.GetScalars().GetStringData()
		if d == nil {
			return nil, bad()
		}
		return &Strings{Nulls{valid}, t, expand(d.GetData(), valid)}, nil
	case schemapb.DataType_JSON:
		d := fd.GetScalars().GetJsonData()
		if d == nil {
			return nil, bad()
		}
		return &JSONs{Nulls{valid}, expand(d.GetData(), valid)}, nil
	case schemapb.DataType_Geometry:
		return geometriesFromFieldData(f, fd, valid)
	case schemapb.DataType_Array:
		d := fd.GetScalars().GetArrayData()
		if d == nil {
			return nil, bad()
		}
		return &Arrays{Nulls{valid}, f.GetElementType(), expand(d.GetData(), valid)}, nil
	case schemapb.DataType_FloatVector:
		dim, err := Dim(f)
		if err != nil {
			return nil, err
		}
		d := fd.GetVectors().GetFloatVector()
		if d == nil && !allNull(valid) {
			return nil, bad()
		}
		if dim <= 0 || len(d.GetData())%dim != 0 {
			return nil, fmt.Errorf("column: field %q: %d floats are not whole vectors of dim %d", name, len(d.GetData()), dim)
		}
		data, err := expandVectors(name, d.GetData(), dim, valid)
		if err != nil {
			return nil, err
		}
		return &FloatVectors{Nulls{valid}, dim, data}, nil
	case schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector:
		dim, err := Dim(f)
		if err != nil {
			return nil, err
		}
		var raw []byte
		v := fd.GetVectors()
		switch t {
		case schemapb.DataType_BinaryVector:
			raw = v.GetBinaryVector()
		case schemapb.DataType_Float16Vector:
			raw = v.GetFloat16Vector()
		case schemapb.DataType_BFloat16Vector:
			raw = v.GetBfloat16Vector()
		case schemapb.DataType_Int8Vector:
			raw = v.GetInt8Vector()
		}
		w := VectorWidth(t, dim)
		if w == 0 || len(raw)%w != 0 {
			return nil, fmt.Errorf("column: field %q: %d bytes are not whole vectors of dim %d (%s, %d bytes each)", name, len(raw), dim, t, w)
		}
		raw, err = expandVectors(name, raw, w, valid)
		if err != nil {
			return nil, err
		}
		return &ByteVectors{Nulls{valid}, t, dim, w, raw}, nil
	case schemapb.DataType_ArrayOfVector:
		return vectorArraysFromFieldData(f, fd)
	case schemapb.DataType_SparseFloatVector:
		d := fd.GetVectors().GetSparseFloatVector()
		if d == nil && !allNull(valid) {
			return nil, bad()
		}
		rows, err := expandVectors(name, d.GetContents(), 1, valid)
		if err != nil {
			return nil, err
		}
		return &SparseVectors{Nulls{valid}, d.GetDim(), rows}, nil
	default:
		return nil, fmt.Errorf("column: field %q: data type %s is not supported", name, t)
	}
}

// expand spreads compact values (only the valid rows, as clients send them)
// over len(valid) rows. When the data already has one value per row it is
// returned unchanged.
func expand[T any](data []T, valid []bool) []T {
	if valid == nil || len(data) == len(valid) {
		return data
	}
	out := make([]T, len(valid))
	j := 0
	for i, ok := range valid {
		if ok && j < len(data) {
			out[i] = data[j]
			j++
		}
	}
	return out
}

// ToFieldData converts c into a wire column named name with field ID id.
// Nullable scalar columns carry valid_data and one value slot per row;
// nullable vector columns carry valid_data and only the non-null vectors.
func ToFieldData(name string, id int64, c Column) *schemapb.FieldData {
	fd := &schemapb.FieldData{Type: c.Type(), FieldName: name, FieldId: id, ValidData: c.Validity()}
	scalars := func(s *schemapb.ScalarField) { fd.Field = &schemapb.FieldData_Scalars{Scalars: s} }
	switch c := c.(type) {
	case *Bools:
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: c.Data}}})
	case *Ints:
		if c.T == schemapb.DataType_Timestamptz {
			scalars(timestamptzScalars(c.Data))
		} else if c.T == schemapb.DataType_Int64 {
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: c.Data}}})
		} else {
			d := make([]int32, len(c.Data))
			for i, v := range c.Data {
				d[i] = int32(v)
			}
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: d}}})
		}
	case *Floats:
		if c.T == schemapb.DataType_Double {
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: c.Data}}})
		} else {
			d := make([]float32, len(c.Data))
			for i, v := range c.Data {
				d[i] = float32(v)
			}
			scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: d}}})
		}
	case *Strings:
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: c.Data}}})
	case *JSONs:
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: c.Data}}})
	case *Geometries:
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_GeometryData{GeometryData: &schemapb.GeometryArray{Data: c.Data}}})
	case *Arrays:
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_ArrayData{ArrayData: &schemapb.ArrayArray{Data: c.Data, ElementType: c.Elem}}})
	case *FloatVectors:
		fd.Field = &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim:  int64(c.Dim),
			Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: compactVectors(c.Data, c.Dim, c.Valid)}},
		}}
	case *ByteVectors:
		vf := &schemapb.VectorField{Dim: int64(c.Dim)}
		raw := compactVectors(c.Data, c.Width, c.Valid)
		switch c.T {
		case schemapb.DataType_BinaryVector:
			vf.Data = &schemapb.VectorField_BinaryVector{BinaryVector: raw}
		case schemapb.DataType_Float16Vector:
			vf.Data = &schemapb.VectorField_Float16Vector{Float16Vector: raw}
		case schemapb.DataType_BFloat16Vector:
			vf.Data = &schemapb.VectorField_Bfloat16Vector{Bfloat16Vector: raw}
		case schemapb.DataType_Int8Vector:
			vf.Data = &schemapb.VectorField_Int8Vector{Int8Vector: raw}
		}
		fd.Field = &schemapb.FieldData_Vectors{Vectors: vf}
	case *VectorArrays:
		fd.Field = vectorArraysToFieldData(c)
	case *SparseVectors:
		fd.Field = &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim:  c.Dim,
			Data: &schemapb.VectorField_SparseFloatVector{SparseFloatVector: &schemapb.SparseFloatArray{Dim: c.Dim, Contents: compactVectors(c.Data, 1, c.Valid)}},
		}}
	}
	return fd
}

// FromIDs converts primary keys on the wire (schemapb.IDs, or the legacy
// int64 list of older delete messages) into a column.Ints or column.Strings.
func FromIDs(ids *schemapb.IDs, legacy []int64) Column {
	if s := ids.GetStrId(); s != nil {
		return &Strings{T: schemapb.DataType_VarChar, Data: s.GetData()}
	}
	if i := ids.GetIntId(); i != nil {
		return &Ints{T: schemapb.DataType_Int64, Data: i.GetData()}
	}
	return &Ints{T: schemapb.DataType_Int64, Data: legacy}
}
