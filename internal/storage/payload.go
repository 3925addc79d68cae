package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
)

// zstdLevel is the ZSTD level Milvus uses for insert payloads and JSON delta logs.
const zstdLevel = 3

// classicChunkSize is the chunk size the classic writer passes to pqarrow.WriteTable.
const classicChunkSize = 1 << 30

// arrowType returns the Arrow type Milvus uses for a column of type t.
func arrowType(t schemapb.DataType, col column.Column) (arrow.DataType, error) {
	switch t {
	case schemapb.DataType_Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	case schemapb.DataType_Int8:
		return arrow.PrimitiveTypes.Int8, nil
	case schemapb.DataType_Int16:
		return arrow.PrimitiveTypes.Int16, nil
	case schemapb.DataType_Int32:
		return arrow.PrimitiveTypes.Int32, nil
	case schemapb.DataType_Int64, schemapb.DataType_Timestamptz:
		return arrow.PrimitiveTypes.Int64, nil
	case schemapb.DataType_Float:
		return arrow.PrimitiveTypes.Float32, nil
	case schemapb.DataType_Double:
		return arrow.PrimitiveTypes.Float64, nil
	case schemapb.DataType_String, schemapb.DataType_VarChar, schemapb.DataType_Text:
		return arrow.BinaryTypes.String, nil
	case schemapb.DataType_Array, schemapb.DataType_JSON, schemapb.DataType_SparseFloatVector, schemapb.DataType_Geometry,
		schemapb.DataType_ArrayOfVector:
		return arrow.BinaryTypes.Binary, nil
	case schemapb.DataType_FloatVector:
		fv, ok := col.(*column.FloatVectors)
		if !ok {
			return nil, fmt.Errorf("%w: %T for FloatVector", ErrTypeMismatch, col)
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: fv.Dim * 4}, nil
	case schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector:
		bv, ok := col.(*column.ByteVectors)
		if !ok {
			return nil, fmt.Errorf("%w: %T for %s", ErrTypeMismatch, col, t)
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: bv.Width}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, t)
}

// validAt reports whether row i holds a value.
func validAt(valid []bool, i int) bool { return valid == nil || valid[i] }

