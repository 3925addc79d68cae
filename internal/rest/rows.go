package rest

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
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
				return nil, errorf(errcode.InvalidInsertData, "row %d: field %q is not in the schema and the collection has no dynamic field", i, k)
			}
			if k == dynamicFieldName {
				continue
			}
			extra[k] = v
		}
		if schema.GetEnableDynamicField() {
			b, err := json.Marshal(extra)
			if err != nil {
				return nil, errorf(errcode.InvalidInsertData, "row %d: dynamic fields: %v", i, err)
			}
			meta = append(meta, b)
		}
	}
	if schema.GetEnableDynamicField() {
		cols = append(cols, &schemapb.FieldData{
			Type: schemapb.DataType_JSON, FieldName: dynamicFieldName, IsDynamic: true,
			Field: scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: meta}}}),
		})
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

// buildColumn converts one field of every row: each value is decoded as
// REST takes it (restValue) into a column of the field's type, which
// column.ToFieldData puts on the wire.
func buildColumn(f *schemapb.FieldSchema, rows []map[string]any) (*schemapb.FieldData, error) {
	name := f.GetName()
	values, valid, err := fieldValues(f, rows)
	if err != nil {
		return nil, err
	}
	wrap := func(i int, err error) error {
		return errorf(errcode.InvalidInsertData, "row %d: field %q: %v", i, name, err)
	}
	switch f.GetDataType() {
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_Float, schemapb.DataType_Double, schemapb.DataType_VarChar,
		schemapb.DataType_String, schemapb.DataType_JSON, schemapb.DataType_Array, schemapb.DataType_FloatVector,
		schemapb.DataType_SparseFloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector:
	case schemapb.DataType_Geometry:
		// WKT travels as text: the proxy parses and checks it as for gRPC inserts.
		sf, err := geometryScalars(values, wrap)
		if err != nil {
			return nil, err
		}
		return &schemapb.FieldData{
			Type: f.GetDataType(), FieldName: name, FieldId: f.GetFieldID(), ValidData: valid,
			Field: scalars(sf),
		}, nil
	default:
		return nil, errorf(errcode.InvalidInsertData, "field %q: inserting %s through REST is not supported yet", name, f.GetDataType())
	}
	c, err := column.New(f)
	if err != nil {
		return nil, errorf(errcode.InvalidInsertData, "field %q: %v", name, err)
	}
	for i, v := range values {
		x, err := restValue(f, v)
		if err != nil {
			return nil, wrap(i, err)
		}
		if err := column.AppendValue(c, x); err != nil {
			return nil, wrap(i, err)
		}
	}
	column.SetValidity(c, valid)
	return column.ToFieldData(name, f.GetFieldID(), c), nil
}

// fieldValues picks field f's value out of every row (nil for a null or
// missing one, which only a nullable field or one with a default value may
// have) and, for such an optional field, the validity of each row.
func fieldValues(f *schemapb.FieldSchema, rows []map[string]any) ([]any, []bool, error) {
	name := f.GetName()
	optional := f.GetNullable() || f.GetDefaultValue() != nil
	var valid []bool
	if optional {
		valid = make([]bool, len(rows))
	}
	values := make([]any, len(rows))
	for i, row := range rows {
		v, ok := row[name]
		if !ok || v == nil {
			if !optional {
				return nil, nil, errorf(errcode.InvalidInsertData, "row %d: field %q is missing", i, name)
			}
			continue
		}
		if optional {
			valid[i] = true
		}
		values[i] = v
	}
	return values, valid, nil
}

// restValue decodes one REST value of field f (nil: a null row) into the
// Go value column.AppendValue takes for f's type.
func restValue(f *schemapb.FieldSchema, v any) (any, error) {
	t := f.GetDataType()
	if v == nil {
		if t == schemapb.DataType_JSON {
			return []byte("null"), nil
		}
		return nil, nil
	}
	switch t {
	case schemapb.DataType_Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%v is not a boolean", v)
		}
		return b, nil
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64:
		bits := map[schemapb.DataType]int{
			schemapb.DataType_Int8: 8, schemapb.DataType_Int16: 16, schemapb.DataType_Int32: 32,
			schemapb.DataType_Int64: 64,
		}[t]
		return toInt(v, bits)
	case schemapb.DataType_Float, schemapb.DataType_Double:
		return toFloat(v)
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string", v)
		}
		return s, nil
	case schemapb.DataType_JSON:
		// A JSON field accepts a value or a string holding JSON, as Milvus does.
		if s, ok := v.(string); ok && json.Valid([]byte(s)) {
			return []byte(s), nil
		}
		return json.Marshal(v)
	case schemapb.DataType_Array:
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%v is not an array", v)
		}
		elem := &schemapb.FieldSchema{Name: f.GetName(), DataType: f.GetElementType()}
		rowsOf := make([]map[string]any, len(list))
		for j, x := range list {
			rowsOf[j] = map[string]any{f.GetName(): x}
		}
		c, err := buildColumn(elem, rowsOf)
		if err != nil {
			return nil, err
		}
		return c.GetScalars(), nil
	case schemapb.DataType_FloatVector:
		dim, _ := strconv.Atoi(typeParam(f, "dim"))
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("the vector is not an array of numbers")
		}
		if len(list) != dim {
			return nil, fmt.Errorf("the vector has %d dimensions, the field has %d", len(list), dim)
		}
		out := make([]float32, dim)
		for j, x := range list {
			fv, err := toFloat(x)
			if err != nil {
				return nil, err
			}
			out[j] = float32(fv)
		}
		return out, nil
	case schemapb.DataType_SparseFloatVector:
		return sparseRow(v)
	default: // the byte vectors
		dim, _ := strconv.Atoi(typeParam(f, "dim"))
		return byteVector(t, dim, v)
	}
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
				return nil, errorf(errcode.InvalidSearchResult, "column %q row %d: %v", c.GetFieldName(), i, err)
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
