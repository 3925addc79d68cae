package importer

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testSchema(dynamic bool) *schemapb.CollectionSchema {
	dim := func(n string) []*commonpb.KeyValuePair { return []*commonpb.KeyValuePair{{Key: "dim", Value: n}} }
	return &schemapb.CollectionSchema{
		Name: "t", EnableDynamicField: dynamic,
		Fields: []*schemapb.FieldSchema{
			{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
			{FieldID: 1, Name: "Timestamp", DataType: schemapb.DataType_Int64},
			{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
			{FieldID: 101, Name: "name", DataType: schemapb.DataType_VarChar, TypeParams: []*commonpb.KeyValuePair{{Key: "max_length", Value: "16"}}},
			{FieldID: 102, Name: "age", DataType: schemapb.DataType_Int8, Nullable: true},
			{FieldID: 103, Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: dim("2")},
			{FieldID: 104, Name: "tags", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int64, Nullable: true},
			{FieldID: 105, Name: "sp", DataType: schemapb.DataType_SparseFloatVector, Nullable: true},
			{FieldID: 106, Name: "$meta", DataType: schemapb.DataType_JSON, IsDynamic: true},
		},
	}
}

// columns decodes a batch's wire columns back into columns by name.
func columns(t *testing.T, schema *schemapb.CollectionSchema, b *batch) map[string]column.Column {
	t.Helper()
	out := map[string]column.Column{}
	for _, fd := range b.fieldData() {
		f := fieldNamed(schema, fd.GetFieldName())
		require.NotNil(t, f, fd.GetFieldName())
		c, err := column.FromFieldData(f, fd)
		require.NoError(t, err, fd.GetFieldName())
		out[fd.GetFieldName()] = c
	}
	return out
}

func TestTypeOf(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  FileType
		err   string
	}{
		{[]string{"a/b.json"}, FileJSON, ""},
		{[]string{"a.parquet"}, FileParquet, ""},
		{[]string{"x/id.npy", "x/v.npy"}, FileNumpy, ""},
		{[]string{"a.json", "b.json"}, "", "for JSON import, accepts only one file"},
		{[]string{"a.parquet", "b.parquet"}, "", "for Parquet import, accepts only one file"},
		{[]string{"a.json", "b.npy"}, "", "inconsistency in file types"},
		{[]string{"a.txt"}, "", "unexpected file type"},
		{[]string{"a.csv"}, "", "not supported"},
		{[]string{"a.jsonl"}, FileJSONLines, ""},
		{[]string{"a.ndjson"}, FileJSONLines, ""},
		{nil, "", "no file to import"},
	} {
		got, err := TypeOf(tc.paths)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.paths)
			require.Equal(t, errcode.ImportFailed, errcode.CodeOf(err))
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

func TestJSONSource(t *testing.T) {
	schema := testSchema(true)
	for _, doc := range []string{
		`{"rows": [{"id": 1, "name": "a", "age": 3, "v": [1, 2], "tags": [1, 2], "sp": {"5": 0.5, "1": 1}, "color": "red"},
		           {"id": 2, "name": "b", "v": [3.5, 4], "$meta": {"x": 1}}]}`,
		`[{"id": 1, "name": "a", "age": 3, "v": [1, 2], "tags": [1, 2], "sp": {"indices": [1, 5], "values": [1, 0.5]}, "color": "red"},
		  {"id": 2, "name": "b", "age": null, "v": [3.5, 4], "$meta": {"x": 1}}]`,
	} {
		s, err := newJSONSource(schema, []byte(doc))
		require.NoError(t, err)
		require.Equal(t, 2, s.numRows())
		b, err := s.read(0, 2)
		require.NoError(t, err)
		cols := columns(t, schema, b)
		require.Equal(t, []int64{1, 2}, cols["id"].(*column.Ints).Data)
		require.Equal(t, []string{"a", "b"}, cols["name"].(*column.Strings).Data)
		require.False(t, cols["age"].IsNull(0))
		require.True(t, cols["age"].IsNull(1))
		require.Equal(t, []float32{1, 2, 3.5, 4}, cols["v"].(*column.FloatVectors).Data)
		require.True(t, cols["sp"].IsNull(1))
		meta := cols["$meta"].(*column.JSONs).Data
		require.JSONEq(t, `{"color":"red"}`, string(meta[0]))
		require.JSONEq(t, `{"x":1}`, string(meta[1]))
	}
	for doc, want := range map[string]string{
		`{"rows": [{"id": 1, "name": "a", "v": [1, 2]}, {"id": 2, "v": [1, 2]}]}`: `row 1: field "name": the value is missing`,
		`[{"id": 1, "name": "a", "v": [1, 2, 3]}]`:                                `row 0: field "v": the vector has 3 dimensions, the field has 2`,
		`[{"id": 1, "name": "a", "v": [1, 2], "age": 300}]`:                       `row 0: field "age": 300 is out of the int8 range`,
		`[{"id": "x", "name": "a", "v": [1, 2]}]`:                                 `row 0: field "id": "x" is not an integer`,
		`[{"id": 1, "name": "a", "v": [1, 2], "sp": {"-1": 1}}]`:                  `row 0: field "sp": sparse index "-1"`,
		`[{"id": 1, "name": "a", "v": [1, 2], "tags": [1, "a"]}]`:                 `row 0: field "tags": element 1`,
		`[{"id": 1, "name": "a", "v": [1, 2]}, 7]`:                                `row 1: the row is not a JSON object`,
		`[{"id": 1, "name": "a", "v": [1, 2], "$meta": 3}]`:                       `the dynamic field "$meta" must be a JSON object`,
		`{"data": []}`: `a JSON import file is a list of rows or an object with a "rows" list`,
		`{"rows": [`:   `not valid JSON`,
	} {
		s, err := newJSONSource(schema, []byte(doc))
		if err == nil {
			_, err = s.read(0, s.numRows())
		}
		require.ErrorContains(t, err, want, doc)
	}
	// JSON Lines: one row per line.
	s, err := newJSONLinesSource(schema, []byte("{\"id\": 1, \"name\": \"a\", \"v\": [1, 2]}\n\n{\"id\": 2, \"name\": \"b\", \"v\": [3, 4]}\n"))
	require.NoError(t, err)
	require.Equal(t, 2, s.numRows())
	b, err := s.read(0, 2)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, columns(t, schema, b)["id"].(*column.Ints).Data)
	s, err = newJSONLinesSource(schema, []byte("{\"id\": 1, \"name\": \"a\", \"v\": [1, 2]}\n[1]\n"))
	require.NoError(t, err)
	_, err = s.read(0, 2)
	require.ErrorContains(t, err, "row 1: the row is not a JSON object")
	// Without the dynamic field, unknown keys are refused.
	s, err = newJSONSource(testSchema(false), []byte(`[{"id": 1, "name": "a", "v": [1, 2], "color": "red"}]`))
	require.NoError(t, err)
	_, err = s.read(0, 1)
	require.ErrorContains(t, err, `field "color" is not in the collection's schema`)
}

// npy encodes a version 1.0 .npy file.
func npy(descr string, shape string, data []byte) []byte {
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(header)+1)%64 != 0 {
		header += " "
	}
	header += "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	return append(append(out, header...), data...)
}

