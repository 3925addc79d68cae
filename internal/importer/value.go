package importer

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/sparse"
)

// cellValue converts one value read from a file into the Go value
// column.AppendValue takes for field f. File values are what the readers
// produce: bool, json.Number, int64, float64, string, []any,
// map[string]any, and the typed slices []float32 and []byte that the
// columnar readers hand over for vectors without boxing every element.
func cellValue(f *schemapb.FieldSchema, v any) (any, error) {
	t := f.GetDataType()
	switch t {
	case schemapb.DataType_Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s is not a boolean", show(v))
		}
		return b, nil
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64:
		return intValue(v, map[schemapb.DataType]int{
			schemapb.DataType_Int8: 8, schemapb.DataType_Int16: 16, schemapb.DataType_Int32: 32, schemapb.DataType_Int64: 64,
		}[t])
	case schemapb.DataType_Float, schemapb.DataType_Double:
		x, err := floatValue(v)
		if err != nil {
			return nil, err
		}
		if t == schemapb.DataType_Float && !math.IsInf(x, 0) && math.Abs(x) > math.MaxFloat32 {
			return nil, fmt.Errorf("%v is out of the float range", x)
		}
		return x, nil
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s is not a string", show(v))
		}
		return s, nil
	case schemapb.DataType_JSON:
		if s, ok := v.(string); ok {
			// Column-based files keep JSON as text (as bulk writers do); a
			// string in a row-based file that holds JSON is taken as that JSON.
			if !json.Valid([]byte(s)) {
				return nil, fmt.Errorf("%.60q is not valid JSON", s)
			}
			return []byte(s), nil
		}
		return json.Marshal(v)
	case schemapb.DataType_Array:
		return arrayValue(f, v)
	case schemapb.DataType_FloatVector:
		dim, _ := column.Dim(f)
		return floatVector(v, dim)
	case schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector:
		dim, _ := column.Dim(f)
		return halfVector(t, v, dim)
	case schemapb.DataType_BinaryVector, schemapb.DataType_Int8Vector:
		dim, _ := column.Dim(f)
		return byteVector(t, v, column.VectorWidth(t, dim))
	case schemapb.DataType_SparseFloatVector:
		return sparseValue(v)
	}
	return nil, fmt.Errorf("importing %s fields is not supported", t)
}

// show renders a value for an error message, shortened.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

func intValue(v any, bits int) (int64, error) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case json.Number:
		p, err := strconv.ParseInt(x.String(), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not an integer", x)
		}
		n = p
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("%s is not an integer", show(v))
	}
	if bits < 64 {
		lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
		if n < lo || n > hi {
			return 0, fmt.Errorf("%d is out of the int%d range", n, bits)
		}
	}
	return n, nil
}

