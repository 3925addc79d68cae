package wal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
)

// ErrBadPosition reports a MsgPosition that does not name a WAL position.
var ErrBadPosition = errors.New("wal: malformed position")

// Position is the location of a message: its pchannel, its offset there and
// its timestamp.
type Position struct {
	// PChannel is the physical channel.
	PChannel string
	// Offset is the record's offset on PChannel.
	Offset int64
	// TimeTick is the message's timestamp.
	TimeTick uint64
}

// MsgPosition converts p to the checkpoint form used in Milvus metadata:
// channel_name = vchannel, msgID = offset as 8 bytes little-endian,
// timestamp = TimeTick.
func (p Position) MsgPosition(vchannel string) *msgpb.MsgPosition {
	id := make([]byte, 8)
	binary.LittleEndian.PutUint64(id, uint64(p.Offset))
	return &msgpb.MsgPosition{ChannelName: vchannel, MsgID: id, Timestamp: p.TimeTick}
}

// PositionFromMsg is the inverse of Position.MsgPosition; the pchannel is
// derived from the channel name with PChannelOf.
func PositionFromMsg(m *msgpb.MsgPosition) (Position, error) {
	if m == nil {
		return Position{}, fmt.Errorf("%w: nil", ErrBadPosition)
	}
	if len(m.GetMsgID()) != 8 {
		return Position{}, fmt.Errorf("%w: msgID has %d bytes, want 8", ErrBadPosition, len(m.GetMsgID()))
	}
	off := int64(binary.LittleEndian.Uint64(m.GetMsgID()))
	if off < 0 {
		return Position{}, fmt.Errorf("%w: negative offset", ErrBadPosition)
	}
	if m.GetChannelName() == "" {
		return Position{}, fmt.Errorf("%w: no channel name", ErrBadPosition)
	}
	return Position{PChannel: PChannelOf(m.GetChannelName()), Offset: off, TimeTick: m.GetTimestamp()}, nil
}

// Entry is one decoded message and where it was read.
type Entry struct {
	// Position locates the message.
	Position Position
	// Message is the decoded message; its Payload aliases the record.
	Message Message
	// More is set when more messages of the same record follow (at the same
	// offset): the offset is not fully consumed until the last of them.
	More bool
}

// BadRecordError reports a record that was read intact (its checksum is
// right) but does not decode as messages: a consumer skips it, reporting
// it, since reading it again cannot help.
type BadRecordError struct {
	PChannel string
	Offset   int64
	Err      error
}

func (e *BadRecordError) Error() string {
	return fmt.Sprintf("wal: %s offset %d: %v", e.PChannel, e.Offset, e.Err)
}

// Unwrap returns the decoding error (wrapping ErrBadMessage).
func (e *BadRecordError) Unwrap() error { return e.Err }

// Scanner reads decoded messages from one pchannel of a Log.
type Scanner struct {
	pchannel string
	r        Reader
	pending  []Message // rest of the current multi-message record
	offset   int64     // offset of the current record
}

// OpenScanner opens a Scanner on pchannel starting at offset from.
func OpenScanner(ctx context.Context, log Log, pchannel string, from int64) (*Scanner, error) {
	r, err := log.Read(ctx, pchannel, from)
	if err != nil {
		return nil, err
	}
	return &Scanner{pchannel: pchannel, r: r}, nil
}

// Next blocks until the next message is durable and returns it. A record
// that does not decode yields an error wrapping ErrBadMessage that names its
// offset; the following call continues after it.
//
// The messages of one multi-message record (see EncodeRecord) are returned
// one by one and share the record's offset.
func (s *Scanner) Next(ctx context.Context) (Entry, error) {
	if len(s.pending) == 0 {
		rec, err := s.r.Next(ctx)
		if err != nil {
			return Entry{}, err
		}
		msgs, err := DecodeRecord(rec.Data)
		if err != nil {
			return Entry{}, &BadRecordError{PChannel: s.pchannel, Offset: rec.Offset, Err: err}
		}
		s.pending, s.offset = msgs, rec.Offset
	}
	m := s.pending[0]
	s.pending = s.pending[1:]
	return Entry{
		Position: Position{PChannel: s.pchannel, Offset: s.offset, TimeTick: m.TimeTick}, Message: m,
		More: len(s.pending) > 0,
	}, nil
}

// Close releases the Scanner; it is idempotent.
func (s *Scanner) Close() error { return s.r.Close() }
