package proxy

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// partialCollection: id (pk), v (vector, dim 2), name (nullable VarChar),
// price (Float), tags (nullable Array<Int64>, max_capacity 4), level (Int32
// with default 7) and $meta.
func partialCollection() *catalog.Collection {
	return &catalog.Collection{CollectionInfo: catalog.CollectionInfo{Name: "items"}, Schema: &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
		{
			FieldID: 102, Name: "name", DataType: schemapb.DataType_VarChar, Nullable: true,
			TypeParams: []*commonpb.KeyValuePair{{Key: "max_length", Value: "16"}},
		},
		{FieldID: 103, Name: "price", DataType: schemapb.DataType_Float},
		{
			FieldID: 104, Name: "tags", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int64, Nullable: true,
			TypeParams: []*commonpb.KeyValuePair{{Key: "max_capacity", Value: "4"}},
		},
		{
			FieldID: 105, Name: "level", DataType: schemapb.DataType_Int32,
			DefaultValue: &schemapb.ValueField{Data: &schemapb.ValueField_IntData{IntData: 7}},
		},
		{FieldID: 106, Name: "$meta", DataType: schemapb.DataType_JSON, IsDynamic: true},
	}}}
}

func longs(v ...int64) *schemapb.ScalarField {
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: v}}}
}

// partialStored holds keys 1 and 2, as a Strong query would return them.
func partialStored() *storedRows {
	cols := map[int64]column.Column{
		100: &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2}},
		101: &column.FloatVectors{Dim: 2, Data: []float32{1, 1, 2, 2}},
		102: &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"one", ""}, Nulls: column.Nulls{Valid: []bool{true, false}}},
		103: &column.Floats{T: schemapb.DataType_Float, Data: []float64{10, 20}},
		104: &column.Arrays{
			Elem: schemapb.DataType_Int64, Data: []*schemapb.ScalarField{longs(1, 2), nil},
			Nulls: column.Nulls{Valid: []bool{true, false}},
		},
		105: &column.Ints{T: schemapb.DataType_Int32, Data: []int64{3, 4}},
		106: &column.JSONs{Data: [][]byte{[]byte(`{"a":1,"b":2,"price":9}`), []byte(`{}`)}},
	}
	return &storedRows{cols: cols, row: map[any]int{int64(1): 0, int64(2): 1}}
}

// given validates request columns as the proxy does.
func given(t *testing.T, col *catalog.Collection, cols map[string]column.Column) *rows {
	t.Helper()
	var fds []*schemapb.FieldData
	for name, c := range cols {
		f := col.Field(name)
		fd := column.ToFieldData(name, f.GetFieldID(), c)
		fd.IsDynamic = f.GetIsDynamic()
		fds = append(fds, fd)
	}
	r, err := validateGiven(col, fds, 0, true)
	require.NoError(t, err)
	return r
}

func TestMergePartialKeepsStoredFields(t *testing.T) {
	col := partialCollection()
	g := given(t, col, map[string]column.Column{
		"id":   &column.Ints{T: schemapb.DataType_Int64, Data: []int64{2, 1}},
		"name": &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"two", ""}, Nulls: column.Nulls{Valid: []bool{true, false}}},
	})
	out, err := mergePartial(col, g, partialStored(), nil)
	require.NoError(t, err)
	require.Equal(t, 2, out.n)
	require.Equal(t, []int64{2, 1}, out.pk.(*column.Ints).Data)
	require.Equal(t, []float32{2, 2, 1, 1}, out.cols[101].(*column.FloatVectors).Data, "vectors follow their keys")
	name := out.cols[102].(*column.Strings)
	require.Equal(t, "two", name.Data[0])
	require.True(t, name.IsNull(1), "a null sent sets null")
	require.Equal(t, []float64{20, 10}, out.cols[103].(*column.Floats).Data)
	tags := out.cols[104].(*column.Arrays)
	require.True(t, tags.IsNull(0))
	require.Equal(t, []int64{1, 2}, tags.Data[1].GetLongData().GetData())
	require.Equal(t, []int64{4, 3}, out.cols[105].(*column.Ints).Data)
	meta := out.cols[106].(*column.JSONs)
	require.JSONEq(t, `{}`, string(meta.Data[0]))
	require.JSONEq(t, `{"a":1,"b":2}`, string(meta.Data[1]), "a stored key that is now a static field is dropped")

	// The merged rows are complete: the insert decoding accepts them.
	var fds []*schemapb.FieldData
	for _, f := range col.Schema.GetFields() {
		fds = append(fds, column.ToFieldData(f.GetName(), f.GetFieldID(), out.cols[f.GetFieldID()]))
	}
	_, err = column.InsertColumns(col.Schema, fds, out.n)
	require.NoError(t, err)
}