// buildArrow converts col into an Arrow array of type dt. Null rows become
// Arrow nulls when nullable; a null in a non-nullable column is an error.
func buildArrow(mem memory.Allocator, t schemapb.DataType, dt arrow.DataType, col column.Column, nullable bool) (arrow.Array, error) {
	valid := col.Validity()
	if !nullable && valid != nil {
		for i, v := range valid {
			if !v {
				return nil, fmt.Errorf("%w: row %d is null but the field is not nullable", ErrTypeMismatch, i)
			}
		}
		valid = nil
	}
	n := col.Len()
	switch c := col.(type) {
	case *column.Bools:
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		b.AppendValues(c.Data, valid)
		return b.NewArray(), nil
	case *column.Ints:
		switch t {
		case schemapb.DataType_Int8:
			b := array.NewInt8Builder(mem)
			defer b.Release()
			b.Reserve(n)
			for i, v := range c.Data {
				if v < math.MinInt8 || v > math.MaxInt8 {
					return nil, fmt.Errorf("%w: row %d value %d overflows Int8", ErrTypeMismatch, i, v)
				}
				if validAt(valid, i) {
					b.UnsafeAppend(int8(v))
				} else {
					b.AppendNull()
				}
			}
			return b.NewArray(), nil
		case schemapb.DataType_Int16:
			b := array.NewInt16Builder(mem)
			defer b.Release()
			b.Reserve(n)
			for i, v := range c.Data {
				if v < math.MinInt16 || v > math.MaxInt16 {
					return nil, fmt.Errorf("%w: row %d value %d overflows Int16", ErrTypeMismatch, i, v)
				}
				if validAt(valid, i) {
					b.UnsafeAppend(int16(v))
				} else {
					b.AppendNull()
				}
			}
			return b.NewArray(), nil
		case schemapb.DataType_Int32:
			b := array.NewInt32Builder(mem)
			defer b.Release()
			b.Reserve(n)
			for i, v := range c.Data {
				if v < math.MinInt32 || v > math.MaxInt32 {
					return nil, fmt.Errorf("%w: row %d value %d overflows Int32", ErrTypeMismatch, i, v)
				}
				if validAt(valid, i) {
					b.UnsafeAppend(int32(v))
				} else {
					b.AppendNull()
				}
			}
			return b.NewArray(), nil
		default:
			b := array.NewInt64Builder(mem)
			defer b.Release()
			b.AppendValues(c.Data, valid)
			return b.NewArray(), nil
		}
	case *column.Floats:
		if t == schemapb.DataType_Float {
			b := array.NewFloat32Builder(mem)
			defer b.Release()
			b.Reserve(n)
			for i, v := range c.Data {
				if validAt(valid, i) {
					b.UnsafeAppend(float32(v))
				} else {
					b.AppendNull()
				}
			}
			return b.NewArray(), nil
		}
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(c.Data, valid)
		return b.NewArray(), nil
	case *column.Strings:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(c.Data, valid)
		return b.NewArray(), nil
	case *column.JSONs:
		return buildBinary(mem, c.Data, valid), nil
	case *column.Geometries:
		return buildBinary(mem, c.Data, valid), nil
	case *column.SparseVectors:
		return buildBinary(mem, c.Data, valid), nil
	case *column.Arrays:
		rows := make([][]byte, n)
		for i, a := range c.Data {
			if !validAt(valid, i) {
				continue
			}
			if a == nil {
				a = &schemapb.ScalarField{}
			}
			b, err := proto.Marshal(a)
			if err != nil {
				return nil, fmt.Errorf("storage: marshal array row %d: %w", i, err)
			}
			rows[i] = b
		}
		return buildBinary(mem, rows, valid), nil
	case *column.VectorArrays:
		return buildVectorArrays(mem, c, valid)
	case *column.FloatVectors:
		return buildFixed(mem, dt.(*arrow.FixedSizeBinaryType), float32Bytes(c.Data), n, valid), nil
	case *column.ByteVectors:
		return buildFixed(mem, dt.(*arrow.FixedSizeBinaryType), c.Data, n, valid), nil
	}
	return nil, fmt.Errorf("%w: column %T", ErrUnsupportedType, col)
}

func buildBinary(mem memory.Allocator, rows [][]byte, valid []bool) arrow.Array {
	b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer b.Release()
	total := 0
	for _, r := range rows {
		total += len(r)
	}
	b.Reserve(len(rows))
	b.ReserveData(total)
	for i, r := range rows {
		if validAt(valid, i) {
			b.Append(r)
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray()
}

// float32Bytes returns the little-endian bytes of v: the memory of v itself
// on little-endian machines (no copy), a converted copy otherwise.
func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	if nativeLittleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
	}
	raw := make([]byte, len(v)*4)
	for i, f := range v {
		binary.LittleEndian.PutUint32(raw[i*4:], math.Float32bits(f))
	}
	return raw
}

func nativeLittleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}

// buildFixed wraps raw as a FixedSizeBinary array; without nulls the bytes
// are shared, not copied (the array must not outlive raw's owner's writes).
func buildFixed(mem memory.Allocator, dt *arrow.FixedSizeBinaryType, raw []byte, n int, valid []bool) arrow.Array {
	if valid == nil && len(raw) == n*dt.ByteWidth {
		data := array.NewData(dt, n, []*memory.Buffer{nil, memory.NewBufferBytes(raw)}, nil, 0, 0)
		defer data.Release()
		return array.NewFixedSizeBinaryData(data)
	}
	b := array.NewFixedSizeBinaryBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	w := dt.ByteWidth
	for i := 0; i < n; i++ {
		if validAt(valid, i) {
			b.Append(raw[i*w : (i+1)*w])
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray()
}

// classicProps are the writer properties of Milvus' classic payload writer.
func classicProps(dictionary bool) *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithDictionaryDefault(dictionary),
		parquet.WithStats(true),
	)
}

