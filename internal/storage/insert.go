package storage

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
)

// classicColumnName is the Parquet column name of classic-writer payloads.
const classicColumnName = "val"

// EncodeInsertLog writes one insert binlog for field, holding col, the way
// the Milvus flush path (InsertCodec, the classic writer) writes it.
//
// The descriptor's FieldID and PayloadType are taken from field; d supplies
// the collection, partition and segment IDs and the min/max row timestamps
// (both must be non-zero). Entries of d.Extras are written alongside the
// mandatory original_size and nullable keys, which the encoder computes.
func EncodeInsertLog(d Descriptor, field *schemapb.FieldSchema, col column.Column) ([]byte, error) {
	if col == nil || col.Len() == 0 {
		return nil, fmt.Errorf("field %d: %w", field.GetFieldID(), ErrEmpty)
	}
	t := field.GetDataType()
	if !typeFits(t, col.Type()) {
		return nil, fmt.Errorf("%w: field %d is %s, column is %s", ErrTypeMismatch, field.GetFieldID(), t, col.Type())
	}
	if d.StartTimestamp == 0 || d.EndTimestamp == 0 || d.StartTimestamp > d.EndTimestamp {
		return nil, fmt.Errorf("%w: [%d, %d]", ErrInvalidTimestamp, d.StartTimestamp, d.EndTimestamp)
	}
	nullable := field.GetNullable()
	if err := checkDim(field, col); err != nil {
		return nil, err
	}
	dt, err := arrowType(t, col)
	if err != nil {
		return nil, err
	}
	arr, err := buildArrow(memory.DefaultAllocator, t, dt, col, nullable)
	if err != nil {
		return nil, fmt.Errorf("field %d: %w", field.GetFieldID(), err)
	}
	defer arr.Release()
	extras := make(map[string]any, len(d.Extras)+2)
	for k, v := range d.Extras {
		extras[k] = v
	}
	extras[ExtraOriginalSize] = strconv.Itoa(MemorySize(col, nullable))
	extras[ExtraNullable] = nullable
	ej, err := marshalExtras(extras)
	if err != nil {
		return nil, err
	}
	d.FieldID = field.GetFieldID()
	d.PayloadType = t
	field0 := arrow.Field{Name: classicColumnName, Type: dt, Nullable: nullable}
	props := classicProps(!field.GetIsPrimaryKey())
	return encodeFrame(&frame{
		desc:       d,
		extras:     ej,
		eventType:  InsertEventType,
		eventStart: d.StartTimestamp,
		eventEnd:   d.EndTimestamp,
		classic:    true,
	}, col.MemorySize()+col.MemorySize()/8+4096, func(buf *bytes.Buffer) error {
		return writeClassicParquet(buf, field0, arr, props)
	})
}

// typeFits reports whether a column of type ct can be stored as field type ft.
func typeFits(ft, ct schemapb.DataType) bool {
	if ft == ct {
		return true
	}
	switch ft {
	case schemapb.DataType_String, schemapb.DataType_VarChar, schemapb.DataType_Text:
		return ct == schemapb.DataType_String || ct == schemapb.DataType_VarChar || ct == schemapb.DataType_Text
	case schemapb.DataType_Timestamptz:
		return ct == schemapb.DataType_Int64
	}
	return false
}

// checkDim verifies that a vector column matches the field's dim, when the field states one.
func checkDim(field *schemapb.FieldSchema, col column.Column) error {
	t := field.GetDataType()
	if !column.IsVector(t) || t == schemapb.DataType_SparseFloatVector {
		return nil
	}
	want, err := column.Dim(field)
	if err != nil {
		return nil //nolint:nilerr // no dim parameter: trust the column
	}
	got := 0
	width := 0
	switch c := col.(type) {
	case *column.FloatVectors:
		got, width = c.Dim, c.Dim*4
	case *column.ByteVectors:
		got, width = c.Dim, c.Width
	}
	if got != want || width != column.VectorWidth(t, want) || width == 0 {
		return fmt.Errorf("%w: field %d has dim %d, column has dim %d (width %d)", ErrTypeMismatch, field.GetFieldID(), want, got, width)
	}
	return nil
}

// MemorySize is the original_size Milvus records for an insert binlog: the
// in-memory size of its FieldData (Milvus 2.5+ GetMemorySize).
//
//   - fixed-width scalars: rows × width (Bool and Int8 1, Int16 2, Int32 and Float 4, Int64 and Double 8)
//   - VarChar/String/Text and JSON: Σ (len + 16)
//   - Array: Σ element bytes (Bool/Int8 1, Int16 2, Int32/Float 4, Int64/Double 8, strings len+16)
//   - dense vectors: data bytes + 4; sparse: protobuf size of the SparseFloatArray
//   - scalars add 1 (the Nullable flag) plus, when nullable, one byte per row (ValidData).
func MemorySize(col column.Column, nullable bool) int {
	scalar := func(n int) int {
		n++ // binary.Size(Nullable)
		if nullable {
			n += col.Len()
		}
		return n
	}
	switch c := col.(type) {
	case *column.Bools:
		return scalar(len(c.Data))
	case *column.Ints:
		return scalar(len(c.Data) * intWidth(c.T))
	case *column.Floats:
		if c.T == schemapb.DataType_Float {
			return scalar(len(c.Data) * 4)
		}
		return scalar(len(c.Data) * 8)
	case *column.Strings:
		return scalar(stringsSize(c.Data))
	case *column.JSONs:
		n := 0
		for _, b := range c.Data {
			n += len(b) + 16
		}
		return scalar(n)
	case *column.Geometries:
		n := 0
		for _, b := range c.Data {
			n += len(b) + 16
		}
		return scalar(n)
	case *column.Arrays:
		n := 0
		for _, a := range c.Data {
			n += arrayElemSize(a, c.Elem)
		}
		return scalar(n)
	case *column.FloatVectors:
		return len(c.Data)*4 + 4
	case *column.ByteVectors:
		return len(c.Data) + 4
	case *column.SparseVectors:
		return proto.Size(&schemapb.SparseFloatArray{Contents: c.Data, Dim: c.Dim})
	}
	return col.MemorySize()
}