func TestNumpySource(t *testing.T) {
	schema := testSchema(true)
	var ids, vs, names []byte
	for i := 0; i < 3; i++ {
		ids = binary.LittleEndian.AppendUint64(ids, uint64(10+i))
		vs = binary.LittleEndian.AppendUint32(vs, math.Float32bits(float32(i)))
		vs = binary.LittleEndian.AppendUint32(vs, math.Float32bits(-1))
		for _, r := range fmt.Sprintf("n%d", i) {
			names = binary.LittleEndian.AppendUint32(names, uint32(r))
		}
	}
	var metas []byte
	for _, m := range []string{`{"a":1}`, `{"a":2}`, `{"b":"é"}`} {
		rs := []rune(m)
		for k := 0; k < 9; k++ {
			var r rune
			if k < len(rs) {
				r = rs[k]
			}
			metas = binary.LittleEndian.AppendUint32(metas, uint32(r))
		}
	}
	paths := []string{"d/id.npy", "d/v.npy", "d/name.npy", "d/$meta.npy"}
	data := [][]byte{npy("<i8", "(3,)", ids), npy("<f4", "(3, 2)", vs), npy("<U2", "(3,)", names), npy("<U9", "(3,)", metas)}
	s, err := newNumpySource(schema, paths, data)
	require.NoError(t, err)
	require.Equal(t, 3, s.numRows())
	b, err := s.read(1, 3)
	require.NoError(t, err)
	cols := columns(t, schema, b)
	require.Equal(t, []int64{11, 12}, cols["id"].(*column.Ints).Data)
	require.Equal(t, []float32{1, -1, 2, -1}, cols["v"].(*column.FloatVectors).Data)
	require.Equal(t, []string{"n1", "n2"}, cols["name"].(*column.Strings).Data)
	require.JSONEq(t, `{"b":"é"}`, string(cols["$meta"].(*column.JSONs).Data[1]))

	for name, tc := range map[string]struct {
		paths []string
		data  [][]byte
		want  string
	}{
		"not npy":    {[]string{"id.npy"}, [][]byte{[]byte("hello world")}, "not a NumPy .npy file"},
		"truncated":  {[]string{"id.npy"}, [][]byte{npy("<i8", "(3,)", ids[:16])}, "truncated"},
		"object":     {[]string{"id.npy"}, [][]byte{npy("|O", "(3,)", nil)}, "not supported"},
		"big endian": {[]string{"id.npy"}, [][]byte{npy(">i8", "(3,)", ids)}, "big-endian"},
		"vector 1-D": {[]string{"v.npy"}, [][]byte{npy("<f4", "(6,)", vs)}, `field "v" is a vector, but the array is 1-D`},
		"rows":       {[]string{"id.npy", "v.npy"}, [][]byte{npy("<i8", "(3,)", ids), npy("<f4", "(2, 2)", vs[:16])}, "has 2 rows"},
		"unknown":    {[]string{"zz.npy"}, [][]byte{npy("<i8", "(3,)", ids)}, `column "zz" that is not a field`},
		"sparse":     {[]string{"sp.npy"}, [][]byte{npy("<i8", "(3,)", ids)}, "cannot be imported from NumPy"},
	} {
		_, err := newNumpySource(schema, tc.paths, tc.data)
		require.ErrorContains(t, err, tc.want, name)
	}
	// A dim mismatch shows in the row.
	s, err = newNumpySource(schema, []string{"v.npy"}, [][]byte{npy("<f4", "(2, 3)", vs[:24])})
	require.NoError(t, err)
	_, err = s.read(0, 2)
	require.ErrorContains(t, err, `row 0: field "v": the vector has 3 dimensions`)
}

