package rest

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// dynamicFieldName is the name of the hidden JSON column that holds the keys
// of dynamic collections that are not schema fields.
const dynamicFieldName = "$meta"

// rowsToColumns turns JSON rows into one wire column per schema field (plus
// `$meta` for dynamic keys). An auto-ID primary key is left out unless every
// row gives it (upsert).
func rowsToColumns(schema *schemapb.CollectionSchema, rows []map[string]any) ([]*schemapb.FieldData, error) {
	known := map[string]bool{}
	var cols []*schemapb.FieldData
	for _, f := range schema.GetFields() {
		known[f.GetName()] = true
		if f.GetIsPrimaryKey() && f.GetAutoID() && !allHave(rows, f.GetName()) {
			continue
		}
		if f.GetIsFunctionOutput() && !anyHas(rows, f.GetName()) {
			continue // the server computes it (a BM25 function's output)
		}
		col, err := buildColumn(f, rows)
		if err != nil {
			return nil, err
		}
		cols = append(cols, col)
	}
	var meta [][]byte
	for i, row := range rows {
		extra := map[string]any{}
		for k, v := range row {
			if known[k] {
				continue
			}
			if !schema.GetEnableDynamicField() {
				return nil, errorf(CodeInvalidInsertData, "row %d: field %q is not in the schema and the collection has no dynamic field", i, k)
			}
			if k == dynamicFieldName {
				continue
			}
			extra[k] = v
		}
		if schema.GetEnableDynamicField() {
			b, err := json.Marshal(extra)
			if err != nil {
				return nil, errorf(CodeInvalidInsertData, "row %d: dynamic fields: %v", i, err)
			}
			meta = append(meta, b)
		}
	}
	if schema.GetEnableDynamicField() {
		cols = append(cols, &schemapb.FieldData{Type: schemapb.DataType_JSON, FieldName: dynamicFieldName, IsDynamic: true,
			Field: scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: meta}}})})
	}
	return cols, nil
}

func allHave(rows []map[string]any, key string) bool {
	for _, r := range rows {
		if v, ok := r[key]; !ok || v == nil {
			return false
		}
	}
	return len(rows) > 0
}

func scalars(s *schemapb.ScalarField) *schemapb.FieldData_Scalars {
	return &schemapb.FieldData_Scalars{Scalars: s}
}

func typeParam(f *schemapb.FieldSchema, key string) string {
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return ""
}