func intWidth(t schemapb.DataType) int {
	switch t {
	case schemapb.DataType_Int8:
		return 1
	case schemapb.DataType_Int16:
		return 2
	case schemapb.DataType_Int32:
		return 4
	}
	return 8
}

func stringsSize(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s) + 16
	}
	return n
}

func arrayElemSize(a *schemapb.ScalarField, elem schemapb.DataType) int {
	switch elem {
	case schemapb.DataType_Bool:
		return len(a.GetBoolData().GetData())
	case schemapb.DataType_Int8:
		return len(a.GetIntData().GetData())
	case schemapb.DataType_Int16:
		return len(a.GetIntData().GetData()) * 2
	case schemapb.DataType_Int32:
		return len(a.GetIntData().GetData()) * 4
	case schemapb.DataType_Int64:
		return len(a.GetLongData().GetData()) * 8
	case schemapb.DataType_Float:
		return len(a.GetFloatData().GetData()) * 4
	case schemapb.DataType_Double:
		return len(a.GetDoubleData().GetData()) * 8
	case schemapb.DataType_String, schemapb.DataType_VarChar:
		return stringsSize(a.GetStringData().GetData())
	}
	return 0
}

// Binlog is a decoded binlog file: its descriptor, its events and its rows.
type Binlog struct {
	// Descriptor is the descriptor event (extras parsed, numbers as json.Number).
	Descriptor Descriptor
	// DescriptorHeader is the descriptor event's header.
	DescriptorHeader EventHeader
	// PostHeaderLengths is the post-header length table (fixed-part size per event type).
	PostHeaderLengths []uint8
	// Events are the data events in file order (payloads are slices of the input).
	Events []Event
	// ColumnNames are the Parquet column names of the first event's payload.
	ColumnNames []string
	// Columns holds every payload column, all events concatenated; Columns[0]
	// is the field's values (the pk column for a multi-field delta log).
	Columns []column.Column
	// Nullable reports whether the field is nullable (extras "nullable").
	Nullable bool
}

// EventType is the type code of the data events (Insert, Delete, ...), or
// DescriptorEventType when the file holds no data event.
func (b *Binlog) EventType() EventType {
	if len(b.Events) == 0 {
		return DescriptorEventType
	}
	return b.Events[0].Type
}

// Column returns the first payload column (the field's values).
func (b *Binlog) Column() column.Column {
	if len(b.Columns) == 0 {
		return nil
	}
	return b.Columns[0]
}

// DecodeOption adjusts DecodeBinlog.
type DecodeOption func(*decodeHint)

// WithElementType sets the element type of an Array field (otherwise it is
// inferred from the first non-null row).
func WithElementType(t schemapb.DataType) DecodeOption {
	return func(h *decodeHint) { h.elemType = t }
}

// DecodeBinlog parses a binlog written by either writer family (classic or
// stream): the descriptor, every data event, and the payload rows. The value
// type comes from the descriptor's PayloadType; column 0 is used whatever its
// name; vector dims come from the fixed-size width; nullability from extras
// "nullable" or the presence of nulls. Events are concatenated.
func DecodeBinlog(data []byte, opts ...DecodeOption) (*Binlog, error) {
	pf, err := parseFrame(data)
	if err != nil {
		return nil, err
	}
	b := &Binlog{
		Descriptor:        pf.desc,
		DescriptorHeader:  pf.descHeader,
		PostHeaderLengths: pf.postHeader,
		Events:            pf.events,
		Nullable:          extraBool(pf.desc.Extras, ExtraNullable),
	}
	h := decodeHint{payloadType: pf.desc.PayloadType, nullable: b.Nullable}
	for _, o := range opts {
		o(&h)
	}
	for ei := range b.Events {
		ev := &b.Events[ei]
		if err := b.decodeEvent(ev, h, ei == 0); err != nil {
			return nil, fmt.Errorf("event at offset %d: %w", ev.Offset, err)
		}
	}
	return b, nil
}

func (b *Binlog) decodeEvent(ev *Event, h decodeHint, first bool) error {
	tbl, err := readParquet(ev.Payload)
	if err != nil {
		return err
	}
	defer tbl.Release()
	ev.Rows = int(tbl.NumRows())
	ncol := int(tbl.NumCols())
	if ncol == 0 {
		return fmt.Errorf("%w: payload has no columns", ErrCorrupt)
	}
	if first {
		b.Columns = make([]column.Column, ncol)
		for i := 0; i < ncol; i++ {
			f := tbl.Schema().Field(i)
			b.ColumnNames = append(b.ColumnNames, f.Name)
			hh := h
			if i > 0 {
				hh = decodeHint{payloadType: schemapb.DataType_None}
			}
			c, err := newColumn(hh, f.Type)
			if err != nil {
				return err
			}
			b.Columns[i] = c
		}
	} else if ncol != len(b.Columns) {
		return fmt.Errorf("%w: event has %d columns, first event had %d", ErrCorrupt, ncol, len(b.Columns))
	}
	for i := 0; i < ncol; i++ {
		hh := h
		if i > 0 {
			hh = decodeHint{payloadType: schemapb.DataType_None}
		}
		for _, chunk := range tbl.Column(i).Data().Chunks() {
			if err := appendArrow(b.Columns[i], chunk, hh); err != nil {
				return err
			}
		}
	}
	return nil
}
