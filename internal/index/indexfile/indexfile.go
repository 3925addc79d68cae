// Package indexfile is the envelope of every Strata index file: magic,
// format version, payload, CRC-32C.
//
// A file is laid out as follows; integers are little-endian.
//
//	size              field
//	len(Magic)        magic, naming the kind of index
//	VersionSize       format version: 4 or 2 bytes, or 0 when the magic
//	                  itself spells the version
//	...               payload, defined by the index package
//	4                 CRC-32C (Castagnoli) of every preceding byte
//
// Each index package declares its Format and documents its payload; this
// package writes and checks the rest. Readers reject a file whose length,
// magic, version or checksum is wrong with an error wrapping the Format's
// Corrupt sentinel.
package indexfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// bufSize is the buffer size of Writer and Reader.
const bufSize = 1 << 16

// Format describes the envelope of one kind of index file.
type Format struct {
	// Magic opens the file.
	Magic string
	// Version is the format version written and the only one accepted.
	Version uint32
	// VersionSize is the width in bytes of the version field: 4, 2, or 0
	// when the version is part of Magic and not stored separately.
	VersionSize int
	// Corrupt is wrapped by every error about malformed data.
	Corrupt error
}

// HeaderSize is the length of the magic and version fields.
func (f Format) HeaderSize() int { return len(f.Magic) + f.VersionSize }

// header returns the magic and version bytes.
func (f Format) header() []byte {
	h := []byte(f.Magic)
	switch f.VersionSize {
	case 2:
		h = binary.LittleEndian.AppendUint16(h, uint16(f.Version))
	case 4:
		h = binary.LittleEndian.AppendUint32(h, f.Version)
	}
	return h
}

// Errorf returns an error wrapping f.Corrupt, with the formatted detail.
func (f Format) Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", f.Corrupt, fmt.Sprintf(format, args...))
}

// ErrorAt returns an error wrapping f.Corrupt about the data at file
// offset off, with the formatted detail.
func (f Format) ErrorAt(off int64, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", f.Corrupt, off, fmt.Sprintf(format, args...))
}

// checkHeader verifies the magic and version at the start of h, which
// holds at least HeaderSize bytes.
func (f Format) checkHeader(h []byte) error {
	if string(h[:len(f.Magic)]) != f.Magic {
		return f.Errorf("bad magic %q", h[:len(f.Magic)])
	}
	v, le := f.Version, binary.LittleEndian
	switch f.VersionSize {
	case 2:
		v = uint32(le.Uint16(h[len(f.Magic):]))
	case 4:
		v = le.Uint32(h[len(f.Magic):])
	}
	if v != f.Version {
		return f.Errorf("unsupported version %d", v)
	}
	return nil
}

// Open checks the envelope of a whole file held in memory (its length,
// magic, version and checksum) and returns the payload, a sub-slice of data.
func (f Format) Open(data []byte) ([]byte, error) {
	hs := f.HeaderSize()
	if len(data) < hs+4 {
		return nil, f.Errorf("%d bytes is too short", len(data))
	}
	if err := f.checkHeader(data); err != nil {
		return nil, err
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(body):]); got != want {
		return nil, f.Errorf("checksum %08x, the file says %08x", got, want)
	}
	return body[hs:], nil
}

// Writer writes one file: the header on creation, then the payload passed
// to Write, then the checksum on Close. It buffers; a write error is sticky
// and returned by every later Write and by Close, so callers may check only
// Close.
type Writer struct {
	w   io.Writer
	crc hash.Hash32
	bw  *bufio.Writer
}

// NewWriter starts a file of format f on w.
func (f Format) NewWriter(w io.Writer) *Writer {
	crc := crc32.New(castagnoli)
	x := &Writer{w: w, crc: crc, bw: bufio.NewWriterSize(io.MultiWriter(w, crc), bufSize)}
	_, _ = x.bw.Write(f.header())
	return x
}

// Write appends p to the payload.
func (w *Writer) Write(p []byte) (int, error) { return w.bw.Write(p) }

// chunkWords is how many words Uint32s, Int32s and Float32s encode at a
// time.
const chunkWords = 1024

// Uint32s appends v as little-endian 32-bit words.
func (w *Writer) Uint32s(v []uint32) { putInts(w, v) }

