package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

// TestDeltaLogFixtureHeader checks every byte before the payload of the
// Milvus e2e fixture "StorageV1 NewDeltalogWriter, coll/part/seg 1/2/3,
// PKs 30400/30401, ts 200/201" (spec §2.6).
func TestDeltaLogFixtureHeader(t *testing.T) {
	const headerTS uint64 = 0x0123456789ABCDEF
	data, err := EncodeDeltaLog(Descriptor{CollectionID: 1, PartitionID: 2, SegmentID: 3, HeaderTimestamp: headerTS},
		schemapb.DataType_Int64, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{30400, 30401}}, []uint64{200, 201})
	require.NoError(t, err)

	payloadLen := len(data) - 107 - 33
	var want bytes.Buffer
	w := func(v any) { require.NoError(t, binary.Write(&want, binary.LittleEndian, v)) }
	w([]byte{0xBC, 0xFA, 0xFF, 0x00})
	// descriptor event header: ts, type 0, EventLength 103, NextPosition 107
	w(headerTS)
	w(int8(0))
	w(int32(103))
	w(int32(107))
	// fixed part: coll 1, part 2, seg 3, field −1, ts 0/0, PayloadDataType String
	w([]int64{1, 2, 3, -1})
	w([]uint64{0, 0})
	w(int32(20))
	w([]uint8{52, 16, 16, 16, 16, 16, 16, 16})
	extras := `{"original_size":"77"}`
	w(int32(len(extras)))
	want.WriteString(extras)
	require.Equal(t, 107, want.Len())
	// delete event header: type 2, EventLength 33+payload, NextPosition −1, start/end 1/1
	w(headerTS)
	w(int8(2))
	w(int32(33 + payloadLen))
	w(int32(-1))
	w([]uint64{1, 1})
	require.Equal(t, want.Bytes(), data[:140])

	payload := data[140:]
	require.Equal(t, "PAR1", string(payload[:4]))
	rdr, err := file.NewParquetReader(bytes.NewReader(payload))
	require.NoError(t, err)
	defer func() { require.NoError(t, rdr.Close()) }()
	md := rdr.MetaData()
	col := md.Schema.Column(0)
	require.Equal(t, "0", col.Name())
	require.Equal(t, parquet.Repetitions.Optional, col.SchemaNode().RepetitionType())
	cc, err := md.RowGroup(0).ColumnChunk(0)
	require.NoError(t, err)
	require.Equal(t, compress.Codecs.Zstd, cc.Compression())
	require.True(t, cc.HasDictionaryPage())
	t.Logf("payload %d bytes (fixture: 410)", payloadLen)

	pks, tss, err := DecodeDeltaLog(data)
	require.NoError(t, err)
	require.Equal(t, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{30400, 30401}}, pks)
	require.Equal(t, []uint64{200, 201}, tss)

	b, err := DecodeBinlog(data)
	require.NoError(t, err)
	require.Equal(t, &column.Strings{T: schemapb.DataType_String, Data: []string{
		`{"pk":30400,"ts":200,"pkType":5}`, `{"pk":30401,"ts":201,"pkType":5}`,
	}}, b.Column())
}

func TestDeltaLogOriginalSize(t *testing.T) {
	// original_size = Σ per 1024-row batch of the Arrow string array's buffer
	// bytes: validity bitmap + 4(n+1) offsets + Σ len(row). The bitmap is
	// sized by the builder's capacity growth (1 byte for 2 rows, 128 for
	// 1024, 64 for 452), so the sum is taken from Arrow, as Milvus does.
	n := 2500
	pks := make([]int64, n)
	tss := make([]uint64, n)
	want := 0
	for i := range pks {
		pks[i] = int64(i)
		tss[i] = uint64(1000 + i)
		want += len(fmt.Sprintf(`{"pk":%d,"ts":%d,"pkType":5}`, i, 1000+i))
	}
	for _, b := range []struct{ rows, bitmap int }{{1024, 128}, {1024, 128}, {452, 64}} {
		want += b.bitmap + 4*(b.rows+1)
	}
	data, err := EncodeDeltaLog(Descriptor{CollectionID: 1, PartitionID: 2, SegmentID: 3},
		schemapb.DataType_Int64, &column.Ints{T: schemapb.DataType_Int64, Data: pks}, tss)
	require.NoError(t, err)
	b, err := DecodeBinlog(data)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(want), b.Descriptor.Extras[ExtraOriginalSize])
	got, gotTS, err := DecodeDeltaLog(data)
	require.NoError(t, err)
	require.Equal(t, pks, got.(*column.Ints).Data)
	require.Equal(t, tss, gotTS)
}

func TestDeltaLogRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		pkType schemapb.DataType
		pks    column.Column
	}{
		{"int64", schemapb.DataType_Int64, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{-1, 0, 1 << 62}}},
		{"varchar", schemapb.DataType_VarChar, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"", "a,b", `quo"te <&> 日本`}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tss := []uint64{1, 1 << 63, 3}
			data, err := EncodeDeltaLog(Descriptor{CollectionID: 7}, tc.pkType, tc.pks, tss)
			require.NoError(t, err)
			pks, gotTS, err := DecodeDeltaLog(data)
			require.NoError(t, err)
			require.Equal(t, tc.pks, pks)
			require.Equal(t, tss, gotTS)
		})
	}
}

func TestEncodeDeltaLogErrors(t *testing.T) {
	cases := []struct {
		name   string
		pkType schemapb.DataType
		pks    column.Column
		tss    []uint64
		want   error
	}{
		{"empty", schemapb.DataType_Int64, &column.Ints{T: schemapb.DataType_Int64}, nil, ErrEmpty},
		{"length mismatch", schemapb.DataType_Int64, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{1, 2}, ErrTypeMismatch},
		{"wrong column", schemapb.DataType_VarChar, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}}, []uint64{1}, ErrTypeMismatch},
		{"bad pk type", schemapb.DataType_Float, &column.Floats{T: schemapb.DataType_Float, Data: []float64{1}}, []uint64{1}, ErrUnsupportedType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeDeltaLog(Descriptor{}, tc.pkType, tc.pks, tc.tss)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// handDeltaLog frames a delta payload built here, to exercise the other formats.
func handDeltaLog(t *testing.T, payloadType schemapb.DataType, extras string, schema *arrow.Schema, cols []arrow.Array, props *parquet.WriterProperties) []byte {
	t.Helper()
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	p, err := writeStreamParquet(schema, [][]arrow.Array{cols}, props)
	require.NoError(t, err)
	return writeFrame(&frame{
		desc:      Descriptor{CollectionID: 1, PartitionID: 2, SegmentID: 3, FieldID: -1, PayloadType: payloadType},
		extras:    []byte(extras),
		eventType: DeleteEventType, eventStart: 1, eventEnd: 1, payload: p,
	})
}

func stringArray(vals ...string) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

func int64Array(vals ...int64) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

func TestDecodeDeltaLogFormats(t *testing.T) {
	plain := parquet.NewWriterProperties()
	cases := []struct {
		name    string
		data    func(t *testing.T) []byte
		wantPKs column.Column
		wantTS  []uint64
	}{
		{"classic json val required", func(t *testing.T) []byte {
			return handDeltaLog(t, schemapb.DataType_String, `{"original_size":"64"}`,
				arrowSchema("val", arrow.BinaryTypes.String, false),
				[]arrow.Array{stringArray(`{"pk":"k1","ts":5,"pkType":21}`, `{"pk":"k2","ts":6,"pkType":21}`)}, classicProps(false))
		}, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"k1", "k2"}}, []uint64{5, 6}},
		{"legacy pk,ts", func(t *testing.T) []byte {
			return handDeltaLog(t, schemapb.DataType_String, `{"original_size":"10"}`,
				arrowSchema("val", arrow.BinaryTypes.String, false),
				[]arrow.Array{stringArray("30400,200", "-5,201")}, classicProps(false))
		}, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{30400, -5}}, []uint64{200, 201}},
		{"multi field int64", func(t *testing.T) []byte {
			return handDeltaLog(t, schemapb.DataType_Int64, `{"original_size":"34","version":"MULTI_FIELD"}`,
				arrow.NewSchema([]arrow.Field{{Name: "pk", Type: arrow.PrimitiveTypes.Int64}, {Name: "ts", Type: arrow.PrimitiveTypes.Int64}}, nil),
				[]arrow.Array{int64Array(30400, 30401), int64Array(200, 201)}, plain)
		}, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{30400, 30401}}, []uint64{200, 201}},
		{"multi field varchar", func(t *testing.T) []byte {
			return handDeltaLog(t, schemapb.DataType_Int64, `{"original_size":"34","version":"MULTI_FIELD"}`,
				arrow.NewSchema([]arrow.Field{{Name: "pk", Type: arrow.BinaryTypes.String}, {Name: "ts", Type: arrow.PrimitiveTypes.Int64}}, nil),
				[]arrow.Array{stringArray("a", "b"), int64Array(9, 10)}, plain)
		}, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"a", "b"}}, []uint64{9, 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pks, tss, err := DecodeDeltaLog(tc.data(t))
			require.NoError(t, err)
			require.Equal(t, tc.wantPKs, pks)
			require.Equal(t, tc.wantTS, tss)
		})
	}
}

func TestParseDeltaRecordErrors(t *testing.T) {
	for _, s := range []string{`{"pk":1,"ts":2}`, `{"pk":1,"ts":-2,"pkType":5}`, `{"pk":"x","ts":2,"pkType":5}`, `12`, `a,1`, `1,b`, `{"pk":1,"ts":2,"pkType":9}`} {
		t.Run(s, func(t *testing.T) {
			_, _, err := parseDeltaRecord(s)
			require.ErrorIs(t, err, ErrBadDeltaRecord)
		})
	}
}
