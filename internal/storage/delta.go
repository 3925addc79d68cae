package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// deltaBatchRows is the batch size of the Milvus flush path's delta writer;
// original_size is summed per batch, so the batching is part of the format.
const deltaBatchRows = 1024

// deltaColumnName is the Parquet column name of a stream-writer JSON delta log
// (the writer's pseudo field has ID 0).
const deltaColumnName = "0"

// ErrBadDeltaRecord reports a delta log row that cannot be parsed.
var ErrBadDeltaRecord = errors.New("storage: bad delta record")

// EncodeDeltaLog writes a delta log in the default JSON format, as the Milvus
// 2.5+ flush path writes it (DeltalogStreamWriter): descriptor PayloadType
// String, FieldID −1, timestamps 0/0, extras {"original_size":...}; one Delete
// event with timestamps 1/1 and NextPosition −1, whose payload is a ZSTD
// Parquet file with one OPTIONAL UTF8 column "0" of rows
// {"pk":<pk>,"ts":<ts>,"pkType":<5|21>}.
//
// Only d's CollectionID, PartitionID, SegmentID and HeaderTimestamp are used.
// pks is an Int64 (*column.Ints) or VarChar (*column.Strings) column of
// pkType; tss holds one delete timestamp per key.
func EncodeDeltaLog(d Descriptor, pkType schemapb.DataType, pks column.Column, tss []uint64) ([]byte, error) {
	rows, err := deltaJSONRows(pkType, pks, tss)
	if err != nil {
		return nil, err
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: deltaColumnName, Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	var batches [][]arrow.Array
	defer func() {
		for _, b := range batches {
			b[0].Release()
		}
	}()
	originalSize := 0
	for start := 0; start < len(rows); start += deltaBatchRows {
		end := min(start+deltaBatchRows, len(rows))
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for _, r := range rows[start:end] {
			b.Append(r)
		}
		arr := b.NewArray()
		b.Release()
		originalSize += int(arr.Data().SizeInBytes())
		batches = append(batches, []arrow.Array{arr})
	}
	payload, err := writeStreamParquet(schema, batches, streamProps())
	if err != nil {
		return nil, err
	}
	ej, err := marshalExtras(map[string]any{ExtraOriginalSize: strconv.Itoa(originalSize)})
	if err != nil {
		return nil, err
	}
	desc := Descriptor{
		CollectionID:    d.CollectionID,
		PartitionID:     d.PartitionID,
		SegmentID:       d.SegmentID,
		FieldID:         -1,
		PayloadType:     schemapb.DataType_String,
		HeaderTimestamp: d.HeaderTimestamp,
	}
	return writeFrame(&frame{
		desc:       desc,
		extras:     ej,
		eventType:  DeleteEventType,
		eventStart: 1,
		eventEnd:   1,
		payload:    payload,
	}), nil
}

// deltaJSONRows renders one JSON record per delete.
func deltaJSONRows(pkType schemapb.DataType, pks column.Column, tss []uint64) ([]string, error) {
	if pks == nil || pks.Len() == 0 {
		return nil, fmt.Errorf("delta log: %w", ErrEmpty)
	}
	if pks.Len() != len(tss) {
		return nil, fmt.Errorf("%w: %d primary keys but %d timestamps", ErrTypeMismatch, pks.Len(), len(tss))
	}
	rows := make([]string, len(tss))
	switch pkType {
	case schemapb.DataType_Int64:
		c, ok := pks.(*column.Ints)
		if !ok {
			return nil, fmt.Errorf("%w: Int64 primary keys in a %T", ErrTypeMismatch, pks)
		}
		for i, pk := range c.Data {
			rows[i] = `{"pk":` + strconv.FormatInt(pk, 10) + `,"ts":` + strconv.FormatUint(tss[i], 10) + `,"pkType":5}`
		}
	case schemapb.DataType_VarChar:
		c, ok := pks.(*column.Strings)
		if !ok {
			return nil, fmt.Errorf("%w: VarChar primary keys in a %T", ErrTypeMismatch, pks)
		}
		for i, pk := range c.Data {
			q, err := json.Marshal(pk)
			if err != nil {
				return nil, fmt.Errorf("storage: encode primary key: %w", err)
			}
			rows[i] = `{"pk":` + string(q) + `,"ts":` + strconv.FormatUint(tss[i], 10) + `,"pkType":21}`
		}
	default:
		return nil, fmt.Errorf("%w: primary key type %s", ErrUnsupportedType, pkType)
	}
	return rows, nil
}

// DecodeDeltaLog reads a delta log in any Milvus format: JSON records (classic
// "val" REQUIRED or stream "0" OPTIONAL column), legacy "pk,ts" strings, or the
// MULTI_FIELD Parquet (pk, ts) layout (detected by extras "version"). It
// returns an Int64 (*column.Ints) or VarChar (*column.Strings) key column and
// the delete timestamps.
func DecodeDeltaLog(data []byte) (pks column.Column, tss []uint64, err error) {
	b, err := DecodeBinlog(data)
	if err != nil {
		return nil, nil, err
	}
	return deltaRecords(b)
}

func deltaRecords(b *Binlog) (column.Column, []uint64, error) {
	if extraString(b.Descriptor.Extras, ExtraVersion) == MultiFieldVersion {
		if len(b.Columns) < 2 {
			return nil, nil, fmt.Errorf("%w: multi-field delta log has %d columns", ErrCorrupt, len(b.Columns))
		}
		ts, ok := b.Columns[1].(*column.Ints)
		if !ok {
			return nil, nil, fmt.Errorf("%w: ts column is %s", ErrCorrupt, b.Columns[1].Type())
		}
		tss := make([]uint64, len(ts.Data))
		for i, v := range ts.Data {
			tss[i] = uint64(v)
		}
		switch pk := b.Columns[0].(type) {
		case *column.Ints:
			return &column.Ints{T: schemapb.DataType_Int64, Data: pk.Data}, tss, nil
		case *column.Strings:
			return &column.Strings{T: schemapb.DataType_VarChar, Data: pk.Data}, tss, nil
		}
		return nil, nil, fmt.Errorf("%w: pk column is %s", ErrCorrupt, b.Columns[0].Type())
	}
	if len(b.Columns) == 0 {
		return &column.Ints{T: schemapb.DataType_Int64}, nil, nil
	}
	strs, ok := b.Columns[0].(*column.Strings)
	if !ok {
		return nil, nil, fmt.Errorf("%w: delta column is %s, want strings", ErrCorrupt, b.Columns[0].Type())
	}
	var (
		ints   []int64
		varchs []string
		tss    = make([]uint64, 0, len(strs.Data))
		kind   schemapb.DataType
	)
	for i, s := range strs.Data {
		pk, ts, err := parseDeltaRecord(s)
		if err != nil {
			return nil, nil, fmt.Errorf("row %d: %w", i, err)
		}
		var k schemapb.DataType
		switch v := pk.(type) {
		case int64:
			k = schemapb.DataType_Int64
			ints = append(ints, v)
		case string:
			k = schemapb.DataType_VarChar
			varchs = append(varchs, v)
		}
		if kind != schemapb.DataType_None && k != kind {
			return nil, nil, fmt.Errorf("%w: row %d mixes primary key types", ErrBadDeltaRecord, i)
		}
		kind = k
		tss = append(tss, ts)
	}
	if kind == schemapb.DataType_VarChar {
		return &column.Strings{T: schemapb.DataType_VarChar, Data: varchs}, tss, nil
	}
	return &column.Ints{T: schemapb.DataType_Int64, Data: ints}, tss, nil
}

// parseDeltaRecord parses one delta row: a JSON object or legacy "pk,ts".
func parseDeltaRecord(s string) (any, uint64, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		var rec struct {
			PK     json.RawMessage `json:"pk"`
			TS     json.Number     `json:"ts"`
			PKType json.Number     `json:"pkType"`
		}
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&rec); err != nil {
			return nil, 0, fmt.Errorf("%w: %w", ErrBadDeltaRecord, err)
		}
		if rec.PK == nil || rec.TS == "" || rec.PKType == "" {
			return nil, 0, fmt.Errorf("%w: %q lacks pk, ts or pkType", ErrBadDeltaRecord, s)
		}
		ts, err := strconv.ParseUint(rec.TS.String(), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: ts: %w", ErrBadDeltaRecord, err)
		}
		pt, err := strconv.Atoi(rec.PKType.String())
		if err != nil {
			return nil, 0, fmt.Errorf("%w: pkType: %w", ErrBadDeltaRecord, err)
		}
		switch schemapb.DataType(pt) {
		case schemapb.DataType_Int64:
			pk, err := strconv.ParseInt(string(bytes.TrimSpace(rec.PK)), 10, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("%w: pk: %w", ErrBadDeltaRecord, err)
			}
			return pk, ts, nil
		case schemapb.DataType_VarChar:
			var pk string
			if err := json.Unmarshal(rec.PK, &pk); err != nil {
				return nil, 0, fmt.Errorf("%w: pk: %w", ErrBadDeltaRecord, err)
			}
			return pk, ts, nil
		}
		return nil, 0, fmt.Errorf("%w: pkType %d", ErrBadDeltaRecord, pt)
	}
	pkStr, tsStr, ok := strings.Cut(s, ",")
	if !ok {
		return nil, 0, fmt.Errorf("%w: %q", ErrBadDeltaRecord, s)
	}
	pk, err := strconv.ParseInt(pkStr, 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: pk: %w", ErrBadDeltaRecord, err)
	}
	ts, err := strconv.ParseUint(tsStr, 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: ts: %w", ErrBadDeltaRecord, err)
	}
	return pk, ts, nil
}