// buildColumn converts one field of every row.
func buildColumn(f *schemapb.FieldSchema, rows []map[string]any) (*schemapb.FieldData, error) {
	name := f.GetName()
	fd := &schemapb.FieldData{Type: f.GetDataType(), FieldName: name, FieldId: f.GetFieldID()}
	optional := f.GetNullable() || f.GetDefaultValue() != nil
	var valid []bool
	values := make([]any, len(rows))
	for i, row := range rows {
		v, ok := row[name]
		if !ok || v == nil {
			if !optional {
				return nil, errorf(CodeInvalidInsertData, "row %d: field %q is missing", i, name)
			}
			if valid == nil {
				valid = make([]bool, len(rows))
				for j := 0; j < i; j++ {
					valid[j] = true
				}
			}
			continue
		}
		if valid != nil {
			valid[i] = true
		}
		values[i] = v
	}
	if optional && valid == nil {
		valid = make([]bool, len(rows))
		for i := range valid {
			valid[i] = true
		}
	}
	if optional {
		fd.ValidData = valid
	}
	wrap := func(i int, err error) error {
		return errorf(CodeInvalidInsertData, "row %d: field %q: %v", i, name, err)
	}
	n := len(rows)
	switch t := f.GetDataType(); t {
	case schemapb.DataType_Bool:
		d := make([]bool, n)
		for i, v := range values {
			if v == nil {
				continue
			}
			b, ok := v.(bool)
			if !ok {
				return nil, wrap(i, fmt.Errorf("%v is not a boolean", v))
			}
			d[i] = b
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: d}}})
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		bits := map[schemapb.DataType]int{schemapb.DataType_Int8: 8, schemapb.DataType_Int16: 16, schemapb.DataType_Int32: 32}[t]
		d := make([]int32, n)
		for i, v := range values {
			if v == nil {
				continue
			}
			x, err := toInt(v, bits)
			if err != nil {
				return nil, wrap(i, err)
			}
			d[i] = int32(x)
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: d}}})
	case schemapb.DataType_Int64:
		d := make([]int64, n)
		for i, v := range values {
			if v == nil {
				continue
			}
			x, err := toInt(v, 64)
			if err != nil {
				return nil, wrap(i, err)
			}
			d[i] = x
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: d}}})
	case schemapb.DataType_Float:
		d := make([]float32, n)
		for i, v := range values {
			if v == nil {
				continue
			}
			x, err := toFloat(v)
			if err != nil {
				return nil, wrap(i, err)
			}
			d[i] = float32(x)
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: d}}})
	case schemapb.DataType_Double:
		d := make([]float64, n)
		for i, v := range values {
			if v == nil {
				continue
			}
			x, err := toFloat(v)
			if err != nil {
				return nil, wrap(i, err)
			}
			d[i] = x
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: d}}})
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		d := make([]string, n)
		for i, v := range values {
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, wrap(i, fmt.Errorf("%v is not a string", v))
			}
			d[i] = s
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: d}}})
	case schemapb.DataType_Geometry:
		sf, err := geometryScalars(values, wrap)
		if err != nil {
			return nil, err
		}
		fd.Field = scalars(sf)
	case schemapb.DataType_JSON:
		d := make([][]byte, n)
		for i, v := range values {
			if v == nil {
				d[i] = []byte("null")
				continue
			}
			// A JSON field accepts a value or a string holding JSON, as Milvus does.
			if s, ok := v.(string); ok && json.Valid([]byte(s)) {
				d[i] = []byte(s)
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, wrap(i, err)
			}
			d[i] = b
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: d}}})
	case schemapb.DataType_Array:
		d := make([]*schemapb.ScalarField, n)
		elem := &schemapb.FieldSchema{Name: name, DataType: f.GetElementType()}
		for i, v := range values {
			if v == nil {
				d[i] = &schemapb.ScalarField{}
				continue
			}
			list, ok := v.([]any)
			if !ok {
				return nil, wrap(i, fmt.Errorf("%v is not an array", v))
			}
			rowsOf := make([]map[string]any, len(list))
			for j, x := range list {
				rowsOf[j] = map[string]any{name: x}
			}
			c, err := buildColumn(elem, rowsOf)
			if err != nil {
				return nil, wrap(i, err)
			}
			d[i] = c.GetScalars()
		}
		fd.Field = scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_ArrayData{ArrayData: &schemapb.ArrayArray{Data: d, ElementType: f.GetElementType()}}})
	case schemapb.DataType_FloatVector:
		dim, _ := strconv.Atoi(typeParam(f, "dim"))
		d := make([]float32, 0, n*dim)
		for i, v := range values {
			if v == nil && optional {
				d = append(d, make([]float32, dim)...) // a null vector's slot
				continue
			}
			list, ok := v.([]any)
			if !ok {
				return nil, wrap(i, fmt.Errorf("the vector is not an array of numbers"))
			}
			if len(list) != dim {
				return nil, wrap(i, fmt.Errorf("the vector has %d dimensions, the field has %d", len(list), dim))
			}
			for _, x := range list {
				fv, err := toFloat(x)
				if err != nil {
					return nil, wrap(i, err)
				}
				d = append(d, float32(fv))
			}
		}
		fd.Field = &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{Dim: int64(dim),
			Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: d}}}}
	case schemapb.DataType_SparseFloatVector:
		vf, err := sparseColumn(values, wrap)
		if err != nil {
			return nil, err
		}
		fd.Field = vf
	case schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector,
		schemapb.DataType_Int8Vector:
		vf, err := byteVectorColumn(f, values, wrap)
		if err != nil {
			return nil, err
		}
		fd.Field = vf
	default:
		return nil, errorf(CodeInvalidInsertData, "field %q: inserting %s through REST is not supported yet", name, t)
	}
	return fd, nil
}

// toInt accepts a JSON number or a string holding an integer.
func toInt(v any, bits int) (int64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, fmt.Errorf("%v is not an integer", v)
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%s is not a %d-bit integer", s, bits)
	}
	return n, nil
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return x.Float64()
	case string:
		return strconv.ParseFloat(x, 64)
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// int64Value renders an int64 as a number, or as a string when the client
// did not allow int64 numbers.
func int64Value(v int64, allow bool) any {
	if allow {
		return v
	}
	return strconv.FormatInt(v, 10)
}

