package rest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

func restField(name string, t schemapb.DataType, params ...string) *schemapb.FieldSchema {
	f := &schemapb.FieldSchema{FieldID: 101, Name: name, DataType: t}
	for i := 0; i+1 < len(params); i += 2 {
		f.TypeParams = append(f.TypeParams, &commonpb.KeyValuePair{Key: params[i], Value: params[i+1]})
	}
	return f
}

func nullable(f *schemapb.FieldSchema) *schemapb.FieldSchema {
	f.Nullable = true
	return f
}

// TestBuildColumn: REST row values of every insertable type become the wire
// column the proxy reads back into the same values.
func TestBuildColumn(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	arrayOf := func(elem schemapb.DataType) *schemapb.FieldSchema {
		f := restField("a", schemapb.DataType_Array, "max_capacity", "4", "max_length", "8")
		f.ElementType = elem
		return f
	}
	withDefault := restField("d", schemapb.DataType_Int64)
	withDefault.DefaultValue = &schemapb.ValueField{Data: &schemapb.ValueField_LongData{LongData: 7}}
	for _, tc := range []struct {
		name   string
		field  *schemapb.FieldSchema
		values []any // one row each; absent: a row without the field
		want   column.Column
	}{
		{"bool", restField("x", schemapb.DataType_Bool), []any{true, false}, &column.Bools{Data: []bool{true, false}}},
		{"int8", restField("x", schemapb.DataType_Int8), []any{n("-128"), "127"}, &column.Ints{T: schemapb.DataType_Int8, Data: []int64{-128, 127}}},
		{"int16", restField("x", schemapb.DataType_Int16), []any{n("300")}, &column.Ints{T: schemapb.DataType_Int16, Data: []int64{300}}},
		{"int32", restField("x", schemapb.DataType_Int32), []any{n("70000")}, &column.Ints{T: schemapb.DataType_Int32, Data: []int64{70000}}},
		{
			"int64 as a number and a string", restField("x", schemapb.DataType_Int64),
			[]any{n("9007199254740993"), "-5"},
			&column.Ints{T: schemapb.DataType_Int64, Data: []int64{9007199254740993, -5}},
		},
		{"float", restField("x", schemapb.DataType_Float), []any{n("1.5"), "2"}, &column.Floats{T: schemapb.DataType_Float, Data: []float64{1.5, 2}}},
		{"double", restField("x", schemapb.DataType_Double), []any{n("0.1")}, &column.Floats{T: schemapb.DataType_Double, Data: []float64{0.1}}},
		{
			"varchar", restField("x", schemapb.DataType_VarChar, "max_length", "8"),
			[]any{"ab", ""},
			&column.Strings{T: schemapb.DataType_VarChar, Data: []string{"ab", ""}},
		},
		{
			"json value and JSON text", restField("x", schemapb.DataType_JSON),
			[]any{map[string]any{"k": n("1")}, `{"a":[1]}`, "plain"},
			&column.JSONs{Data: [][]byte{[]byte(`{"k":1}`), []byte(`{"a":[1]}`), []byte(`"plain"`)}},
		},
		{
			"nullable json", nullable(restField("x", schemapb.DataType_JSON)),
			[]any{nil, n("3")},
			&column.JSONs{Nulls: column.Nulls{Valid: []bool{false, true}}, Data: [][]byte{[]byte("null"), []byte("3")}},
		},
		{
			"nullable int32", nullable(restField("x", schemapb.DataType_Int32)),
			[]any{n("1"), nil, n("3")},
			&column.Ints{Nulls: column.Nulls{Valid: []bool{true, false, true}}, T: schemapb.DataType_Int32, Data: []int64{1, 0, 3}},
		},
		{
			"nullable, every row set", nullable(restField("x", schemapb.DataType_Bool)),
			[]any{true},
			&column.Bools{Nulls: column.Nulls{Valid: []bool{true}}, Data: []bool{true}},
		},
		{
			"default value, absent", withDefault,
			[]any{nil, n("2")},
			&column.Ints{Nulls: column.Nulls{Valid: []bool{false, true}}, T: schemapb.DataType_Int64, Data: []int64{0, 2}},
		}, // the proxy fills the default
		{
			"int array", arrayOf(schemapb.DataType_Int32),
			[]any{[]any{n("1"), n("2")}, []any{}},
			&column.Arrays{Elem: schemapb.DataType_Int32, Data: []*schemapb.ScalarField{
				{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{1, 2}}}},
				{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{}}}},
			}},
		},
		{
			"nullable varchar array", nullable(arrayOf(schemapb.DataType_VarChar)),
			[]any{nil, []any{"x"}},
			&column.Arrays{Nulls: column.Nulls{Valid: []bool{false, true}}, Elem: schemapb.DataType_VarChar, Data: []*schemapb.ScalarField{
				{}, {Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"x"}}}},
			}},
		},
		{
			"float vector", restField("v", schemapb.DataType_FloatVector, "dim", "2"),
			[]any{[]any{n("1"), "2.5"}, []any{n("0"), n("-1")}},
			&column.FloatVectors{Dim: 2, Data: []float32{1, 2.5, 0, -1}},
		},
		{
			"nullable float vector", nullable(restField("v", schemapb.DataType_FloatVector, "dim", "2")),
			[]any{nil, []any{n("3"), n("4")}},
			&column.FloatVectors{Nulls: column.Nulls{Valid: []bool{false, true}}, Dim: 2, Data: []float32{0, 0, 3, 4}},
		},
		{
			"binary vector, array and base64", restField("b", schemapb.DataType_BinaryVector, "dim", "16"),
			[]any{[]any{n("1"), n("255")}, "AQI="},
			&column.ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2, Data: []byte{1, 255, 1, 2}},
		},
		{
			"int8 vector", restField("b", schemapb.DataType_Int8Vector, "dim", "2"),
			[]any{[]any{n("-1"), n("127")}},
			&column.ByteVectors{T: schemapb.DataType_Int8Vector, Dim: 2, Width: 2, Data: []byte{0xff, 127}},
		},
		{
			"float16 vector", restField("b", schemapb.DataType_Float16Vector, "dim", "1"),
			[]any{[]any{n("1")}},
			&column.ByteVectors{T: schemapb.DataType_Float16Vector, Dim: 1, Width: 2, Data: []byte{0x00, 0x3c}},
		},
		{
			"nullable bfloat16 vector", nullable(restField("b", schemapb.DataType_BFloat16Vector, "dim", "1")),
			[]any{[]any{n("1")}, nil},
			&column.ByteVectors{
				Nulls: column.Nulls{Valid: []bool{true, false}}, T: schemapb.DataType_BFloat16Vector, Dim: 1, Width: 2,
				Data: []byte{0x80, 0x3f, 0, 0},
			},
		},
		{
			"sparse vector", restField("s", schemapb.DataType_SparseFloatVector),
			[]any{
				map[string]any{"3": n("0.5")},
				map[string]any{"indices": []any{n("1"), n("9")}, "values": []any{n("1"), n("2")}},
			},
			&column.SparseVectors{Dim: 10, Data: [][]byte{sparseBytes(3, 0.5), append(sparseBytes(1, 1), sparseBytes(9, 2)...)}},
		},
		{
			"nullable sparse vector", nullable(restField("s", schemapb.DataType_SparseFloatVector)),
			[]any{nil, map[string]any{"0": n("1")}},
			&column.SparseVectors{Nulls: column.Nulls{Valid: []bool{false, true}}, Dim: 1, Data: [][]byte{nil, sparseBytes(0, 1)}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := buildColumn(tc.field, restRows(tc.field.GetName(), tc.values))
			require.NoError(t, err)
			require.Equal(t, tc.field.GetName(), fd.GetFieldName())
			require.Equal(t, tc.field.GetFieldID(), fd.GetFieldId())
			require.Equal(t, tc.field.GetDataType(), fd.GetType())
			got, err := column.FromFieldData(tc.field, fd)
			require.NoError(t, err)
			if s, ok := got.(*column.SparseVectors); ok {
				for i := range s.Data {
					if len(s.Data[i]) == 0 {
						s.Data[i] = nil
					}
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestBuildColumnGeometry: Geometry values travel as WKT text, parsed by the proxy.
func TestBuildColumnGeometry(t *testing.T) {
	f := nullable(restField("g", schemapb.DataType_Geometry))
	fd, err := buildColumn(f, restRows("g", []any{"POINT (1 2)", nil}))
	require.NoError(t, err)
	require.Equal(t, []string{"POINT (1 2)", ""}, fd.GetScalars().GetGeometryWktData().GetData())
	require.Equal(t, []bool{true, false}, fd.GetValidData())
	_, err = buildColumn(f, restRows("g", []any{n1()}))
	require.EqualError(t, err, `row 0: field "g": 1 is not a WKT string`)
}

func n1() json.Number { return json.Number("1") }

// TestBuildColumnRefuses: each refusal names the row and the field, with
// code 1804.
func TestBuildColumnRefuses(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	arr := restField("a", schemapb.DataType_Array)
	arr.ElementType = schemapb.DataType_Int16
	for _, tc := range []struct {
		name   string
		field  *schemapb.FieldSchema
		values []any
		msg    string
	}{
		{"missing", restField("x", schemapb.DataType_Int64), []any{n("1"), nil}, `row 1: field "x" is missing`},
		{"not a boolean", restField("x", schemapb.DataType_Bool), []any{"yes"}, `row 0: field "x": yes is not a boolean`},
		{"int8 overflow", restField("x", schemapb.DataType_Int8), []any{n("128")}, `row 0: field "x": 128 is not a 8-bit integer`},
		{"not an integer", restField("x", schemapb.DataType_Int64), []any{true}, `row 0: field "x": true is not an integer`},
		{"fractional integer", restField("x", schemapb.DataType_Int32), []any{n("1.5")}, `row 0: field "x": 1.5 is not a 32-bit integer`},
		{"not a number", restField("x", schemapb.DataType_Double), []any{false}, `row 0: field "x": false is not a number`},
		{"not a string", restField("x", schemapb.DataType_VarChar), []any{n("1")}, `row 0: field "x": 1 is not a string`},
		{"not an array", arr, []any{"x"}, `row 0: field "a": x is not an array`},
		{"bad array element", arr, []any{[]any{n("1")}, []any{n("70000")}}, `row 1: field "a": row 0: field "a": 70000 is not a 16-bit integer`},
		{
			"vector not an array", restField("v", schemapb.DataType_FloatVector, "dim", "2"),
			[]any{"x"},
			`row 0: field "v": the vector is not an array of numbers`,
		},
		{
			"vector of the wrong dimension", restField("v", schemapb.DataType_FloatVector, "dim", "2"),
			[]any{[]any{n("1")}},
			`row 0: field "v": the vector has 1 dimensions, the field has 2`,
		},
		{
			"bad vector element", restField("v", schemapb.DataType_FloatVector, "dim", "1"),
			[]any{[]any{true}},
			`row 0: field "v": true is not a number`,
		},
		{
			"null vector of a field that is not nullable", restField("v", schemapb.DataType_FloatVector, "dim", "1"),
			[]any{nil},
			`row 0: field "v" is missing`,
		},
		{
			"binary vector too short", restField("b", schemapb.DataType_BinaryVector, "dim", "16"),
			[]any{[]any{n("1")}},
			`row 0: field "b": the BinaryVector has 1 bytes, dim 16 needs 2`,
		},
		{
			"not a sparse vector", restField("s", schemapb.DataType_SparseFloatVector),
			[]any{[]any{}},
			`row 0: field "s": a sparse vector is an object of index to value, or {"indices": [...], "values": [...]}`,
		},
		{
			"unsupported type", restField("t", schemapb.DataType_Timestamptz),
			[]any{"2025-01-01T00:00:00Z"},
			`field "t": inserting Timestamptz through REST is not supported yet`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildColumn(tc.field, restRows(tc.field.GetName(), tc.values))
			require.EqualError(t, err, tc.msg)
			var ae *apiError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, errcode.InvalidInsertData, ae.code)
		})
	}
}

// restRows puts one value per row under name (nil: a row without it).
func restRows(name string, values []any) []map[string]any {
	rows := make([]map[string]any, len(values))
	for i, v := range values {
		rows[i] = map[string]any{}
		if v != nil {
			rows[i][name] = v
		}
	}
	return rows
}

// sparseBytes encodes one (index, value) pair of a sparse row.
func sparseBytes(idx uint32, v float32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, idx)
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}