func TestMergePartialNewKeys(t *testing.T) {
	col := partialCollection()
	stored := partialStored()
	// Key 3 is new and price (not nullable, no default) is not sent.
	g := given(t, col, map[string]column.Column{
		"id":   &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 3}},
		"name": &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"x", "y"}},
	})
	_, err := mergePartial(col, g, stored, nil)
	require.Error(t, err)
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.Equal(t, "fieldSchema(v) has no corresponding fieldData pass in: invalid parameter", err.Error(),
		"the first missing required field in schema order is named")

	g = given(t, col, map[string]column.Column{
		"id":    &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 3}},
		"v":     &column.FloatVectors{Dim: 2, Data: []float32{5, 5, 6, 6}},
		"price": &column.Floats{T: schemapb.DataType_Float, Data: []float64{1.5, 2.5}},
		"$meta": &column.JSONs{Data: [][]byte{[]byte(`{"b":3,"c":4}`), []byte(`{"z":1}`)}},
	})
	out, err := mergePartial(col, g, stored, nil)
	require.NoError(t, err)
	name := out.cols[102].(*column.Strings)
	require.Equal(t, "one", name.Data[0], "stored key keeps its name")
	require.True(t, name.IsNull(1), "a new key's missing nullable field is null")
	require.Equal(t, []int64{3, 7}, out.cols[105].(*column.Ints).Data, "a new key's missing field takes the default")
	require.True(t, out.cols[104].IsNull(1))
	meta := out.cols[106].(*column.JSONs)
	require.JSONEq(t, `{"a":1,"b":3,"c":4}`, string(meta.Data[0]), "dynamic keys merge, sent keys win")
	require.JSONEq(t, `{"z":1}`, string(meta.Data[1]))
}

func TestMergePartialArrayOps(t *testing.T) {
	col := partialCollection()
	tags := func(valid []bool, v ...*schemapb.ScalarField) column.Column {
		return &column.Arrays{Elem: schemapb.DataType_Int64, Data: v, Nulls: column.Nulls{Valid: valid}}
	}
	ids := &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 3}}
	appendOps := fieldOps{104: schemapb.FieldPartialUpdateOp_ARRAY_APPEND}
	g := given(t, col, map[string]column.Column{
		"id": ids, "tags": tags(nil, longs(3), longs(7, 8), longs(9)),
		"v": &column.FloatVectors{Dim: 2, Data: make([]float32, 6)}, "price": &column.Floats{T: schemapb.DataType_Float, Data: make([]float64, 3)},
	})
	out, err := mergePartial(col, g, partialStored(), appendOps)
	require.NoError(t, err)
	got := out.cols[104].(*column.Arrays)
	require.Equal(t, []int64{1, 2, 3}, got.Data[0].GetLongData().GetData())
	require.Equal(t, []int64{7, 8}, got.Data[1].GetLongData().GetData(), "appending to a null array starts from empty")
	require.False(t, got.IsNull(1))
	require.Equal(t, []int64{9}, got.Data[2].GetLongData().GetData(), "a new key stores the payload as sent")
	require.Equal(t, []int64{1, 2}, partialStored().cols[104].(*column.Arrays).Data[0].GetLongData().GetData())

	// A null payload keeps the stored array.
	g = given(t, col, map[string]column.Column{
		"id":   &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}},
		"tags": tags([]bool{false}, nil),
	})
	out, err = mergePartial(col, g, partialStored(), appendOps)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, out.cols[104].(*column.Arrays).Data[0].GetLongData().GetData())

	// An append past max_capacity fails the whole request with Milvus's code.
	g = given(t, col, map[string]column.Column{
		"id":   &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}},
		"tags": tags(nil, longs(3, 4, 5)),
	})
	_, err = mergePartial(col, g, partialStored(), appendOps)
	require.Error(t, err)
	require.Equal(t, codeUnknown, errcode.CodeOf(err))
	require.Contains(t, err.Error(), "array length 5 exceeds max_capacity 4")

	// Remove drops every match; it is not bounded by capacity.
	g = given(t, col, map[string]column.Column{
		"id":   &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}},
		"tags": tags(nil, longs(1, 99)),
	})
	out, err = mergePartial(col, g, partialStored(), fieldOps{104: schemapb.FieldPartialUpdateOp_ARRAY_REMOVE})
	require.NoError(t, err)
	require.Equal(t, []int64{2}, out.cols[104].(*column.Arrays).Data[0].GetLongData().GetData())
}

