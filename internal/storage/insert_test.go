package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testTS0 uint64 = 1764000000000 << 18
	testTS1        = testTS0 + 100
)

func testDesc() Descriptor {
	return Descriptor{CollectionID: 449, PartitionID: 450, SegmentID: 451, StartTimestamp: testTS0, EndTimestamp: testTS1}
}

func fieldOf(id int64, t schemapb.DataType, opts ...func(*schemapb.FieldSchema)) *schemapb.FieldSchema {
	f := &schemapb.FieldSchema{FieldID: id, Name: "f" + strconv.FormatInt(id, 10), DataType: t}
	for _, o := range opts {
		o(f)
	}
	return f
}

func nullable(f *schemapb.FieldSchema) { f.Nullable = true }
func primary(f *schemapb.FieldSchema)  { f.IsPrimaryKey = true }
func dim(d int) func(*schemapb.FieldSchema) {
	return func(f *schemapb.FieldSchema) {
		f.TypeParams = append(f.TypeParams, &commonpb.KeyValuePair{Key: "dim", Value: strconv.Itoa(d)})
	}
}

func elem(t schemapb.DataType) func(*schemapb.FieldSchema) {
	return func(f *schemapb.FieldSchema) { f.ElementType = t }
}

func sparseRow(pairs ...float32) []byte {
	b := make([]byte, 0, len(pairs)*4)
	for i := 0; i+1 < len(pairs); i += 2 {
		b = binary.LittleEndian.AppendUint32(b, uint32(pairs[i]))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(pairs[i+1]))
	}
	return b
}

type roundTripCase struct {
	name  string
	field *schemapb.FieldSchema
	col   column.Column
}

