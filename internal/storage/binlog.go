package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// MagicNumber opens every binlog file (bytes BC FA FF 00 on disk).
const MagicNumber int32 = 0x00FFFABC

// Sizes of the fixed binlog structures, in bytes.
const (
	// EventHeaderSize is the size of the header that starts every event.
	EventHeaderSize = 17
	// DescriptorFixedSize is the size of the descriptor event's fixed part.
	DescriptorFixedSize = 52
	// DataFixedSize is the size of every data event's fixed part (start and end timestamp).
	DataFixedSize = 16
	// PostHeaderLengthsSize is the number of post-header length bytes (event types 0..7).
	PostHeaderLengthsSize = 8
)

// Extras keys written into the descriptor event.
const (
	// ExtraOriginalSize is the uncompressed size of the payload, a decimal string.
	ExtraOriginalSize = "original_size"
	// ExtraNullable says whether the field is nullable (insert binlogs).
	ExtraNullable = "nullable"
	// ExtraVersion marks the multi-field delta log format.
	ExtraVersion = "version"
	// ExtraEDEK is present when every byte after the descriptor event is encrypted.
	ExtraEDEK = "edek"
	// MultiFieldVersion is the ExtraVersion value of a parquet (pk, ts) delta log.
	MultiFieldVersion = "MULTI_FIELD"
)

// EventType is the type code in an event header.
type EventType int8

// Event type codes.
const (
	// DescriptorEventType is the first event of every binlog.
	DescriptorEventType EventType = iota
	// InsertEventType carries insert data (one field).
	InsertEventType
	// DeleteEventType carries delete records (delta logs).
	DeleteEventType
	// CreateCollectionEventType is a legacy DDL event.
	CreateCollectionEventType
	// DropCollectionEventType is a legacy DDL event.
	DropCollectionEventType
	// CreatePartitionEventType is a legacy DDL event.
	CreatePartitionEventType
	// DropPartitionEventType is a legacy DDL event.
	DropPartitionEventType
	// IndexFileEventType carries an index file slice.
	IndexFileEventType
	// EventTypeEnd is the sentinel after the last valid type code.
	EventTypeEnd
)

// String returns the Milvus name of the event type.
func (t EventType) String() string {
	switch t {
	case DescriptorEventType:
		return "Descriptor"
	case InsertEventType:
		return "Insert"
	case DeleteEventType:
		return "Delete"
	case CreateCollectionEventType:
		return "CreateCollection"
	case DropCollectionEventType:
		return "DropCollection"
	case CreatePartitionEventType:
		return "CreatePartition"
	case DropPartitionEventType:
		return "DropPartition"
	case IndexFileEventType:
		return "IndexFile"
	}
	return fmt.Sprintf("EventType(%d)", int8(t))
}

// postHeaderLengths is the post-header table every writer emits: the fixed-part size per event type.
func postHeaderLengths() [PostHeaderLengthsSize]uint8 {
	return [PostHeaderLengthsSize]uint8{
		DescriptorFixedSize, DataFixedSize, DataFixedSize, DataFixedSize,
		DataFixedSize, DataFixedSize, DataFixedSize, DataFixedSize,
	}
}

// Sentinel errors.
var (
	// ErrCorrupt reports a binlog whose framing cannot be parsed.
	ErrCorrupt = errors.New("storage: corrupt binlog")
	// ErrEmpty reports an attempt to write an event without rows.
	ErrEmpty = errors.New("storage: empty buffer")
	// ErrEncrypted reports a binlog whose events are encrypted (extras "edek").
	ErrEncrypted = errors.New("storage: binlog is encrypted")
	// ErrUnsupportedType reports a data type the payload codec cannot handle.
	ErrUnsupportedType = errors.New("storage: unsupported data type")
	// ErrTypeMismatch reports a column whose type does not fit the field or payload.
	ErrTypeMismatch = errors.New("storage: type mismatch")
	// ErrInvalidTimestamp reports a zero timestamp range on a classic binlog.
	ErrInvalidTimestamp = errors.New("storage: invalid timestamp range")
)

// Descriptor is the descriptor event of a binlog: who the file belongs to and what it holds.
type Descriptor struct {
	// CollectionID, PartitionID, SegmentID and FieldID identify the data (−1 when not applicable).
	CollectionID, PartitionID, SegmentID, FieldID int64
	// StartTimestamp and EndTimestamp are the min/max row timestamps (0/0 for stream writers).
	StartTimestamp, EndTimestamp uint64
	// PayloadType is the Milvus data type of the payload's first column.
	PayloadType schemapb.DataType
	// Extras is the descriptor's JSON extras map (original_size, nullable, version, ...).
	Extras map[string]any
	// HeaderTimestamp is the TSO stamped in every event header (informational);
	// zero means "now" when encoding.
	HeaderTimestamp uint64
}