// streamProps are the writer properties of Milvus' stream record writers
// (one unbounded row group, ZSTD level 3, dictionary on).
func streamProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithMaxRowGroupLength(math.MaxInt64),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(zstdLevel),
	)
}

// writeClassicParquet writes one single-column Parquet file the way the classic
// payload writer does: a table written with pqarrow.WriteTable.
func writeClassicParquet(dst *bytes.Buffer, field arrow.Field, arr arrow.Array, props *parquet.WriterProperties) error {
	schema := arrow.NewSchema([]arrow.Field{field}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, dst, classicChunkSize, props, pqarrow.DefaultWriterProps()); err != nil {
		return fmt.Errorf("storage: write parquet: %w", err)
	}
	return nil
}

// writeStreamParquet writes batches through a buffered FileWriter, one row
// group, the way Milvus' stream record writers do.
func writeStreamParquet(schema *arrow.Schema, batches [][]arrow.Array, props *parquet.WriterProperties) ([]byte, error) {
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("storage: open parquet writer: %w", err)
	}
	for _, cols := range batches {
		rec := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
		err := fw.WriteBuffered(rec)
		rec.Release()
		if err != nil {
			_ = fw.Close()
			return nil, fmt.Errorf("storage: write parquet: %w", err)
		}
	}
	if err := fw.Close(); err != nil {
		return nil, fmt.Errorf("storage: close parquet writer: %w", err)
	}
	return buf.Bytes(), nil
}

// readParquet reads every column of a Parquet payload as Arrow chunked arrays.
// The caller releases the returned table.
func readParquet(payload []byte) (arrow.Table, error) {
	rdr, err := file.NewParquetReader(bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("%w: parquet payload: %w", ErrCorrupt, err)
	}
	defer func() { _ = rdr.Close() }()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%w: parquet payload: %w", ErrCorrupt, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%w: parquet payload: %w", ErrCorrupt, err)
	}
	return tbl, nil
}

// decodeHint carries what a reader needs beyond the payload's Arrow type.
type decodeHint struct {
	payloadType schemapb.DataType
	elemType    schemapb.DataType // Array element type; None ⇒ infer from data
	nullable    bool              // produce a validity mask even without nulls
}

// newColumn creates an empty column for the payload type and Arrow type.
func newColumn(h decodeHint, dt arrow.DataType) (column.Column, error) {
	t := h.payloadType
	switch dt.ID() {
	case arrow.BOOL:
		return &column.Bools{}, nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		if !isIntType(t) {
			t = map[arrow.Type]schemapb.DataType{
				arrow.INT8: schemapb.DataType_Int8, arrow.INT16: schemapb.DataType_Int16,
				arrow.INT32: schemapb.DataType_Int32, arrow.INT64: schemapb.DataType_Int64,
			}[dt.ID()]
		}
		return &column.Ints{T: t}, nil
	case arrow.FLOAT32:
		return &column.Floats{T: schemapb.DataType_Float}, nil
	case arrow.FLOAT64:
		return &column.Floats{T: schemapb.DataType_Double}, nil
	case arrow.STRING, arrow.LARGE_STRING:
		if t != schemapb.DataType_String && t != schemapb.DataType_VarChar && t != schemapb.DataType_Text {
			t = schemapb.DataType_VarChar
		}
		return &column.Strings{T: t}, nil
	case arrow.BINARY, arrow.LARGE_BINARY:
		switch t {
		case schemapb.DataType_JSON:
			return &column.JSONs{}, nil
		case schemapb.DataType_Geometry:
			return &column.Geometries{}, nil
		case schemapb.DataType_Array:
			return &column.Arrays{Elem: h.elemType}, nil
		case schemapb.DataType_SparseFloatVector:
			return &column.SparseVectors{}, nil
		case schemapb.DataType_ArrayOfVector:
			return &column.VectorArrays{}, nil
		}
	case arrow.FIXED_SIZE_BINARY:
		w := dt.(*arrow.FixedSizeBinaryType).ByteWidth
		switch t {
		case schemapb.DataType_FloatVector:
			return &column.FloatVectors{Dim: w / 4}, nil
		case schemapb.DataType_BinaryVector:
			return &column.ByteVectors{T: t, Dim: w * 8, Width: w}, nil
		case schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector:
			return &column.ByteVectors{T: t, Dim: w / 2, Width: w}, nil
		case schemapb.DataType_Int8Vector:
			return &column.ByteVectors{T: t, Dim: w, Width: w}, nil
		}
	}
	return nil, fmt.Errorf("%w: payload type %s stored as Arrow %s", ErrUnsupportedType, t, dt)
}