func TestParquetSource(t *testing.T) {
	schema := testSchema(true)
	mem := memory.DefaultAllocator
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "age", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "v", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "sp", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "$meta", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(mem, sch)
	defer rb.Release()
	for i := 0; i < 3; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", i))
		if i == 1 {
			rb.Field(2).AppendNull()
			rb.Field(4).AppendNull()
			rb.Field(5).AppendNull()
		} else {
			rb.Field(2).(*array.Int8Builder).Append(int8(i))
			lb := rb.Field(4).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{int64(i), 7}, nil)
			rb.Field(5).(*array.StringBuilder).Append(`{"3": 0.25}`)
		}
		lb := rb.Field(3).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), 0.5}, nil)
		rb.Field(6).(*array.StringBuilder).Append(fmt.Sprintf(`{"k":%d}`, i))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(sch, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	require.NoError(t, pqarrow.WriteTable(tbl, &buf, 2, nil, pqarrow.DefaultWriterProps()))

	s, err := newParquetSource(context.Background(), schema, buf.Bytes())
	require.NoError(t, err)
	defer s.release()
	require.Equal(t, 3, s.numRows())
	b, err := s.read(0, 3)
	require.NoError(t, err)
	cols := columns(t, schema, b)
	require.Equal(t, []int64{0, 1, 2}, cols["id"].(*column.Ints).Data)
	require.True(t, cols["age"].IsNull(1))
	require.EqualValues(t, 2, cols["age"].(*column.Ints).Data[2])
	require.Equal(t, []float32{0, 0.5, 1, 0.5, 2, 0.5}, cols["v"].(*column.FloatVectors).Data)
	require.True(t, cols["tags"].IsNull(1))
	require.Equal(t, []int64{2, 7}, cols["tags"].(*column.Arrays).Data[2].GetLongData().GetData())
	require.False(t, cols["sp"].IsNull(0))
	require.JSONEq(t, `{"k":2}`, string(cols["$meta"].(*column.JSONs).Data[2]))

	_, err = newParquetSource(context.Background(), schema, []byte("PAR1 garbage PAR1"))
	require.ErrorContains(t, err, "not a valid Parquet file")
	_, err = newParquetSource(context.Background(), testSchema(false), buf.Bytes())
	require.ErrorContains(t, err, `the collection has no dynamic field, but the file has a "$meta" column`)
}