func roundTripCases() []roundTripCase {
	valid := []bool{true, false, true}
	return []roundTripCase{
		{"bool", fieldOf(100, schemapb.DataType_Bool), &column.Bools{Data: []bool{true, false, true}}},
		{"bool nullable", fieldOf(100, schemapb.DataType_Bool, nullable), &column.Bools{Nulls: column.Nulls{Valid: valid}, Data: []bool{true, false, false}}},
		{"int8 range", fieldOf(101, schemapb.DataType_Int8), &column.Ints{T: schemapb.DataType_Int8, Data: []int64{math.MinInt8, 0, math.MaxInt8}}},
		{"int8 nullable", fieldOf(101, schemapb.DataType_Int8, nullable), &column.Ints{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_Int8, Data: []int64{-5, 0, 7}}},
		{"int16 range", fieldOf(102, schemapb.DataType_Int16), &column.Ints{T: schemapb.DataType_Int16, Data: []int64{math.MinInt16, -1, math.MaxInt16}}},
		{"int32 range", fieldOf(103, schemapb.DataType_Int32), &column.Ints{T: schemapb.DataType_Int32, Data: []int64{math.MinInt32, 1, math.MaxInt32}}},
		{"int32 nullable", fieldOf(103, schemapb.DataType_Int32, nullable), &column.Ints{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_Int32, Data: []int64{1, 0, 3}}},
		{"int64 pk", fieldOf(104, schemapb.DataType_Int64, primary), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{math.MinInt64, 0, math.MaxInt64}}},
		{"int64 nullable", fieldOf(104, schemapb.DataType_Int64, nullable), &column.Ints{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_Int64, Data: []int64{1, 0, 3}}},
		{"rowid", fieldOf(0, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{10, 11, 12}}},
		{"timestamp", fieldOf(1, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{int64(testTS0), int64(testTS0 + 1), int64(testTS1)}}},
		{"float", fieldOf(105, schemapb.DataType_Float), &column.Floats{T: schemapb.DataType_Float, Data: []float64{1.5, -0.25, math.MaxFloat32}}},
		{"float nullable", fieldOf(105, schemapb.DataType_Float, nullable), &column.Floats{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_Float, Data: []float64{1.5, 0, 2}}},
		{"double", fieldOf(106, schemapb.DataType_Double), &column.Floats{T: schemapb.DataType_Double, Data: []float64{math.Pi, math.Inf(-1), math.SmallestNonzeroFloat64}}},
		{"varchar unicode and empty", fieldOf(107, schemapb.DataType_VarChar), &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"", "héllo wörld", "日本語 🚀"}}},
		{"varchar pk", fieldOf(107, schemapb.DataType_VarChar, primary), &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"a", "b", "c"}}},
		{"varchar nullable", fieldOf(107, schemapb.DataType_VarChar, nullable), &column.Strings{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_VarChar, Data: []string{"x", "", ""}}},
		{"string", fieldOf(108, schemapb.DataType_String), &column.Strings{T: schemapb.DataType_String, Data: []string{"s1", "s2", ""}}},
		{"json", fieldOf(109, schemapb.DataType_JSON), &column.JSONs{Data: [][]byte{[]byte(`{"a":1}`), []byte(`[1,2,"x"]`), []byte(`"ü"`)}}},
		{"json nullable", fieldOf(109, schemapb.DataType_JSON, nullable), &column.JSONs{Nulls: column.Nulls{Valid: valid}, Data: [][]byte{[]byte(`{"a":1}`), nil, []byte(`null`)}}},
		{"array bool", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_Bool)), &column.Arrays{Elem: schemapb.DataType_Bool, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: []bool{true, false}}}},
			{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{}}},
		}}},
		{"array int8", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_Int8)), &column.Arrays{Elem: schemapb.DataType_Int8, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{-128, 127}}}},
		}}},
		{"array int16", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_Int16)), &column.Arrays{Elem: schemapb.DataType_Int16, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{-32768, 32767}}}},
		}}},
		{"array int32", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_Int32)), &column.Arrays{Elem: schemapb.DataType_Int32, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{1, 2, 3}}}},
		}}},
		{"array int64", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_Int64)), &column.Arrays{Elem: schemapb.DataType_Int64, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{math.MaxInt64}}}},
		}}},
		{"array float", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_Float)), &column.Arrays{Elem: schemapb.DataType_Float, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: []float32{1.5}}}},
		}}},
		{"array double", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_Double)), &column.Arrays{Elem: schemapb.DataType_Double, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: []float64{2.5, -1}}}},
		}}},
		{"array varchar nullable", fieldOf(110, schemapb.DataType_Array, elem(schemapb.DataType_VarChar), nullable), &column.Arrays{Nulls: column.Nulls{Valid: valid}, Elem: schemapb.DataType_VarChar, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"a", "", "日本"}}}},
			nil,
			{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"z"}}}},
		}}},
		{"float vector", fieldOf(111, schemapb.DataType_FloatVector, dim(4)), &column.FloatVectors{Dim: 4, Data: []float32{1, 2, 3, 4, -1, -2, -3, float32(math.Inf(1))}}},
		{"binary vector", fieldOf(112, schemapb.DataType_BinaryVector, dim(16)), &column.ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2, Data: []byte{0xff, 0x01, 0x00, 0x80}}},
		{"float16 vector", fieldOf(113, schemapb.DataType_Float16Vector, dim(2)), &column.ByteVectors{T: schemapb.DataType_Float16Vector, Dim: 2, Width: 4, Data: []byte{0, 0x3c, 0, 0x40, 1, 2, 3, 4}}},
		{"bfloat16 vector", fieldOf(114, schemapb.DataType_BFloat16Vector, dim(2)), &column.ByteVectors{T: schemapb.DataType_BFloat16Vector, Dim: 2, Width: 4, Data: []byte{0x80, 0x3f, 0, 0x40}}},
		{"int8 vector", fieldOf(115, schemapb.DataType_Int8Vector, dim(3)), &column.ByteVectors{T: schemapb.DataType_Int8Vector, Dim: 3, Width: 3, Data: []byte{0x80, 0x7f, 0, 1, 2, 3}}},
		{"sparse vector", fieldOf(116, schemapb.DataType_SparseFloatVector), &column.SparseVectors{Dim: 1001, Data: [][]byte{sparseRow(1, 0.5, 1000, 2), {}, sparseRow(7, -1)}}},
		{"float vector nullable", fieldOf(111, schemapb.DataType_FloatVector, dim(2), nullable), &column.FloatVectors{Nulls: column.Nulls{Valid: valid}, Dim: 2, Data: []float32{1, 2, 0, 0, 5, 6}}},
		{"float vector all null", fieldOf(111, schemapb.DataType_FloatVector, dim(2), nullable), &column.FloatVectors{Nulls: column.Nulls{Valid: []bool{false, false}}, Dim: 2, Data: []float32{0, 0, 0, 0}}},
		{"binary vector nullable", fieldOf(112, schemapb.DataType_BinaryVector, dim(16), nullable), &column.ByteVectors{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2, Data: []byte{0xff, 0x01, 0, 0, 0x00, 0x80}}},
		{"int8 vector nullable", fieldOf(115, schemapb.DataType_Int8Vector, dim(1), nullable), &column.ByteVectors{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_Int8Vector, Dim: 1, Width: 1, Data: []byte{0x80, 0, 3}}},
		{"sparse vector nullable", fieldOf(116, schemapb.DataType_SparseFloatVector, nullable), &column.SparseVectors{Nulls: column.Nulls{Valid: valid}, Dim: 8, Data: [][]byte{sparseRow(1, 0.5), nil, sparseRow(7, -1)}}},
	}
}

func TestInsertLogRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases() {
		t.Run(tc.name, func(t *testing.T) {
			data, err := EncodeInsertLog(testDesc(), tc.field, tc.col)
			require.NoError(t, err)
			b, err := DecodeBinlog(data, WithElementType(tc.field.GetElementType()))
			require.NoError(t, err)
			require.Equal(t, tc.field.GetFieldID(), b.Descriptor.FieldID)
			require.Equal(t, tc.field.GetDataType(), b.Descriptor.PayloadType)
			require.Equal(t, tc.field.GetNullable(), b.Nullable)
			require.Equal(t, InsertEventType, b.EventType())
			require.Len(t, b.Events, 1)
			require.Equal(t, tc.col.Len(), b.Events[0].Rows)
			require.Equal(t, testTS0, b.Events[0].StartTimestamp)
			require.Equal(t, testTS1, b.Events[0].EndTimestamp)
			require.Equal(t, []string{"val"}, b.ColumnNames)
			require.Equal(t, strconv.Itoa(MemorySize(tc.col, tc.field.GetNullable())), b.Descriptor.Extras[ExtraOriginalSize])
			requireSameColumn(t, tc.col, b.Column())
		})
	}
}

// requireSameColumn compares columns, with proto.Equal for Array rows.
func requireSameColumn(t *testing.T, want, got column.Column) {
	t.Helper()
	want, got = normalize(want), normalize(got)
	wa, ok := want.(*column.Arrays)
	if !ok {
		require.Equal(t, want, got)
		return
	}
	ga, ok := got.(*column.Arrays)
	require.True(t, ok, "got %T", got)
	require.Equal(t, wa.Elem, ga.Elem)
	require.Equal(t, wa.Valid, ga.Valid)
	require.Len(t, ga.Data, len(wa.Data))
	for i := range wa.Data {
		require.True(t, proto.Equal(wa.Data[i], ga.Data[i]), "row %d: %v != %v", i, wa.Data[i], ga.Data[i])
	}
}

// normalize zeroes the placeholder values of null rows, which are not stored.
func normalize(c column.Column) column.Column {
	idx := make([]int, c.Len())
	for i := range idx {
		idx[i] = i
	}
	out := c.Take(idx)
	valid := out.Validity()
	if valid == nil {
		return out
	}
	for i, v := range valid {
		if v {
			continue
		}
		switch x := out.(type) {
		case *column.Bools:
			x.Data[i] = false
		case *column.Ints:
			x.Data[i] = 0
		case *column.Floats:
			x.Data[i] = 0
		case *column.Strings:
			x.Data[i] = ""
		case *column.JSONs:
			x.Data[i] = nil
		case *column.Arrays:
			x.Data[i] = nil
		}
	}
	return out
}