// EventHeader is the 17-byte header of an event.
type EventHeader struct {
	// Timestamp is the TSO at write time (informational).
	Timestamp uint64
	// Type is the event type code.
	Type EventType
	// EventLength is the event's size including this header.
	EventLength int32
	// NextPosition is the absolute offset of the next event, or −1 (stream writers).
	NextPosition int32
}

// Event is one data event of a binlog.
type Event struct {
	EventHeader
	// Offset is the absolute offset of the event header in the file.
	Offset int
	// StartTimestamp and EndTimestamp are the event's fixed part.
	StartTimestamp, EndTimestamp uint64
	// Payload is the event payload (a Parquet file), a slice of the input.
	Payload []byte
	// Rows is the number of rows in the payload (set when decoded).
	Rows int
}

// composeTS builds a hybrid timestamp from a physical time, logical 0.
func composeTS(t time.Time) uint64 { return uint64(t.UnixMilli()) << 18 }

// marshalExtras encodes extras the way Milvus does: sorted keys, compact, HTML-escaped.
func marshalExtras(extras map[string]any) ([]byte, error) {
	if extras == nil {
		extras = map[string]any{}
	}
	b, err := json.Marshal(extras)
	if err != nil {
		return nil, fmt.Errorf("storage: encode extras: %w", err)
	}
	return b, nil
}

// frame describes one binlog file to be written.
type frame struct {
	desc       Descriptor
	extras     []byte
	eventType  EventType
	eventStart uint64
	eventEnd   uint64
	classic    bool // absolute NextPosition on data events (else −1)
	payload    []byte
}

func putHeader(b []byte, h EventHeader) {
	binary.LittleEndian.PutUint64(b[0:], h.Timestamp)
	b[8] = byte(h.Type)
	binary.LittleEndian.PutUint32(b[9:], uint32(h.EventLength))
	binary.LittleEndian.PutUint32(b[13:], uint32(h.NextPosition))
}

// writeFrame lays out magic, descriptor event and one data event holding f.payload.
func writeFrame(f *frame) []byte {
	out, _ := encodeFrame(f, len(f.payload), func(b *bytes.Buffer) error {
		b.Write(f.payload)
		return nil
	})
	return out
}

// encodeFrame lays out magic, descriptor event and one data event whose
// payload writePayload appends to the buffer (sizeHint bytes expected), so
// the payload is written in place rather than copied.
func encodeFrame(f *frame, sizeHint int, writePayload func(*bytes.Buffer) error) ([]byte, error) {
	ts := f.desc.HeaderTimestamp
	if ts == 0 {
		ts = composeTS(time.Now())
	}
	n := len(f.extras)
	descLen := EventHeaderSize + DescriptorFixedSize + PostHeaderLengthsSize + 4 + n
	dataOff := 4 + descLen
	hdrLen := dataOff + EventHeaderSize + DataFixedSize
	buf := bytes.NewBuffer(make([]byte, hdrLen, hdrLen+sizeHint))
	if err := writePayload(buf); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	dataLen := len(out) - dataOff

	binary.LittleEndian.PutUint32(out[0:], uint32(MagicNumber))
	putHeader(out[4:], EventHeader{Timestamp: ts, Type: DescriptorEventType, EventLength: int32(descLen), NextPosition: int32(dataOff)})
	p := out[4+EventHeaderSize:]
	binary.LittleEndian.PutUint64(p[0:], uint64(f.desc.CollectionID))
	binary.LittleEndian.PutUint64(p[8:], uint64(f.desc.PartitionID))
	binary.LittleEndian.PutUint64(p[16:], uint64(f.desc.SegmentID))
	binary.LittleEndian.PutUint64(p[24:], uint64(f.desc.FieldID))
	binary.LittleEndian.PutUint64(p[32:], f.desc.StartTimestamp)
	binary.LittleEndian.PutUint64(p[40:], f.desc.EndTimestamp)
	binary.LittleEndian.PutUint32(p[48:], uint32(int32(f.desc.PayloadType)))
	ph := postHeaderLengths()
	copy(p[DescriptorFixedSize:], ph[:])
	binary.LittleEndian.PutUint32(p[DescriptorFixedSize+PostHeaderLengthsSize:], uint32(n))
	copy(p[DescriptorFixedSize+PostHeaderLengthsSize+4:], f.extras)

	next := int32(-1)
	if f.classic {
		next = int32(dataOff + dataLen)
	}
	putHeader(out[dataOff:], EventHeader{Timestamp: ts, Type: f.eventType, EventLength: int32(dataLen), NextPosition: next})
	binary.LittleEndian.PutUint64(out[dataOff+EventHeaderSize:], f.eventStart)
	binary.LittleEndian.PutUint64(out[dataOff+EventHeaderSize+8:], f.eventEnd)
	return out, nil
}

// parsedFrame is a binlog split into its descriptor and raw data events.
type parsedFrame struct {
	desc       Descriptor
	descHeader EventHeader
	postHeader []uint8
	extrasRaw  []byte
	events     []Event
}