func TestCellValue(t *testing.T) {
	f16 := &schemapb.FieldSchema{Name: "h", DataType: schemapb.DataType_Float16Vector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}}
	v, err := cellValue(f16, []any{float64(1), float64(-2)})
	require.NoError(t, err)
	require.Equal(t, []byte{0x00, 0x3c, 0x00, 0xc0}, v)
	v, err = cellValue(f16, []byte{1, 2, 3, 4})
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3, 4}, v)
	_, err = cellValue(f16, []byte{1, 2})
	require.ErrorContains(t, err, "dim 2 needs 4")
	i8 := &schemapb.FieldSchema{Name: "q", DataType: schemapb.DataType_Int8Vector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}}
	v, err = cellValue(i8, []any{int64(-1), int64(5)})
	require.NoError(t, err)
	require.Equal(t, []byte{0xff, 5}, v)
	_, err = cellValue(i8, []any{int64(200), int64(5)})
	require.ErrorContains(t, err, "not an integer in [-128, 127]")
	sp := &schemapb.FieldSchema{Name: "s", DataType: schemapb.DataType_SparseFloatVector}
	a, err := cellValue(sp, `{"9": 1, "2": 0.5}`)
	require.NoError(t, err)
	b, err := cellValue(sp, map[string]any{"indices": []any{int64(2), int64(9)}, "values": []any{0.5, 1.0}})
	require.NoError(t, err)
	require.Equal(t, a, b)
	js := &schemapb.FieldSchema{Name: "j", DataType: schemapb.DataType_JSON}
	_, err = cellValue(js, "{not json")
	require.ErrorContains(t, err, "is not valid JSON")
}

func TestTextFields(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "g", DataType: schemapb.DataType_Geometry, Nullable: true},
		{FieldID: 102, Name: "ts", DataType: schemapb.DataType_Timestamptz},
	}}
	s, err := newJSONSource(schema, []byte(`[{"id": 1, "g": "POINT (1 2)", "ts": "2025-01-02T03:04:05Z"},
		{"id": 2, "g": null, "ts": "2025-01-02T03:04:06Z"}]`))
	require.NoError(t, err)
	b, err := s.read(0, 2)
	require.NoError(t, err)
	fds := b.fieldData()
	require.Equal(t, []string{"POINT (1 2)", ""}, fds[1].GetScalars().GetGeometryWktData().GetData())
	require.Equal(t, []bool{true, false}, fds[1].GetValidData())
	require.Len(t, fds[2].GetScalars().GetStringData().GetData(), 2)
	bad, err := column.TimestamptzFromStrings(fds[2], "UTC")
	require.NoError(t, err, bad)
	_, err = column.FromFieldData(schema.Fields[1], fds[1])
	require.NoError(t, err)
}

func TestStructArrayRows(t *testing.T) {
	schema := &schemapb.CollectionSchema{
		Fields: []*schemapb.FieldSchema{
			{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
			{FieldID: 102, Name: "clips[len]", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int32},
		},
		StructArrayFields: []*schemapb.StructArrayFieldSchema{{FieldID: 101, Name: "clips", Fields: []*schemapb.FieldSchema{
			{
				FieldID: 102, Name: "len", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int32,
				TypeParams: []*commonpb.KeyValuePair{{Key: "max_capacity", Value: "4"}},
			},
			{
				FieldID: 103, Name: "emb", DataType: schemapb.DataType_ArrayOfVector, ElementType: schemapb.DataType_FloatVector,
				TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}, {Key: "max_capacity", Value: "4"}},
			},
		}}},
	}
	s, err := newJSONSource(schema, []byte(`[{"id": 1, "clips": [{"len": 3, "emb": [1, 2]}, {"len": 4, "emb": [3, 4]}]},
		{"id": 2, "clips": []}]`))
	require.NoError(t, err)
	b, err := s.read(0, 2)
	require.NoError(t, err)
	fds := b.fieldData()
	require.Len(t, fds, 2, "the sub-field columns are not columns of the file")
	st := fds[1].GetStructArrays().GetFields()
	require.Equal(t, "clips", fds[1].GetFieldName())
	require.Len(t, st, 2)
	require.Equal(t, []int32{3, 4}, st[0].GetScalars().GetArrayData().GetData()[0].GetIntData().GetData())
	c, err := column.FromFieldData(schema.StructArrayFields[0].Fields[1], st[1])
	require.NoError(t, err)
	require.Equal(t, [][]float32{{1, 2, 3, 4}, nil}, c.(*column.VectorArrays).Data)

	s, err = newJSONSource(schema, []byte(`[{"id": 1, "clips": [{"len": 3}]}]`))
	require.NoError(t, err)
	_, err = s.read(0, 1)
	require.ErrorContains(t, err, `row 0: struct array field clips: element 0 has no "emb"`)
}
