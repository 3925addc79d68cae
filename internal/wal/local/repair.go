package local

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// Errors describing why a bad frame is corruption rather than a torn tail.
var (
	// ErrNotTornTail reports damage in the last segment of a pchannel that is
	// not what an unfinished group commit leaves behind; see doc.go, Recovery.
	ErrNotTornTail = errors.New("wal: damage is not a torn tail")
	// ErrMissingSegment reports a segment file that disappeared although it
	// was not truncated.
	ErrMissingSegment = errors.New("wal: segment file missing")
)

// zeroBlock is the alignment of the zero-filled blocks an unfinished write
// can leave inside a file: the smallest sector size, of which every file
// system block and page is a multiple.
const zeroBlock = 512

// resyncBudget bounds the bytes CRC-checked while looking for a valid frame
// after a bad one; a search that would exceed it counts as finding one
// (the damage is then reported, never repaired).
const resyncBudget = 1 << 30

// tailBound is the most bytes one group commit leaves unsynced in a segment
// file: the channel fsyncs before a frame would take the unsynced bytes past
// MaxBatchBytes, so only a single frame larger than that is ever unsynced
// on its own.
func tailBound(cfg *Config) int64 { return cfg.MaxBatchBytes }

// classifyTail decides whether the bad frame at byte p of the last segment
// file at path (size bytes long) starts a torn tail. It returns nil for a
// torn tail, which may be truncated at p, and otherwise the reason the
// damage is corruption (wrapping ErrNotTornTail and cause).
func classifyTail(path string, p, size int64, cause error, cfg *Config) error {
	notTorn := func(format string, args ...any) error {
		return fmt.Errorf("%w: %w: %s", ErrNotTornTail, cause, fmt.Sprintf(format, args...))
	}
	rest := size - p
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("wal: open segment: %w", err)
	}
	defer f.Close()
	var hdr [headerSize]byte
	n, err := f.ReadAt(hdr[:], p)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("wal: read segment %s: %w", path, err)
	}
	length := int64(-1) // the frame's length when its header is whole and plausible
	if n == headerSize {
		if l := int64(binary.LittleEndian.Uint32(hdr[0:4])); l > 0 && l <= cfg.MaxRecordBytes {
			length = l
		}
	}
	bound := tailBound(cfg)
	lone := length >= 0 && headerSize+length > bound && p+headerSize+length >= size
	if rest > bound && !lone {
		return notTorn("it starts %d bytes before the end of the file, more than one group commit (%d bytes) leaves unsynced", rest, bound)
	}
	b := make([]byte, rest)
	if _, err := f.ReadAt(b, p); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("wal: read segment %s: %w", path, err)
	}
	if at, ok := findFrame(b, p, length, cfg.MaxRecordBytes); ok {
		if at < 0 {
			return notTorn("a valid record after it cannot be ruled out within the search budget")
		}
		return notTorn("a valid record follows at byte %d", at)
	}
	switch {
	case n < headerSize:
		return nil // the header itself is cut short
	case hdr == [headerSize]byte{}:
		return nil // zero-filled from a frame boundary
	case length < 0:
		return notTorn("impossible length %d in a header that is not zero-filled", binary.LittleEndian.Uint32(hdr[0:4]))
	case p+headerSize+length > size:
		if crc32.Checksum(b[headerSize:], castagnoli) == binary.LittleEndian.Uint32(hdr[4:8]) {
			return notTorn("the record's data is intact; its length field is damaged")
		}
		return nil // cut short by the end of the file
	case hasZeroBlock(b[:headerSize+length], p):
		return nil // part of the record was never written (reads as zeros)
	}
	return notTorn("the record is whole, has no zero-filled block and its checksum is wrong")
}

// findFrame reports the file position of the first valid frame (plausible
// length, matching CRC) starting after the first byte of b, which begins at
// file offset base; length is the length in b's own header (or -1), whose
// successor is tried first.
func findFrame(b []byte, base, length, maxBytes int64) (int64, bool) {
	budget := int64(resyncBudget)
	valid := func(q int64) bool {
		if q+headerSize > int64(len(b)) {
			return false
		}
		l := int64(binary.LittleEndian.Uint32(b[q:]))
		if l == 0 || l > maxBytes || q+headerSize+l > int64(len(b)) {
			return false
		}
		budget -= l
		return crc32.Checksum(b[q+headerSize:q+headerSize+l], castagnoli) == binary.LittleEndian.Uint32(b[q+4:])
	}
	if length >= 0 && valid(headerSize+length) {
		return base + headerSize + length, true
	}
	for q := int64(1); q+headerSize < int64(len(b)); q++ {
		if valid(q) {
			return base + q, true
		}
		if budget < 0 {
			return -1, true // too costly to rule out: report rather than repair
		}
	}
	return 0, false
}

// hasZeroBlock reports whether frame (at file offset base) holds a part of a
// zeroBlock-aligned block that reads as zeros: what a block that was never
// written back looks like.
func hasZeroBlock(frame []byte, base int64) bool {
	for q := (base/zeroBlock + 1) * zeroBlock; q < base+int64(len(frame)); q += zeroBlock {
		if allZero(frame[q-base : min(q-base+zeroBlock, int64(len(frame)))]) {
			return true
		}
	}
	return false
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return len(b) > 0
}
