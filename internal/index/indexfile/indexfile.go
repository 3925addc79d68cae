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
//
// # Streaming reads
//
// Reader decodes a file from a stream into the index's final slices
// (Words, Int32s, Float32s, Bytes), so that loading an index holds no copy
// of the whole file: only a 64 KiB buffer besides what it returns. Words
// are read straight into the returned slice's memory, not decoded one by one. When the
// stream's length is known (the reader has a Size method, as bytes.Reader
// and Sized do) each slice is allocated once at its exact size, and a
// length field that claims more data than the file has left is reported as
// corrupt before anything is allocated; otherwise slices grow as the data
// arrives, so a corrupt length fails at the end of the data rather than by
// allocating it all up front.
//
// # Mapped reads
//
// A Reader over a Mapped file (a whole file held in memory, such as a
// read-only memory mapping made by package mmapcache) copies nothing that
// it can point at: Words, Int32s, Float32s, Bytes and Next return
// sub-slices of the mapping, which callers must treat as read-only and
// which stay valid as long as the mapping does. The checksum is still
// computed over every byte, and decoders check their structures as they do
// for a stream, so a mapped file is never trusted more than a downloaded
// one. A slice of 32-bit words is returned in place only on a
// little-endian machine and where it starts at a multiple of 4 bytes in
// memory; otherwise it is decoded into a new slice, or, when
// Mapped.Aligned is set, the read fails with a *MisalignedError that
// tells the caller how far to shift the file so that it lines up (see
// mmapcache).
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
	"slices"
	"unsafe"
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
	f Format
	r *bufio.Reader
	// m is the file when it is Mapped (r is nil then), aligned whether a
	// misaligned word slice fails instead of being copied.
	m       []byte
	aligned bool
	crc     hash.Hash32
	off     int64
	size    int64 // the file's length, -1 when unknown
	buf     []byte
}

// Sized is a stream of known length, such as an object being downloaded:
// a Reader on it allocates exactly (see Streaming reads).
type Sized struct {
	io.Reader
	// N is the stream's length in bytes.
	N int64
}

// Size returns the stream's length.
func (s Sized) Size() int64 { return s.N }

// NewReader reads and checks the header of a file of format f from r. If r
// has a Size method (bytes.Reader, Sized), it must give the length of the
// file from r's current position.
//
// If r is a *Mapped, the Reader returns slices of it (see Mapped reads).
func (f Format) NewReader(r io.Reader) (*Reader, error) {
	x := &Reader{f: f, crc: crc32.New(castagnoli), size: -1}
	if m, ok := r.(*Mapped); ok {
		x.m, x.aligned, x.size = m.Data, m.Aligned, int64(len(m.Data))
	} else {
		x.r = bufio.NewReaderSize(r, bufSize)
	}
	if s, ok := r.(interface{ Size() int64 }); ok && x.m == nil {
		x.size = s.Size()
	}
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
//
// On a Mapped file the bytes are a read-only slice of the mapping, valid
// as long as it is.
func (r *Reader) Next(n int) ([]byte, error) {
	if r.m != nil {
		return r.view(n)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if err := r.readInto(b); err != nil {
		return nil, err
	}
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

// alloc returns the capacity to allocate for cnt elements of width bytes:
// cnt when the file's length is known (after checking that the file has
// that much data left before its checksum), else at most limit.
func (r *Reader) alloc(cnt uint64, width int, limit uint64) (uint64, error) {
	if r.size < 0 {
		return min(cnt, limit), nil
	}
	left := uint64(max(r.size-r.off-4, 0))
	if cnt > left/uint64(width) {
		return 0, r.f.Errorf("%d elements of %d bytes at offset %d, but the file has %d bytes left", cnt, width, r.off, left)
	}
	return cnt, nil
}

// Bytes reads the next cnt bytes into a new slice; on a Mapped file it
// returns a read-only slice of the mapping instead.
func (r *Reader) Bytes(cnt uint64) ([]byte, error) {
	if r.m != nil {
		if _, err := r.alloc(cnt, 1, 0); err != nil {
			return nil, err
		}
		return r.view(int(cnt))
	}
	c0, err := r.alloc(cnt, 1, 1<<24)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, c0)
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
func (r *Reader) Words(cnt uint64) ([]uint32, error) { return words[uint32](r, cnt) }

// Int32s reads the next cnt little-endian two's-complement 32-bit words.
func (r *Reader) Int32s(cnt uint64) ([]int32, error) { return words[int32](r, cnt) }

// Float32s reads the next cnt little-endian IEEE 754 single-precision
// words, bit for bit.
func (r *Reader) Float32s(cnt uint64) ([]float32, error) { return words[float32](r, cnt) }

// word is a 32-bit value held in a file as its little-endian bits.
type word interface{ ~uint32 | ~int32 | ~float32 }

// wordChunk bounds the single reads of words (bytes): each is read
// straight into the slice being returned, with no copy through the
// reader's buffer.
const wordChunk = 1 << 20

// littleEndian is whether this machine stores words as the files do, so
// that their bytes are copied as they are.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// words reads cnt 32-bit words into one slice, bit for bit. The file's
// bytes are read directly into the slice's memory (on a little-endian
// machine they are the words; on another they are swapped in place), so
// loading a large index costs a copy from the stream and the checksum.
func words[T word](r *Reader, cnt uint64) ([]T, error) {
	c0, err := r.alloc(cnt, 4, 1<<22)
	if err != nil {
		return nil, err
	}
	if r.m != nil && cnt > 0 {
		p := unsafe.Pointer(unsafe.SliceData(r.m[r.off:]))
		switch {
		case littleEndian && uintptr(p)%4 == 0:
			b, err := r.view(int(4 * cnt))
			if err != nil {
				return nil, err
			}
			return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), cnt), nil
		case littleEndian && r.aligned:
			return nil, &MisalignedError{Offset: r.off, Shift: int((4 - uintptr(p)%4) % 4)}
		}
	}
	out := make([]T, 0, c0)
	for cnt > 0 {
		c := int(min(cnt, wordChunk/4))
		n := len(out)
		out = slices.Grow(out, c)[:n+c]
		dst := out[n:]
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*c)
		if err := r.readInto(b); err != nil {
			return nil, err
		}
		if !littleEndian {
			for i := range dst {
				u := binary.LittleEndian.Uint32(b[4*i:])
				dst[i] = *(*T)(unsafe.Pointer(&u))
			}
		}
		cnt -= uint64(c)
	}
	return out, nil
}