func floatValue(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, fmt.Errorf("%s is not a number", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%s is not a number", show(v))
}

// arrayValue builds an Array field's row from a list of elements.
func arrayValue(f *schemapb.FieldSchema, v any) (*schemapb.ScalarField, error) {
	var list []any
	switch x := v.(type) {
	case []any:
		list = x
	case []byte: // a Parquet list of int8
		for _, e := range x {
			list = append(list, int64(int8(e)))
		}
	case []float32: // a Parquet list of float32
		for _, e := range x {
			list = append(list, float64(e))
		}
	default:
		return nil, fmt.Errorf("%s is not an array", show(v))
	}
	elem := &schemapb.FieldSchema{Name: f.GetName(), DataType: f.GetElementType(), TypeParams: f.GetTypeParams()}
	c, err := column.New(elem)
	if err != nil {
		return nil, err
	}
	for i, x := range list {
		if x == nil {
			return nil, fmt.Errorf("element %d of the array is null", i)
		}
		y, err := cellValue(elem, x)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		if err := column.AppendValue(c, y); err != nil {
			return nil, err
		}
	}
	return column.ToFieldData(f.GetName(), 0, c).GetScalars(), nil
}

func floatVector(v any, dim int) ([]float32, error) {
	switch x := v.(type) {
	case []float32:
		if len(x) != dim {
			return nil, fmt.Errorf("the vector has %d dimensions, the field has %d", len(x), dim)
		}
		return x, nil
	case []any:
		if len(x) != dim {
			return nil, fmt.Errorf("the vector has %d dimensions, the field has %d", len(x), dim)
		}
		out := make([]float32, dim)
		for i, e := range x {
			f, err := floatValue(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = float32(f)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is not a vector", show(v))
}

// halfVector takes a half-precision vector as its raw bytes (how bulk
// writers keep it in Parquet and NumPy files) or as a list of floats (JSON).
func halfVector(t schemapb.DataType, v any, dim int) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		if len(b) != 2*dim {
			return nil, fmt.Errorf("the %s has %d bytes, dim %d needs %d", t, len(b), dim, 2*dim)
		}
		return b, nil
	}
	fs, err := floatVector(v, dim)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 2*dim)
	if t == schemapb.DataType_Float16Vector {
		distance.EncodeFloat16(out, fs)
	} else {
		distance.EncodeBFloat16(out, fs)
	}
	return out, nil
}

// byteVector takes a binary vector (dim/8 bytes) or an int8 vector (dim
// bytes) as raw bytes or a list of integers.
func byteVector(t schemapb.DataType, v any, width int) ([]byte, error) {
	var out []byte
	switch x := v.(type) {
	case []byte:
		out = x
	case []any:
		lo, hi := int64(0), int64(255)
		if t == schemapb.DataType_Int8Vector {
			lo, hi = -128, 127
		}
		out = make([]byte, len(x))
		for i, e := range x {
			n, err := intValue(e, 64)
			if err != nil || n < lo || n > hi {
				return nil, fmt.Errorf("element %d (%s) of the %s is not an integer in [%d, %d]", i, show(e), t, lo, hi)
			}
			out[i] = byte(n)
		}
	default:
		return nil, fmt.Errorf("%s is not a vector", show(v))
	}
	if len(out) != width {
		return nil, fmt.Errorf("the %s has %d elements, the field needs %d", t, len(out), width)
	}
	return out, nil
}

// sparseValue takes a sparse vector as {"index": value, ...} or
// {"indices": [...], "values": [...]}, decoded or as JSON text.
func sparseValue(v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		var m map[string]any
		if err := decodeJSON([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("the sparse vector %.60q is not a JSON object", s)
		}
		v = m
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`a sparse vector is an object of index to value, or {"indices": [...], "values": [...]}`)
	}
	type pair struct {
		idx uint32
		val float32
	}
	var ps []pair
	is, hasIdx := m["indices"]
	vs, hasVal := m["values"]
	if hasIdx || hasVal {
		il, ok1 := is.([]any)
		vl, ok2 := vs.([]any)
		if !ok1 || !ok2 || len(il) != len(vl) || len(m) != 2 {
			return nil, errors.New(`a sparse vector's "indices" and "values" must be arrays of one length, and its only keys`)
		}
		for i := range il {
			idx, err := intValue(il[i], 64)
			if err != nil || idx < 0 || idx >= math.MaxUint32 {
				return nil, fmt.Errorf("sparse index %s is not an integer in [0, 2^32-1)", show(il[i]))
			}
			val, err := floatValue(vl[i])
			if err != nil {
				return nil, err
			}
			ps = append(ps, pair{uint32(idx), float32(val)})
		}
	} else {
		for k, x := range m {
			idx, err := strconv.ParseUint(k, 10, 32)
			if err != nil || idx == math.MaxUint32 {
				return nil, fmt.Errorf("sparse index %q is not an integer in [0, 2^32-1)", k)
			}
			val, err := floatValue(x)
			if err != nil {
				return nil, err
			}
			ps = append(ps, pair{uint32(idx), float32(val)})
		}
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Compare(a.idx, b.idx) })
	vec := sparse.Vector{Indices: make([]uint32, len(ps)), Values: make([]float32, len(ps))}
	for i, p := range ps {
		vec.Indices[i], vec.Values[i] = p.idx, p.val
	}
	row := vec.Encode()
	if err := sparse.Validate(row); err != nil {
		return nil, err
	}
	return row, nil
}
