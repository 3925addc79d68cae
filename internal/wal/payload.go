package wal

import (
	"encoding/binary"
	"errors"
)

// EncodeFlush encodes the payload of a Flush message: the IDs of the segments
// to seal and sync, as a count uint32 LE followed by that many int64 LE.
func EncodeFlush(segmentIDs []int64) []byte {
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+8*len(segmentIDs)), uint32(len(segmentIDs)))
	for _, id := range segmentIDs {
		b = binary.LittleEndian.AppendUint64(b, uint64(id))
	}
	return b
}

// DecodeFlush decodes a Flush message payload.
func DecodeFlush(b []byte) ([]int64, error) {
	if len(b) < 4 {
		return nil, errors.New("wal: short flush payload")
	}
	n := int(binary.LittleEndian.Uint32(b))
	if len(b) != 4+8*n {
		return nil, errors.New("wal: bad flush payload length")
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[4+8*i:]))
	}
	return out, nil
}
