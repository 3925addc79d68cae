package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// headerSize is the size of a record's frame header: length | CRC.
const headerSize = 8

// segmentExt is the file extension of segment files.
const segmentExt = ".wal"

// castagnoli is the CRC32-C table; it is read-only after package
// initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors describing why a record failed to decode.
var (
	// ErrChecksum reports a record whose CRC does not match its data or whose
	// length is impossible (zero or above Config.MaxRecordBytes).
	ErrChecksum = errors.New("wal: record checksum mismatch")
	// ErrShortRecord reports a record cut off by the end of its segment file.
	ErrShortRecord = errors.New("wal: short record")
	// ErrSegmentGap reports a sealed segment holding fewer records than
	// the name of the next segment implies.
	ErrSegmentGap = errors.New("wal: records missing between segments")
)

// CorruptionErr reports a damaged record in a segment file.
type CorruptionErr struct {
	// Segment is the path of the damaged segment file.
	Segment string
	// Offset is the byte offset of the damaged record inside Segment.
	Offset int64
	// Err says what is wrong (ErrChecksum, ErrShortRecord, ErrSegmentGap or an I/O error).
	Err error
}

// Error implements error.
func (e *CorruptionErr) Error() string {
	return fmt.Sprintf("wal: corruption in segment %s at byte %d: %v", e.Segment, e.Offset, e.Err)
}

// Unwrap returns the underlying cause.
func (e *CorruptionErr) Unwrap() error { return e.Err }

// segmentName returns the file name of the segment whose first record has
// offset first.
func segmentName(first int64) string {
	return fmt.Sprintf("%020d%s", first, segmentExt)
}

// parseSegmentName returns the first offset encoded in a segment file name.
func parseSegmentName(name string) (int64, bool) {
	base, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(base) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(base, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// listSegments returns the first offsets of the segment files in dir, sorted.
func listSegments(dir string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list segments: %w", err)
	}
	var firsts []int64
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if first, ok := parseSegmentName(e.Name()); ok {
			firsts = append(firsts, first)
		}
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	return firsts, nil
}

// frameHeader fills hdr with the frame header of data.
func frameHeader(hdr *[headerSize]byte, data []byte) {
	binary.LittleEndian.PutUint32(hdr[0:4], uint32(len(data)))
	binary.LittleEndian.PutUint32(hdr[4:8], crc32.Checksum(data, castagnoli))
}

// recordScanner walks the records of one segment file from its start.
type recordScanner struct {
	br       *bufio.Reader
	pos      int64 // byte offset of the next record
	maxBytes int64
	hdr      [headerSize]byte
	buf      []byte
}

// next reads one record and verifies it. With verify false the data is
// skipped rather than read (its CRC is not checked). The returned slice is
// valid until the next call unless fresh is true.
func (s *recordScanner) next(verify, fresh bool) ([]byte, error) {
	if _, err := io.ReadFull(s.br, s.hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, shortOr(err)
	}
	n := int64(binary.LittleEndian.Uint32(s.hdr[0:4]))
	if n == 0 || n > s.maxBytes {
		return nil, fmt.Errorf("%w: bad length %d", ErrChecksum, n)
	}
	if !verify {
		if _, err := s.br.Discard(int(n)); err != nil {
			return nil, shortOr(err)
		}
		s.pos += headerSize + n
		return nil, nil
	}
	var data []byte
	if fresh {
		data = make([]byte, n)
	} else {
		if int64(cap(s.buf)) < n {
			s.buf = make([]byte, n)
		}
		data = s.buf[:n]
	}
	if _, err := io.ReadFull(s.br, data); err != nil {
		return nil, shortOr(err)
	}
	if crc32.Checksum(data, castagnoli) != binary.LittleEndian.Uint32(s.hdr[4:8]) {
		return nil, ErrChecksum
	}
	s.pos += headerSize + n
	return data, nil
}

// shortOr maps end-of-file errors inside a record to ErrShortRecord.
func shortOr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrShortRecord
	}
	return err
}

// scanResult is what scanSegment learned about one segment file.
type scanResult struct {
	records int64 // whole, valid records
	size    int64 // byte length of those records
	err     error // why scanning stopped early (nil at a clean end of file)
}

// scanSegment reads every record of the segment file at path, verifying
// CRCs, and stops at the end of the file or at the first bad record.
func scanSegment(path string, maxBytes int64) (scanResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return scanResult{}, fmt.Errorf("wal: open segment: %w", err)
	}
	defer f.Close()
	s := recordScanner{br: bufio.NewReaderSize(f, 1<<20), maxBytes: maxBytes}
	var res scanResult
	for {
		_, err := s.next(true, false)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrShortRecord) {
				return scanResult{}, fmt.Errorf("wal: read segment %s: %w", path, err)
			}
			res.err = err
			break
		}
		res.records++
	}
	res.size = s.pos
	return res, nil
}

// syncDir fsyncs a directory so that entries created or removed in it are durable.
func syncDirFile(dir string, sync func(*os.File) error) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("wal: open dir: %w", err)
	}
	err = sync(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: sync dir %s: %w", filepath.Base(dir), err)
	}
	return nil
}