// readInto fills b with the next len(b) bytes of the payload. A file that
// ends first is corrupt.
func (r *Reader) readInto(b []byte) error {
	if r.m != nil {
		v, err := r.view(len(b))
		copy(b, v)
		return err
	}
	if _, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return r.f.Errorf("truncated at offset %d", r.off)
		}
		return fmt.Errorf("read index file: %w", err)
	}
	r.crc.Write(b)
	r.off += int64(len(b))
	return nil
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

// Mapped is a whole index file held in memory, typically a read-only
// memory mapping, given to a decoder in place of a stream: the decoder's
// Reader returns slices of Data instead of copies (see Mapped reads). It
// also reads as an io.Reader, for decoders that do not use Reader.
type Mapped struct {
	// Data is the file, from its magic to its checksum.
	Data []byte
	// Aligned makes a word slice that does not start at a multiple of 4
	// bytes in memory fail with a *MisalignedError instead of being copied.
	Aligned bool

	off int // the io.Reader position
}

// Read implements io.Reader over Data.
func (m *Mapped) Read(p []byte) (int, error) {
	if m.off >= len(m.Data) {
		return 0, io.EOF
	}
	n := copy(p, m.Data[m.off:])
	m.off += n
	return n, nil
}

// Size returns the length of the file.
func (m *Mapped) Size() int64 { return int64(len(m.Data)) }

// MisalignedError says that a slice of 32-bit words of a Mapped file does
// not start at a multiple of 4 bytes in memory, so it cannot be used in
// place.
type MisalignedError struct {
	// Offset is the file offset of the first word.
	Offset int64
	// Shift is how many bytes later the file must start in memory for the
	// words to line up (1, 2 or 3).
	Shift int
}

// Error implements error.
func (e *MisalignedError) Error() string {
	return fmt.Sprintf("indexfile: words at offset %d are not 4-byte aligned in memory (shift the file by %d bytes)", e.Offset, e.Shift)
}

// view returns the next n bytes of a Mapped file in place, adding them to
// the checksum. A file that ends first is corrupt.
func (r *Reader) view(n int) ([]byte, error) {
	if n < 0 || int64(n) > int64(len(r.m))-r.off {
		return nil, r.f.Errorf("truncated at offset %d", r.off)
	}
	b := r.m[r.off : r.off+int64(n) : r.off+int64(n)]
	r.crc.Write(b)
	r.off += int64(n)
	return b, nil
}