func TestEncodeInsertLogErrors(t *testing.T) {
	cases := []struct {
		name  string
		d     Descriptor
		field *schemapb.FieldSchema
		col   column.Column
		want  error
	}{
		{"empty", testDesc(), fieldOf(100, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64}, ErrEmpty},
		{"type mismatch", testDesc(), fieldOf(100, schemapb.DataType_Int64), &column.Bools{Data: []bool{true}}, ErrTypeMismatch},
		{"int8 overflow", testDesc(), fieldOf(100, schemapb.DataType_Int8), &column.Ints{T: schemapb.DataType_Int8, Data: []int64{128}}, ErrTypeMismatch},
		{"null in required", testDesc(), fieldOf(100, schemapb.DataType_Int64), &column.Ints{Nulls: column.Nulls{Valid: []bool{false}}, T: schemapb.DataType_Int64, Data: []int64{0}}, ErrTypeMismatch},
		{"dim mismatch", testDesc(), fieldOf(100, schemapb.DataType_FloatVector, dim(8)), &column.FloatVectors{Dim: 4, Data: make([]float32, 4)}, ErrTypeMismatch},
		{"zero timestamps", Descriptor{}, fieldOf(100, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, ErrInvalidTimestamp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeInsertLog(tc.d, tc.field, tc.col)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestInsertLogByteLayout(t *testing.T) {
	d := testDesc()
	d.HeaderTimestamp = 0x0102030405060708
	d.Extras = map[string]any{"zz": "last", "aa": 1}
	field := fieldOf(101, schemapb.DataType_Int64)
	data, err := EncodeInsertLog(d, field, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 3}})
	require.NoError(t, err)

	le := binary.LittleEndian
	require.Equal(t, []byte{0xBC, 0xFA, 0xFF, 0x00}, data[0:4])
	// Descriptor event header at 4.
	require.Equal(t, d.HeaderTimestamp, le.Uint64(data[4:]))
	require.Equal(t, byte(DescriptorEventType), data[12])
	wantExtras := `{"aa":1,"nullable":false,"original_size":"25","zz":"last"}`
	n := len(wantExtras)
	eventLen := 17 + 52 + 8 + 4 + n
	require.Equal(t, int32(eventLen), int32(le.Uint32(data[13:])))
	require.Equal(t, int32(4+eventLen), int32(le.Uint32(data[17:])))
	// Descriptor fixed part at 21.
	require.Equal(t, int64(449), int64(le.Uint64(data[21:])))
	require.Equal(t, int64(450), int64(le.Uint64(data[29:])))
	require.Equal(t, int64(451), int64(le.Uint64(data[37:])))
	require.Equal(t, int64(101), int64(le.Uint64(data[45:])))
	require.Equal(t, testTS0, le.Uint64(data[53:]))
	require.Equal(t, testTS1, le.Uint64(data[61:]))
	require.Equal(t, int32(schemapb.DataType_Int64), int32(le.Uint32(data[69:])))
	// Post-header lengths at 73, extras length at 81, extras at 85.
	require.Equal(t, []byte{52, 16, 16, 16, 16, 16, 16, 16}, data[73:81])
	require.Equal(t, int32(n), int32(le.Uint32(data[81:])))
	require.Equal(t, wantExtras, string(data[85:85+n]))
	// Insert event at 4+eventLen.
	ev := 4 + eventLen
	require.Equal(t, d.HeaderTimestamp, le.Uint64(data[ev:]))
	require.Equal(t, byte(InsertEventType), data[ev+8])
	dataLen := int(le.Uint32(data[ev+9:]))
	require.Equal(t, len(data)-ev, dataLen)
	require.Equal(t, int32(ev+dataLen), int32(le.Uint32(data[ev+13:])))
	require.Equal(t, testTS0, le.Uint64(data[ev+17:]))
	require.Equal(t, testTS1, le.Uint64(data[ev+25:]))
	payload := data[ev+33:]
	require.Equal(t, "PAR1", string(payload[:4]))
	require.Equal(t, "PAR1", string(payload[len(payload)-4:]))
}

func TestInsertLogParquetMetadata(t *testing.T) {
	cases := []struct {
		name     string
		field    *schemapb.FieldSchema
		col      column.Column
		rep      parquet.Repetition
		dict     bool
		physical parquet.Type
	}{
		{"pk int64", fieldOf(100, schemapb.DataType_Int64, primary), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 2}}, parquet.Repetitions.Required, false, parquet.Types.Int64},
		{"plain int64", fieldOf(101, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 2}}, parquet.Repetitions.Required, true, parquet.Types.Int64},
		{"nullable varchar", fieldOf(102, schemapb.DataType_VarChar, nullable), &column.Strings{Nulls: column.Nulls{Valid: []bool{true, false, true}}, T: schemapb.DataType_VarChar, Data: []string{"a", "", "a"}}, parquet.Repetitions.Optional, true, parquet.Types.ByteArray},
		{"int8", fieldOf(103, schemapb.DataType_Int8), &column.Ints{T: schemapb.DataType_Int8, Data: []int64{1, 2, 3}}, parquet.Repetitions.Required, true, parquet.Types.Int32},
		{"float vector", fieldOf(104, schemapb.DataType_FloatVector, dim(2)), &column.FloatVectors{Dim: 2, Data: []float32{1, 2, 3, 4}}, parquet.Repetitions.Required, true, parquet.Types.FixedLenByteArray},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := EncodeInsertLog(testDesc(), tc.field, tc.col)
			require.NoError(t, err)
			b, err := DecodeBinlog(data)
			require.NoError(t, err)
			rdr, err := file.NewParquetReader(bytes.NewReader(b.Events[0].Payload))
			require.NoError(t, err)
			defer func() { require.NoError(t, rdr.Close()) }()
			md := rdr.MetaData()
			require.Equal(t, 1, md.NumRowGroups())
			require.Equal(t, int64(tc.col.Len()), md.NumRows)
			require.Equal(t, parquet.DefaultCreatedBy, md.GetCreatedBy())
			require.Nil(t, md.KeyValueMetadata().FindValue("ARROW:schema"))
			require.Equal(t, "schema", md.Schema.Root().Name())
			col := md.Schema.Column(0)
			require.Equal(t, "val", col.Name())
			require.Equal(t, tc.rep, col.SchemaNode().RepetitionType())
			require.Equal(t, tc.physical, col.PhysicalType())
			if tc.field.GetDataType() == schemapb.DataType_Int8 {
				require.Equal(t, "Int(bitWidth=8, isSigned=true)", col.LogicalType().String())
			}
			if tc.field.GetDataType() == schemapb.DataType_FloatVector {
				require.Equal(t, 8, col.TypeLength())
			}
			cc, err := md.RowGroup(0).ColumnChunk(0)
			require.NoError(t, err)
			require.Equal(t, compress.Codecs.Zstd, cc.Compression())
			require.Equal(t, tc.dict, cc.HasDictionaryPage())
			set, err := cc.StatsSet()
			require.NoError(t, err)
			require.True(t, set)
		})
	}
}

