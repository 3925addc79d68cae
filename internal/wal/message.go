package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MessageType says what a Message carries.
type MessageType uint8

// Message types. Their numeric values are durable: never renumber.
const (
	// TypeTimeTick promises that every later message on the pchannel has a larger timestamp.
	TypeTimeTick MessageType = 1
	// TypeInsert carries a msgpb.InsertRequest (columnar rows of one segment).
	TypeInsert MessageType = 2
	// TypeDelete carries a msgpb.DeleteRequest (primary keys).
	TypeDelete MessageType = 3
	// TypeCreateCollection announces a new collection on its vchannels.
	TypeCreateCollection MessageType = 4
	// TypeDropCollection ends a collection's vchannels.
	TypeDropCollection MessageType = 5
	// TypeCreatePartition announces a partition.
	TypeCreatePartition MessageType = 6
	// TypeDropPartition drops a partition's data.
	TypeDropPartition MessageType = 7
	// TypeFlush asks the data node to seal and sync the listed segments.
	TypeFlush MessageType = 8
	// TypeSchemaChange announces a collection's new schema (AddCollectionField):
	// the payload is the whole new schemapb.CollectionSchema (protobuf). Every
	// insert after it on the vchannel carries the new fields; rows before it
	// read an added field as null or its default.
	TypeSchemaChange MessageType = 9
)

// String implements fmt.Stringer.
func (t MessageType) String() string {
	switch t {
	case TypeTimeTick:
		return "TimeTick"
	case TypeInsert:
		return "Insert"
	case TypeDelete:
		return "Delete"
	case TypeCreateCollection:
		return "CreateCollection"
	case TypeDropCollection:
		return "DropCollection"
	case TypeCreatePartition:
		return "CreatePartition"
	case TypeDropPartition:
		return "DropPartition"
	case TypeFlush:
		return "Flush"
	case TypeSchemaChange:
		return "SchemaChange"
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}

// Message is one logical WAL message. Its timestamp is assigned by the
// Writer at append time, so timestamps never go backwards on a pchannel.
type Message struct {
	// Type says what Payload holds.
	Type MessageType
	// VChannel is the virtual channel the message belongs to; empty means
	// every vchannel on the pchannel (time ticks).
	VChannel string
	// TimeTick is the hybrid timestamp of the message.
	TimeTick uint64
	// Payload is the type-specific body (protobuf for data messages).
	Payload []byte
}

// messageVersion is the first byte of every encoded Message.
const messageVersion = 1

// ErrBadMessage reports a record that does not decode as a Message.
var ErrBadMessage = errors.New("wal: malformed message")

// Encode serializes m as:
//
//	version uint8 (=1) | type uint8 | timetick uint64 LE | vchannel length uint16 LE | vchannel | payload
func (m *Message) Encode() []byte {
	b := make([]byte, 0, 12+len(m.VChannel)+len(m.Payload))
	b = append(b, messageVersion, byte(m.Type))
	b = binary.LittleEndian.AppendUint64(b, m.TimeTick)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(m.VChannel)))
	b = append(b, m.VChannel...)
	return append(b, m.Payload...)
}

// DecodeMessage parses a record produced by Encode. The payload aliases b.
func DecodeMessage(b []byte) (Message, error) {
	if len(b) < 12 || b[0] != messageVersion {
		return Message{}, ErrBadMessage
	}
	m := Message{Type: MessageType(b[1]), TimeTick: binary.LittleEndian.Uint64(b[2:10])}
	n := int(binary.LittleEndian.Uint16(b[10:12]))
	if len(b) < 12+n {
		return Message{}, ErrBadMessage
	}
	m.VChannel = string(b[12 : 12+n])
	m.Payload = b[12+n:]
	return m, nil
}

// batchVersion is the first byte of a record holding several messages.
const batchVersion = 2

// EncodeRecord serializes the messages of one append to one pchannel as a
// single WAL record, so they become durable (or are lost to a crash)
// together: an upsert's delete never survives without its insert. One
// message is encoded as by Encode; several as
//
//	version uint8 (=2) | count uint32 LE | count × (length uint32 LE | Encode())
func EncodeRecord(msgs []Message) []byte {
	if len(msgs) == 1 {
		return msgs[0].Encode()
	}
	size := 5
	enc := make([][]byte, len(msgs))
	for i := range msgs {
		enc[i] = msgs[i].Encode()
		size += 4 + len(enc[i])
	}
	b := make([]byte, 0, size)
	b = append(b, batchVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(msgs)))
	for _, e := range enc {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

// DecodeRecord parses a record written by EncodeRecord (or Encode).
// Payloads alias b.
func DecodeRecord(b []byte) ([]Message, error) {
	if len(b) > 0 && b[0] == messageVersion {
		m, err := DecodeMessage(b)
		if err != nil {
			return nil, err
		}
		return []Message{m}, nil
	}
	if len(b) < 5 || b[0] != batchVersion {
		return nil, ErrBadMessage
	}
	n := int(binary.LittleEndian.Uint32(b[1:5]))
	rest := b[5:]
	if n <= 0 || n > len(rest)/4 {
		return nil, ErrBadMessage
	}
	out := make([]Message, 0, n)
	for i := 0; i < n; i++ {
		if len(rest) < 4 {
			return nil, ErrBadMessage
		}
		l := int(binary.LittleEndian.Uint32(rest))
		if len(rest) < 4+l {
			return nil, ErrBadMessage
		}
		m, err := DecodeMessage(rest[4 : 4+l])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		rest = rest[4+l:]
	}
	if len(rest) != 0 {
		return nil, ErrBadMessage
	}
	return out, nil
}