// columnsToRows turns result columns into n JSON rows. Keys of the dynamic
// column are merged into each row.
func columnsToRows(cols []*schemapb.FieldData, n int, allowInt64 bool) ([]map[string]any, error) {
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{}
	}
	for _, c := range cols {
		valid := c.GetValidData()
		// Nullable vectors travel compacted: row i's vector is the
		// phys-th of the non-null ones.
		compact, phys := c.GetVectors() != nil && len(valid) > 0, 0
		for i := 0; i < n; i++ {
			if len(valid) > 0 && i < len(valid) && !valid[i] {
				rows[i][c.GetFieldName()] = nil
				continue
			}
			j := i
			if compact {
				j, phys = phys, phys+1
			}
			v, err := cellValue(c, j, allowInt64)
			if err != nil {
				return nil, errorf(CodeInvalidSearchResult, "column %q row %d: %v", c.GetFieldName(), i, err)
			}
			if c.GetIsDynamic() {
				if m, ok := v.(map[string]any); ok {
					for k, x := range m {
						rows[i][k] = x
					}
				}
				continue
			}
			rows[i][c.GetFieldName()] = v
		}
	}
	return rows, nil
}

func decodeJSON(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// cellValue reads row i of a column.
func cellValue(c *schemapb.FieldData, i int, allowInt64 bool) (any, error) {
	short := fmt.Errorf("the column is shorter than the result")
	if s := c.GetScalars(); s != nil {
		switch d := s.GetData().(type) {
		case *schemapb.ScalarField_BoolData:
			if i >= len(d.BoolData.GetData()) {
				return nil, short
			}
			return d.BoolData.GetData()[i], nil
		case *schemapb.ScalarField_IntData:
			if i >= len(d.IntData.GetData()) {
				return nil, short
			}
			return d.IntData.GetData()[i], nil
		case *schemapb.ScalarField_LongData:
			if i >= len(d.LongData.GetData()) {
				return nil, short
			}
			return int64Value(d.LongData.GetData()[i], allowInt64), nil
		case *schemapb.ScalarField_FloatData:
			if i >= len(d.FloatData.GetData()) {
				return nil, short
			}
			return finite(float64(d.FloatData.GetData()[i])), nil
		case *schemapb.ScalarField_DoubleData:
			if i >= len(d.DoubleData.GetData()) {
				return nil, short
			}
			return finite(d.DoubleData.GetData()[i]), nil
		case *schemapb.ScalarField_StringData:
			if i >= len(d.StringData.GetData()) {
				return nil, short
			}
			return d.StringData.GetData()[i], nil
		case *schemapb.ScalarField_GeometryWktData:
			if i >= len(d.GeometryWktData.GetData()) {
				return nil, short
			}
			return d.GeometryWktData.GetData()[i], nil
		case *schemapb.ScalarField_JsonData:
			if i >= len(d.JsonData.GetData()) {
				return nil, short
			}
			return decodeJSON(d.JsonData.GetData()[i])
		case *schemapb.ScalarField_ArrayData:
			if i >= len(d.ArrayData.GetData()) {
				return nil, short
			}
			elem := &schemapb.FieldData{Field: scalars(d.ArrayData.GetData()[i])}
			var out []any
			for j := 0; ; j++ {
				v, err := cellValue(elem, j, allowInt64)
				if err != nil {
					break
				}
				out = append(out, v)
			}
			if out == nil {
				out = []any{}
			}
			return out, nil
		}
		return nil, fmt.Errorf("unsupported scalar column")
	}
	v := c.GetVectors()
	dim := int(v.GetDim())
	switch d := v.GetData().(type) {
	case *schemapb.VectorField_FloatVector:
		data := d.FloatVector.GetData()
		if (i+1)*dim > len(data) {
			return nil, short
		}
		out := make([]float64, dim)
		for j := range out {
			out[j] = finite(float64(data[i*dim+j]))
		}
		return out, nil
	case *schemapb.VectorField_SparseFloatVector:
		return sparseJSON(d.SparseFloatVector, i)
	case *schemapb.VectorField_BinaryVector:
		return byteVectorCell(d.BinaryVector, dim/8, i, false)
	case *schemapb.VectorField_Float16Vector:
		return byteVectorCell(d.Float16Vector, 2*dim, i, false)
	case *schemapb.VectorField_Bfloat16Vector:
		return byteVectorCell(d.Bfloat16Vector, 2*dim, i, false)
	case *schemapb.VectorField_Int8Vector:
		return byteVectorCell(d.Int8Vector, dim, i, true)
	}
	return nil, fmt.Errorf("unsupported column type %s", c.GetType())
}

// finite maps NaN and ±Inf (which JSON cannot carry) to nil-free values.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