func isIntType(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_Timestamptz:
		return true
	}
	return false
}

// appendValidity extends dst's mask with arr's validity when the column is
// nullable or arr holds nulls.
func appendValidity(dst *column.Nulls, curLen int, arr arrow.Array, nullable bool) {
	if !nullable && arr.NullN() == 0 && dst.Valid == nil {
		return
	}
	if dst.Valid == nil {
		dst.Valid = make([]bool, curLen, curLen+arr.Len())
		for i := range dst.Valid {
			dst.Valid[i] = true
		}
	}
	for i := 0; i < arr.Len(); i++ {
		dst.Valid = append(dst.Valid, arr.IsValid(i))
	}
}

// appendArrow appends the rows of arr to dst (created by newColumn).
func appendArrow(dst column.Column, arr arrow.Array, h decodeHint) error {
	n := arr.Len()
	switch c := dst.(type) {
	case *column.Bools:
		a := arr.(*array.Boolean)
		appendValidity(&c.Nulls, len(c.Data), arr, h.nullable)
		for i := 0; i < n; i++ {
			c.Data = append(c.Data, a.Value(i))
		}
	case *column.Ints:
		appendValidity(&c.Nulls, len(c.Data), arr, h.nullable)
		switch a := arr.(type) {
		case *array.Int8:
			for _, v := range a.Int8Values() {
				c.Data = append(c.Data, int64(v))
			}
		case *array.Int16:
			for _, v := range a.Int16Values() {
				c.Data = append(c.Data, int64(v))
			}
		case *array.Int32:
			for _, v := range a.Int32Values() {
				c.Data = append(c.Data, int64(v))
			}
		case *array.Int64:
			c.Data = append(c.Data, a.Int64Values()...)
		default:
			return fmt.Errorf("%w: Arrow %s for %s", ErrTypeMismatch, arr.DataType(), c.T)
		}
	case *column.Floats:
		appendValidity(&c.Nulls, len(c.Data), arr, h.nullable)
		switch a := arr.(type) {
		case *array.Float32:
			for _, v := range a.Float32Values() {
				c.Data = append(c.Data, float64(v))
			}
		case *array.Float64:
			c.Data = append(c.Data, a.Float64Values()...)
		default:
			return fmt.Errorf("%w: Arrow %s for %s", ErrTypeMismatch, arr.DataType(), c.T)
		}
	case *column.Strings:
		a, ok := arr.(array.StringLike)
		if !ok {
			return fmt.Errorf("%w: Arrow %s for %s", ErrTypeMismatch, arr.DataType(), c.T)
		}
		appendValidity(&c.Nulls, len(c.Data), arr, h.nullable)
		for i := 0; i < n; i++ {
			if arr.IsNull(i) {
				c.Data = append(c.Data, "")
				continue
			}
			c.Data = append(c.Data, a.ValueStr(i))
		}
	case *column.JSONs:
		return appendBytesRows(&c.Nulls, &c.Data, arr, h.nullable)
	case *column.Geometries:
		return appendBytesRows(&c.Nulls, &c.Data, arr, h.nullable)
	case *column.SparseVectors:
		appendValidity(&c.Nulls, len(c.Data), arr, h.nullable)
		return appendBinaryRows(arr, func(b []byte, null bool) error {
			if null {
				c.Data = append(c.Data, nil)
				return nil
			}
			if len(b)%8 != 0 {
				return fmt.Errorf("%w: sparse row of %d bytes", ErrCorrupt, len(b))
			}
			if len(b) >= 8 {
				if d := int64(binary.LittleEndian.Uint32(b[len(b)-8:])) + 1; d > c.Dim {
					c.Dim = d
				}
			}
			c.Data = append(c.Data, b)
			return nil
		})
	case *column.VectorArrays:
		return appendVectorArrays(c, arr, h)
	case *column.Arrays:
		appendValidity(&c.Nulls, len(c.Data), arr, h.nullable)
		return appendBinaryRows(arr, func(b []byte, null bool) error {
			if null {
				c.Data = append(c.Data, nil)
				return nil
			}
			sf := &schemapb.ScalarField{}
			if err := proto.Unmarshal(b, sf); err != nil {
				return fmt.Errorf("%w: array row: %w", ErrCorrupt, err)
			}
			if c.Elem == schemapb.DataType_None {
				c.Elem = scalarElemType(sf)
			}
			c.Data = append(c.Data, sf)
			return nil
		})
	case *column.FloatVectors:
		a, ok := arr.(*array.FixedSizeBinary)
		if !ok {
			return fmt.Errorf("%w: Arrow %s for FloatVector", ErrTypeMismatch, arr.DataType())
		}
		appendValidity(&c.Nulls, c.Len(), arr, h.nullable)
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				c.Data = append(c.Data, make([]float32, c.Dim)...)
				continue
			}
			v := a.Value(i)
			for k := 0; k+4 <= len(v); k += 4 {
				c.Data = append(c.Data, math.Float32frombits(binary.LittleEndian.Uint32(v[k:])))
			}
		}
	case *column.ByteVectors:
		a, ok := arr.(*array.FixedSizeBinary)
		if !ok {
			return fmt.Errorf("%w: Arrow %s for %s", ErrTypeMismatch, arr.DataType(), c.T)
		}
		appendValidity(&c.Nulls, c.Len(), arr, h.nullable)
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				c.Data = append(c.Data, make([]byte, c.Width)...)
				continue
			}
			c.Data = append(c.Data, a.Value(i)...)
		}
	default:
		return fmt.Errorf("%w: column %T", ErrUnsupportedType, dst)
	}
	return nil
}