func TestDecodeStreamFamilyInsertLog(t *testing.T) {
	// A stream-writer binlog built by hand: descriptor ts 0/0, event ts 1/1,
	// NextPosition −1, column named after the field ID, OPTIONAL, two events.
	field := fieldOf(105, schemapb.DataType_FloatVector, dim(2))
	payload := func(vals []float32) []byte {
		col := &column.FloatVectors{Dim: 2, Data: vals}
		arr, err := buildArrow(nil2alloc(), field.DataType, mustArrowType(t, field.DataType, col), col, false)
		require.NoError(t, err)
		defer arr.Release()
		p, err := writeStreamParquet(arrowSchema("105", arr.DataType(), true), [][]arrowArray{{arr}}, streamProps())
		require.NoError(t, err)
		return p
	}
	p1, p2 := payload([]float32{1, 2, 3, 4}), payload([]float32{5, 6})
	extras := []byte(`{"nullable":false,"original_size":"28"}`)
	var buf bytes.Buffer
	le := binary.LittleEndian
	w := func(v any) { require.NoError(t, binary.Write(&buf, le, v)) }
	w(MagicNumber)
	descLen := int32(17 + 52 + 8 + 4 + len(extras))
	w(uint64(7)) // header timestamp
	w(int8(DescriptorEventType))
	w(descLen)
	w(4 + descLen)
	w([]int64{1, 2, 3, 105})
	w([]uint64{0, 0})
	w(int32(schemapb.DataType_FloatVector))
	w([]uint8{52, 16, 16, 16, 16, 16, 16, 16})
	w(int32(len(extras)))
	buf.Write(extras)
	for _, p := range [][]byte{p1, p2} {
		w(uint64(7))
		w(int8(InsertEventType))
		w(int32(33 + len(p)))
		w(int32(-1))
		w([]uint64{1, 1})
		buf.Write(p)
	}
	b, err := DecodeBinlog(buf.Bytes())
	require.NoError(t, err)
	require.Len(t, b.Events, 2)
	require.Equal(t, []string{"105"}, b.ColumnNames)
	require.Equal(t, int32(-1), b.Events[1].NextPosition)
	require.Equal(t, uint64(1), b.Events[0].StartTimestamp)
	require.False(t, b.Nullable)
	require.Equal(t, &column.FloatVectors{Dim: 2, Data: []float32{1, 2, 3, 4, 5, 6}}, b.Column())
}

func TestDecodeBinlogCorrupt(t *testing.T) {
	good, err := EncodeInsertLog(testDesc(), fieldOf(100, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}})
	require.NoError(t, err)
	badMagic := bytes.Clone(good)
	badMagic[0] = 0
	encrypted := encryptedCopy(t, good)
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"short", good[:10], ErrCorrupt},
		{"magic", badMagic, ErrCorrupt},
		{"truncated event", good[:len(good)-5], ErrCorrupt},
		{"encrypted", encrypted, ErrEncrypted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeBinlog(tc.data)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// encryptedCopy re-frames data with an "edek" extra.
func encryptedCopy(t *testing.T, data []byte) []byte {
	pf, err := parseFrame(data)
	require.NoError(t, err)
	ex := map[string]any{}
	require.NoError(t, json.Unmarshal(pf.extrasRaw, &ex))
	ex[ExtraEDEK] = "key"
	ej, err := marshalExtras(ex)
	require.NoError(t, err)
	return writeFrame(&frame{desc: pf.desc, extras: ej, eventType: InsertEventType, eventStart: 1, eventEnd: 1, payload: pf.events[0].Payload})
}
