package proxy

import (
	"math"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// insertColl is parseColl with an Int8, an Int32 array of capacity 2 and a
// nullable Double with a default value.
func insertColl() *catalog.Collection {
	arr := &schemapb.FieldSchema{
		FieldID: 107, Name: "arr", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int32,
		TypeParams: []*commonpb.KeyValuePair{{Key: "max_capacity", Value: "2"}},
	}
	return parseColl(
		&schemapb.FieldSchema{FieldID: 108, Name: "i8", DataType: schemapb.DataType_Int8},
		arr,
		&schemapb.FieldSchema{
			FieldID: 109, Name: "d", DataType: schemapb.DataType_Double, Nullable: true,
			DefaultValue: &schemapb.ValueField{Data: &schemapb.ValueField_DoubleData{DoubleData: 2.5}},
		})
}

// insertCols is one valid row of every required field of insertColl, with
// the fields of extra replacing or adding to them.
func insertCols(extra ...*schemapb.FieldData) []*schemapb.FieldData {
	base := []*schemapb.FieldData{
		column.ToFieldData("id", 100, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}),
		column.ToFieldData("v", 101, &column.FloatVectors{Dim: 2, Data: []float32{1, 2}}),
		column.ToFieldData("tag", 102, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"a"}}),
		column.ToFieldData("n", 103, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{5}}),
		column.ToFieldData("f", 104, &column.Floats{T: schemapb.DataType_Float, Data: []float64{0.5}}),
		column.ToFieldData("j", 105, &column.JSONs{Data: [][]byte{[]byte(`{"k":1}`)}}),
		column.ToFieldData("i8", 108, &column.Ints{T: schemapb.DataType_Int8, Data: []int64{-1}}),
		column.ToFieldData("arr", 107, &column.Arrays{Elem: schemapb.DataType_Int32, Data: []*schemapb.ScalarField{intArray(1, 2)}}),
	}
	for _, e := range extra {
		replaced := false
		for i, b := range base {
			if b.GetFieldName() == e.GetFieldName() {
				base[i], replaced = e, true
			}
		}
		if !replaced {
			base = append(base, e)
		}
	}
	return base
}

func intArray(v ...int32) *schemapb.ScalarField {
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: v}}}
}

func without(fds []*schemapb.FieldData, name string) []*schemapb.FieldData {
	var out []*schemapb.FieldData
	for _, fd := range fds {
		if fd.GetFieldName() != name {
			out = append(out, fd)
		}
	}
	return out
}

func metaCol(docs ...string) *schemapb.FieldData {
	c := &column.JSONs{}
	for _, d := range docs {
		c.Data = append(c.Data, []byte(d))
	}
	fd := column.ToFieldData("$meta", 106, c)
	fd.IsDynamic = true
	return fd
}

// TestValidateInsert: a batch's columns become stored columns, the
// omitted optional fields filled with their default.
func TestValidateInsert(t *testing.T) {
	col := insertColl()
	r, err := validateRows(col, append(insertCols(), metaCol(`{"color":"red"}`)), 1, nil, false)
	require.NoError(t, err)
	require.Equal(t, 1, r.n)
	require.Equal(t, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, r.pk)
	require.Equal(t, []float64{2.5}, r.cols[109].(*column.Floats).Data, "the default of the omitted field")
	require.Equal(t, [][]byte{[]byte(`{"color":"red"}`)}, r.cols[106].(*column.JSONs).Data)

	r, err = validateRows(col, insertCols(), 0, nil, false)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte(`{}`)}, r.cols[106].(*column.JSONs).Data, "no dynamic data: an empty object")
}