func TestApplyArrayOp(t *testing.T) {
	appendOp, removeOp := schemapb.FieldPartialUpdateOp_ARRAY_APPEND, schemapb.FieldPartialUpdateOp_ARRAY_REMOVE
	nan := float32(math.NaN())
	sf := func(v any) *schemapb.ScalarField {
		switch v := v.(type) {
		case []bool:
			return &schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: v}}}
		case []int32:
			return &schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: v}}}
		case []float32:
			return &schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: v}}}
		case []float64:
			return &schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: v}}}
		case []string:
			return &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: v}}}
		}
		return longs(v.([]int64)...)
	}
	for _, tc := range []struct {
		name            string
		op              schemapb.FieldPartialUpdateOp_OpType
		elem            schemapb.DataType
		base, pay, want any
	}{
		{"bool append", appendOp, schemapb.DataType_Bool, []bool{true}, []bool{false, true}, []bool{true, false, true}},
		{"bool remove", removeOp, schemapb.DataType_Bool, []bool{true, false, true}, []bool{true}, []bool{false}},
		{"int8 append", appendOp, schemapb.DataType_Int8, []int32{1, 2}, []int32{2}, []int32{1, 2, 2}},
		{"int16 remove", removeOp, schemapb.DataType_Int16, []int32{5, 10, 5}, []int32{5, 40}, []int32{10}},
		{"int64 remove", removeOp, schemapb.DataType_Int64, []int64{10, 20, 10, 30}, []int64{10}, []int64{20, 30}},
		{"int64 remove all", removeOp, schemapb.DataType_Int64, []int64{1, 2}, []int64{2, 1}, []int64{}},
		{"float append", appendOp, schemapb.DataType_Float, []float32{1}, []float32{2, 3}, []float32{1, 2, 3}},
		{"float remove NaN removes nothing", removeOp, schemapb.DataType_Float, []float32{nan, 1}, []float32{nan, 1}, []float32{nan}},
		{"double remove", removeOp, schemapb.DataType_Double, []float64{1, 2, 1}, []float64{1}, []float64{2}},
		{"varchar append", appendOp, schemapb.DataType_VarChar, []string{"a"}, []string{"b", "a"}, []string{"a", "b", "a"}},
		{"varchar remove", removeOp, schemapb.DataType_VarChar, []string{"red", "blue", "red"}, []string{"red"}, []string{"blue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyArrayOp(tc.op, tc.elem, sf(tc.base), sf(tc.pay))
			require.NoError(t, err)
			want := sf(tc.want)
			gb, _ := json.Marshal(got.GetData())
			wb, _ := json.Marshal(want.GetData())
			if tc.elem == schemapb.DataType_Float {
				g := got.GetFloatData().GetData()
				w := want.GetFloatData().GetData()
				require.Len(t, g, len(w))
				for i := range w {
					require.True(t, g[i] == w[i] || (g[i] != g[i] && w[i] != w[i]), "element %d: %v vs %v", i, g[i], w[i])
				}
				return
			}
			require.Equal(t, string(wb), string(gb))
		})
	}
	got, err := applyArrayOp(appendOp, schemapb.DataType_Int64, nil, longs(1))
	require.NoError(t, err)
	require.Equal(t, []int64{1}, got.GetLongData().GetData(), "a nil base is empty")
	_, err = applyArrayOp(appendOp, schemapb.DataType_JSON, nil, nil)
	require.Error(t, err)
}