func readHeader(b []byte) EventHeader {
	return EventHeader{
		Timestamp:    binary.LittleEndian.Uint64(b[0:]),
		Type:         EventType(int8(b[8])),
		EventLength:  int32(binary.LittleEndian.Uint32(b[9:])),
		NextPosition: int32(binary.LittleEndian.Uint32(b[13:])),
	}
}

// parseFrame splits data into descriptor and events without decoding payloads.
func parseFrame(data []byte) (*parsedFrame, error) {
	const minLen = 4 + EventHeaderSize + DescriptorFixedSize
	if len(data) < minLen {
		return nil, fmt.Errorf("%w: %d bytes is shorter than a descriptor", ErrCorrupt, len(data))
	}
	if m := int32(binary.LittleEndian.Uint32(data)); m != MagicNumber {
		return nil, fmt.Errorf("%w: bad magic number %#x", ErrCorrupt, uint32(m))
	}
	pf := &parsedFrame{descHeader: readHeader(data[4:])}
	if pf.descHeader.Type != DescriptorEventType {
		return nil, fmt.Errorf("%w: first event has type %s, want Descriptor", ErrCorrupt, pf.descHeader.Type)
	}
	descEnd := 4 + int(pf.descHeader.EventLength)
	if pf.descHeader.EventLength < EventHeaderSize+DescriptorFixedSize || descEnd > len(data) {
		return nil, fmt.Errorf("%w: descriptor length %d out of range", ErrCorrupt, pf.descHeader.EventLength)
	}
	p := data[4+EventHeaderSize : descEnd]
	d := &pf.desc
	d.HeaderTimestamp = pf.descHeader.Timestamp
	d.CollectionID = int64(binary.LittleEndian.Uint64(p[0:]))
	d.PartitionID = int64(binary.LittleEndian.Uint64(p[8:]))
	d.SegmentID = int64(binary.LittleEndian.Uint64(p[16:]))
	d.FieldID = int64(binary.LittleEndian.Uint64(p[24:]))
	d.StartTimestamp = binary.LittleEndian.Uint64(p[32:])
	d.EndTimestamp = binary.LittleEndian.Uint64(p[40:])
	d.PayloadType = schemapb.DataType(int32(binary.LittleEndian.Uint32(p[48:])))
	rest := p[DescriptorFixedSize:]
	// The post-header table has one byte per event type; its length is the
	// descriptor's own entry (≥ 1), defaulting to the 8 types Milvus writes.
	nPost := PostHeaderLengthsSize
	if len(rest) < nPost+4 {
		return nil, fmt.Errorf("%w: descriptor too short for post-header lengths and extras", ErrCorrupt)
	}
	pf.postHeader = append([]uint8(nil), rest[:nPost]...)
	extraLen := int(int32(binary.LittleEndian.Uint32(rest[nPost:])))
	if extraLen < 0 || nPost+4+extraLen > len(rest) {
		return nil, fmt.Errorf("%w: extras length %d out of range", ErrCorrupt, extraLen)
	}
	pf.extrasRaw = rest[nPost+4 : nPost+4+extraLen]
	if extraLen > 0 {
		dec := json.NewDecoder(bytes.NewReader(pf.extrasRaw))
		dec.UseNumber()
		if err := dec.Decode(&d.Extras); err != nil {
			return nil, fmt.Errorf("%w: extras: %w", ErrCorrupt, err)
		}
	}
	if _, ok := d.Extras[ExtraEDEK]; ok {
		return nil, ErrEncrypted
	}

	off := descEnd
	for off < len(data) {
		if len(data)-off < EventHeaderSize+DataFixedSize {
			return nil, fmt.Errorf("%w: truncated event header at offset %d", ErrCorrupt, off)
		}
		h := readHeader(data[off:])
		end := off + int(h.EventLength)
		if h.EventLength < EventHeaderSize+DataFixedSize || end > len(data) {
			return nil, fmt.Errorf("%w: event at offset %d has length %d", ErrCorrupt, off, h.EventLength)
		}
		if h.Type <= DescriptorEventType || h.Type >= EventTypeEnd {
			return nil, fmt.Errorf("%w: event at offset %d has type code %d", ErrCorrupt, off, int8(h.Type))
		}
		fp := data[off+EventHeaderSize:]
		pf.events = append(pf.events, Event{
			EventHeader:    h,
			Offset:         off,
			StartTimestamp: binary.LittleEndian.Uint64(fp[0:]),
			EndTimestamp:   binary.LittleEndian.Uint64(fp[8:]),
			Payload:        data[off+EventHeaderSize+DataFixedSize : end],
		})
		off = end
	}
	return pf, nil
}

// extraBool reads a boolean extra (absent ⇒ false).
func extraBool(extras map[string]any, key string) bool {
	v, ok := extras[key].(bool)
	return ok && v
}

// extraString reads a string extra (absent ⇒ "").
func extraString(extras map[string]any, key string) string {
	v, _ := extras[key].(string)
	return v
}