// TestValidateInsertRefuses: each refusal of a batch's columns with
// Milvus's code and Strata's message, before anything is written.
func TestValidateInsertRefuses(t *testing.T) {
	col := insertColl()
	for _, tc := range []struct {
		name string
		col  *catalog.Collection
		fds  []*schemapb.FieldData
		rows uint32
		msg  string
	}{
		{
			"unknown field", nil, insertCols(column.ToFieldData("nope", 0, &column.Bools{Data: []bool{true}})), 0,
			`field "nope" does not exist in collection "c"`,
		},
		{
			"a field twice", nil, append(insertCols(), column.ToFieldData("n", 103, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}})), 0,
			`field "n" is sent more than once`,
		},
		{
			"dynamic data without a dynamic field", withoutDynamic(insertColl()), append(insertCols(), metaCol(`{}`)), 0,
			"the collection does not enable the dynamic field, but dynamic data was sent",
		},
		{
			"type mismatch", nil, insertCols(column.ToFieldData("n", 103, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"x"}})), 0,
			`field "n": data type VarChar does not match the schema type Int64`,
		},
		{
			"null in a field that is not nullable", nil, insertCols(column.ToFieldData("n", 103,
				&column.Ints{Nulls: column.Nulls{Valid: []bool{false}}, T: schemapb.DataType_Int64, Data: []int64{0}})), 0,
			`field "n" is not nullable but null values were sent`,
		},
		{
			"vector dim mismatch", nil, insertCols(column.ToFieldData("v", 101, &column.FloatVectors{Dim: 3, Data: []float32{1, 2, 3}})), 0,
			"the length(3) of float data should divide the dim(2): the dim (3) of field data(v) is not equal to schema dim (2)",
		},
		{
			"row counts differ", nil, insertCols(column.ToFieldData("n", 103, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2}})), 0,
			`the number of rows of field "n" is 2, other fields have 1`,
		},
		{"num_rows differs", nil, insertCols(), 3, `the number of rows of field "id" is 1, other fields have 3`},
		{
			"int8 out of range", nil, insertCols(column.ToFieldData("i8", 108, &column.Ints{T: schemapb.DataType_Int8, Data: []int64{200}})), 0,
			`field "i8": value 200 of row 0 is out of range for Int8`,
		},
		{
			"NaN float", nil, insertCols(column.ToFieldData("f", 104, &column.Floats{T: schemapb.DataType_Float, Data: []float64{math.NaN()}})), 0,
			`field "f": value of row 0 is NaN or Inf`,
		},
		{
			"NaN vector", nil, insertCols(column.ToFieldData("v", 101, &column.FloatVectors{Dim: 2, Data: []float32{1, float32(math.Inf(1))}})), 0,
			`field "v": the vector of row 0 contains NaN or Inf (+Inf)`,
		},
		{
			"varchar too long", nil, insertCols(column.ToFieldData("tag", 102, &column.Strings{
				T:    schemapb.DataType_VarChar,
				Data: []string{strings.Repeat("é", 65)},
			})), 0,
			"length of varchar field tag exceeds max length, row number: 0, length: 65, max length: 64",
		},
		{
			"invalid UTF-8", nil, insertCols(column.ToFieldData("tag", 102, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"\xff"}})), 0,
			`field "tag": the string of row 0 is not valid UTF-8`,
		},
		{
			"invalid JSON", nil, insertCols(column.ToFieldData("j", 105, &column.JSONs{Data: [][]byte{[]byte(`{`)}})), 0,
			`field "j": row 0 is not valid JSON`,
		},
		{
			"array over capacity", nil, insertCols(column.ToFieldData("arr", 107, &column.Arrays{
				Elem: schemapb.DataType_Int32,
				Data: []*schemapb.ScalarField{intArray(1, 2, 3)},
			})), 0,
			`field "arr": the array of row 0 has 3 elements, over max_capacity 2`,
		},
		{
			"array of the wrong element type", nil, insertCols(column.ToFieldData("arr", 107, &column.Arrays{
				Elem: schemapb.DataType_Int32,
				Data: []*schemapb.ScalarField{{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: []bool{true}}}}},
			})), 0,
			`field "arr": the array of row 0 does not hold Int32 elements`,
		},
		{
			"dynamic row not an object", nil, append(insertCols(), metaCol(`[1]`)), 0,
			"row 0: the dynamic field must be a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage",
		},
		{
			"dynamic row with a static key", nil, append(insertCols(), metaCol(`{"n": 1}`)), 0,
			`row 0: the dynamic field contains key "n", which is a static field of the schema`,
		},
		{"a required field missing", nil, without(insertCols(), "n"), 0, `field "n" is not passed and has no default value`},
		{"no data", nil, nil, 0, "no data was sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.col
			if c == nil {
				c = col
			}
			_, err := validateRows(c, tc.fds, tc.rows, nil, false)
			require.Error(t, err)
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err), err.Error())
			if tc.msg != "" {
				require.Equal(t, tc.msg, err.Error())
			}
		})
	}
}