// appendBinaryRows calls fn with a copy of every row of a binary array.
func appendBinaryRows(arr arrow.Array, fn func(b []byte, null bool) error) error {
	a, ok := arr.(array.BinaryLike)
	if !ok {
		return fmt.Errorf("%w: Arrow %s is not binary", ErrTypeMismatch, arr.DataType())
	}
	type valuer interface{ Value(int) []byte }
	v, ok := a.(valuer)
	if !ok {
		return fmt.Errorf("%w: Arrow %s is not binary", ErrTypeMismatch, arr.DataType())
	}
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			if err := fn(nil, true); err != nil {
				return err
			}
			continue
		}
		if err := fn(bytes.Clone(v.Value(i)), false); err != nil {
			return err
		}
	}
	return nil
}

// scalarElemType guesses an Array element type from a ScalarField's oneof.
func scalarElemType(sf *schemapb.ScalarField) schemapb.DataType {
	switch sf.GetData().(type) {
	case *schemapb.ScalarField_BoolData:
		return schemapb.DataType_Bool
	case *schemapb.ScalarField_IntData:
		return schemapb.DataType_Int32
	case *schemapb.ScalarField_LongData:
		return schemapb.DataType_Int64
	case *schemapb.ScalarField_FloatData:
		return schemapb.DataType_Float
	case *schemapb.ScalarField_DoubleData:
		return schemapb.DataType_Double
	case *schemapb.ScalarField_StringData:
		return schemapb.DataType_VarChar
	}
	return schemapb.DataType_None
}

// appendBytesRows appends a binary Arrow column's rows to a column of byte
// strings (JSON, Geometry WKB): nil for a null row.
func appendBytesRows(n *column.Nulls, data *[][]byte, arr arrow.Array, nullable bool) error {
	appendValidity(n, len(*data), arr, nullable)
	return appendBinaryRows(arr, func(b []byte, null bool) error {
		if null {
			b = nil
		}
		*data = append(*data, b)
		return nil
	})
}