// Int32s appends v as little-endian two's-complement 32-bit words.
func (w *Writer) Int32s(v []int32) { putInts(w, v) }

// putInts encodes v through a fixed buffer, chunkWords at a time.
func putInts[T ~uint32 | ~int32](w *Writer, v []T) {
	var chunk [4 * chunkWords]byte
	for len(v) > 0 {
		c := min(len(v), chunkWords)
		for j, x := range v[:c] {
			binary.LittleEndian.PutUint32(chunk[4*j:], uint32(x))
		}
		_, _ = w.bw.Write(chunk[:4*c])
		v = v[c:]
	}
}

// Float32s appends v as little-endian IEEE 754 single-precision words.
func (w *Writer) Float32s(v []float32) {
	var chunk [4 * chunkWords]byte
	for len(v) > 0 {
		c := min(len(v), chunkWords)
		for j, x := range v[:c] {
			binary.LittleEndian.PutUint32(chunk[4*j:], math.Float32bits(x))
		}
		_, _ = w.bw.Write(chunk[:4*c])
		v = v[c:]
	}
}

// Close flushes the payload and writes the checksum. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if err := w.bw.Flush(); err != nil {
		return err
	}
	_, err := w.w.Write(binary.LittleEndian.AppendUint32(nil, w.crc.Sum32()))
	return err
}

// Reader reads one file as a stream, for payloads too large to hold twice:
// NewReader checks the header, Next returns the payload piece by piece, and
// Close checks the checksum.
type Reader struct {
	f   Format
	r   *bufio.Reader
	crc hash.Hash32
	off int64
	buf []byte
}

// NewReader reads and checks the header of a file of format f from r.
func (f Format) NewReader(r io.Reader) (*Reader, error) {
	x := &Reader{f: f, r: bufio.NewReaderSize(r, bufSize), crc: crc32.New(castagnoli)}
	h, err := x.Next(f.HeaderSize())
	if err != nil {
		return nil, err
	}
	if err := f.checkHeader(h); err != nil {
		return nil, err
	}
	return x, nil
}

// Offset is the number of bytes of the file read so far.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next n bytes of the payload, valid until the following
// call. A file that ends first is corrupt.
func (r *Reader) Next(n int) ([]byte, error) {
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, r.f.Errorf("truncated at offset %d", r.off)
		}
		return nil, fmt.Errorf("read index file: %w", err)
	}
	r.crc.Write(b)
	r.off += int64(n)
	return b, nil
}

// Header reads the rest of an index's fixed header, size bytes long from
// the start of the file, and returns it in a new slice of size bytes whose
// first HeaderSize bytes are zero, so that callers index it by file offset
// as their documentation does. Call it first, right after NewReader.
func (r *Reader) Header(size int) ([]byte, error) {
	hs := r.f.HeaderSize()
	rest, err := r.Next(size - hs)
	if err != nil {
		return nil, err
	}
	h := make([]byte, size)
	copy(h[hs:], rest)
	return h, nil
}

// readChunk bounds the single reads of Bytes and Words, so that a corrupt
// length fails at the end of the data rather than allocating it all up
// front.
const readChunk = 1 << 16

// Bytes reads the next cnt bytes into a new slice.
func (r *Reader) Bytes(cnt uint64) ([]byte, error) {
	out := make([]byte, 0, min(cnt, 1<<24))
	for cnt > 0 {
		c := min(cnt, readChunk)
		b, err := r.Next(int(c))
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		cnt -= c
	}
	return out, nil
}

// Words reads the next cnt little-endian 32-bit words.
func (r *Reader) Words(cnt uint64) ([]uint32, error) {
	out := make([]uint32, 0, min(cnt, 1<<22))
	for cnt > 0 {
		c := min(cnt, readChunk/4)
		b, err := r.Next(int(c) * 4)
		if err != nil {
			return nil, err
		}
		for i := range int(c) {
			out = append(out, binary.LittleEndian.Uint32(b[4*i:]))
		}
		cnt -= c
	}
	return out, nil
}

// Close reads the checksum that ends the file and compares it with the
// bytes read. Bytes after the checksum are not read.
func (r *Reader) Close() error {
	sum := r.crc.Sum32()
	tail, err := r.Next(4)
	if err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(tail); got != sum {
		return r.f.Errorf("checksum %08x at offset %d, computed %08x", got, r.off-4, sum)
	}
	return nil
}