func TestParseFieldOps(t *testing.T) {
	col := partialCollection()
	col.Schema.Fields = append(col.Schema.Fields, &schemapb.FieldSchema{FieldID: 107, Name: "label", DataType: schemapb.DataType_VarChar})
	arr := func(name string, rows ...*schemapb.ScalarField) *schemapb.FieldData {
		return &schemapb.FieldData{FieldName: name, Type: schemapb.DataType_Array, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_ArrayData{ArrayData: &schemapb.ArrayArray{ElementType: schemapb.DataType_Int64, Data: rows}},
		}}}
	}
	op := func(name string, o schemapb.FieldPartialUpdateOp_OpType) *schemapb.FieldPartialUpdateOp {
		return &schemapb.FieldPartialUpdateOp{FieldName: name, Op: o}
	}
	appendOp := schemapb.FieldPartialUpdateOp_ARRAY_APPEND
	for _, tc := range []struct {
		name string
		fds  []*schemapb.FieldData
		ops  []*schemapb.FieldPartialUpdateOp
		err  string
	}{
		{"empty name", nil, []*schemapb.FieldPartialUpdateOp{op("", appendOp)}, "FieldPartialUpdateOp.field_name is required: invalid parameter"},
		{
			"duplicate",
			[]*schemapb.FieldData{arr("tags", longs(1))},
			[]*schemapb.FieldPartialUpdateOp{op("tags", appendOp), op("tags", appendOp)},
			`duplicate partial-update op for field "tags": invalid parameter`,
		},
		{"primary key", nil, []*schemapb.FieldPartialUpdateOp{op("id", appendOp)}, `field "id" is the primary key and cannot carry a partial-update op`},
		{"unknown", nil, []*schemapb.FieldPartialUpdateOp{op("nope", appendOp)}, `field "nope" not found in collection schema`},
		{"not an array", nil, []*schemapb.FieldPartialUpdateOp{op("label", appendOp)}, `op ARRAY_APPEND requires Array field, but field "label" is VarChar`},
		{
			"not sent", nil,
			[]*schemapb.FieldPartialUpdateOp{op("tags", schemapb.FieldPartialUpdateOp_ARRAY_REMOVE)},
			`partial-update op targets field "tags" not present in fields_data`,
		},
		{
			"payload over capacity",
			[]*schemapb.FieldData{arr("tags", longs(1, 2, 3, 4, 5))},
			[]*schemapb.FieldPartialUpdateOp{op("tags", appendOp)},
			`ARRAY_APPEND payload for field "tags" row 0 has length 5 exceeding max_capacity 4`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseFieldOps(col, &milvuspb.UpsertRequest{FieldsData: tc.fds, FieldOps: tc.ops})
			require.Error(t, err)
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.Contains(t, err.Error(), tc.err)
		})
	}

	ops, partial, err := parseFieldOps(col, &milvuspb.UpsertRequest{
		FieldsData: []*schemapb.FieldData{arr("tags", longs(1))},
		FieldOps:   []*schemapb.FieldPartialUpdateOp{op("tags", appendOp), op("label", schemapb.FieldPartialUpdateOp_REPLACE)},
	})
	require.NoError(t, err)
	require.True(t, partial, "a non-REPLACE op implies a partial update")
	require.Equal(t, fieldOps{104: appendOp}, ops)

	_, partial, err = parseFieldOps(col, &milvuspb.UpsertRequest{FieldOps: []*schemapb.FieldPartialUpdateOp{op("label", schemapb.FieldPartialUpdateOp_REPLACE)}})
	require.NoError(t, err)
	require.False(t, partial, "REPLACE alone is a plain upsert")
}
