// Package colfile is the local cache file of one decoded fixed-width
// column of a sealed segment: the query node writes it when the field's
// raw data is memory-mapped (mmap.enabled, queryNode.mmap.vectorField and
// scalarField) and reads the column back as slices of the read-only
// mapping (package mmapcache), so that the values live in the page cache
// and not the Go heap.
//
// # Format, version 1
//
// The envelope is package indexfile's (magic, version, payload, CRC-32C);
// integers and values are little-endian:
//
//	offset  size  field
//	0       8     magic "STRCOL\x00\x00"
//	8       4     version (1)
//	12      4     data type (schemapb.DataType number)
//	16      4     element width in bytes: 1 (Bool, byte vectors),
//	              4 (FloatVector) or 8 (Int*, Timestamptz as int64;
//	              Float, Double as float64)
//	20      4     dim (vector columns; 0 otherwise)
//	24      4     row width in bytes (byte vectors; 0 otherwise)
//	28      4     reserved, 0
//	32      8     rows
//	40      8     elements
//	48      …     the elements
//	…       4     CRC-32C (Castagnoli) of every preceding byte
//
// The elements start 48 bytes into the file, so a file mapped at a page
// boundary has them 8-byte aligned. Columns with nulls and variable-width
// columns (strings, JSON, arrays, sparse vectors) have no cache file:
// Supports says which do. A file is a cache, rebuilt from the binlogs: Read
// checks its checksum and that its header agrees with the expected column
// (type, dim, rows), and never trusts a Bool byte other than 0 or 1.
package colfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/indexfile"
)

const headerSize = 48

// ErrCorrupt is wrapped by every error about a malformed file.
var ErrCorrupt = errors.New("colfile: corrupt column file")

// format is the file envelope.
var format = indexfile.Format{Magic: "STRCOL\x00\x00", Version: 1, VersionSize: 4, Corrupt: ErrCorrupt}

// littleEndian is whether this machine stores values as the files do.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Supports reports whether c can be written as a column file: a Bool,
// integer, floating-point, FloatVector or fixed-width byte vector column
// without nulls.
func Supports(c column.Column) bool {
	switch c := c.(type) {
	case *column.Bools:
		return c.Valid == nil
	case *column.Ints:
		return c.Valid == nil
	case *column.Floats:
		return c.Valid == nil
	case *column.FloatVectors:
		return c.Valid == nil
	case *column.ByteVectors:
		return c.Valid == nil
	}
	return false
}

// shape is what a header says about a column.
type shape struct {
	t                    schemapb.DataType
	width, dim, rowWidth uint32
	rows, elems          uint64
}

// shapeOf returns the shape of a supported column.
func shapeOf(c column.Column) (shape, error) {
	switch c := c.(type) {
	case *column.Bools:
		return shape{t: schemapb.DataType_Bool, width: 1, rows: uint64(len(c.Data)), elems: uint64(len(c.Data))}, nil
	case *column.Ints:
		return shape{t: c.T, width: 8, rows: uint64(len(c.Data)), elems: uint64(len(c.Data))}, nil
	case *column.Floats:
		return shape{t: c.T, width: 8, rows: uint64(len(c.Data)), elems: uint64(len(c.Data))}, nil
	case *column.FloatVectors:
		return shape{t: schemapb.DataType_FloatVector, width: 4, dim: uint32(c.Dim), rows: uint64(c.Len()), elems: uint64(len(c.Data))}, nil
	case *column.ByteVectors:
		return shape{t: c.T, width: 1, dim: uint32(c.Dim), rowWidth: uint32(c.Width), rows: uint64(c.Len()), elems: uint64(len(c.Data))}, nil
	}
	return shape{}, fmt.Errorf("colfile: a %T column has no column file", c)
}

// Write writes c, a column Supports accepts, as a column file.
func Write(w io.Writer, c column.Column) error {
	if !Supports(c) {
		return fmt.Errorf("colfile: a %T column with nulls or variable-width values has no column file", c)
	}
	s, err := shapeOf(c)
	if err != nil {
		return err
	}
	fw := format.NewWriter(w)
	var h [headerSize]byte
	le := binary.LittleEndian
	le.PutUint32(h[12:], uint32(s.t))
	le.PutUint32(h[16:], s.width)
	le.PutUint32(h[20:], s.dim)
	le.PutUint32(h[24:], s.rowWidth)
	le.PutUint64(h[32:], s.rows)
	le.PutUint64(h[40:], s.elems)
	// The writer's error is sticky and returned by Close.
	_, _ = fw.Write(h[format.HeaderSize():])
	switch c := c.(type) {
	case *column.Bools:
		for _, v := range c.Data {
			b := byte(0)
			if v {
				b = 1
			}
			_, _ = fw.Write([]byte{b})
		}
	case *column.Ints:
		put64(fw, c.Data, func(v int64) uint64 { return uint64(v) })
	case *column.Floats:
		put64(fw, c.Data, math.Float64bits)
	case *column.FloatVectors:
		fw.Float32s(c.Data)
	case *column.ByteVectors:
		_, _ = fw.Write(c.Data)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("colfile: write: %w", err)
	}
	return nil
}

// put64 writes v as little-endian 64-bit values through a fixed buffer.
func put64[T any](w *indexfile.Writer, v []T, bits func(T) uint64) {
	var chunk [8 * 1024]byte
	for len(v) > 0 {
		c := min(len(v), 1024)
		for j, x := range v[:c] {
			binary.LittleEndian.PutUint64(chunk[8*j:], bits(x))
		}
		_, _ = w.Write(chunk[:8*c])
		v = v[c:]
	}
}

// Read returns the column held by a mapped column file, checking it
// against want, an empty column of the field's type (column.New), and
// rows. The values are slices of m (read-only, valid while the mapping
// is) where the machine is little-endian and they are aligned, and copies
// otherwise.
func Read(m *indexfile.Mapped, want column.Column, rows int) (column.Column, error) {
	r, err := format.NewReader(m)
	if err != nil {
		return nil, err
	}
	h, err := r.Header(headerSize)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	got := shape{
		t: schemapb.DataType(le.Uint32(h[12:])), width: le.Uint32(h[16:]), dim: le.Uint32(h[20:]), rowWidth: le.Uint32(h[24:]),
		rows: le.Uint64(h[32:]), elems: le.Uint64(h[40:]),
	}
	exp, err := shapeOf(want)
	if err != nil {
		return nil, err
	}
	exp.rows = uint64(rows)
	switch _, isVec := want.(*column.FloatVectors); {
	case isVec:
		exp.elems = exp.rows * uint64(exp.dim)
	case exp.rowWidth > 0:
		exp.elems = exp.rows * uint64(exp.rowWidth)
	default:
		exp.elems = exp.rows
	}
	if got != exp {
		return nil, format.Errorf("header %+v, expected %+v", got, exp)
	}
	b, err := r.Bytes(got.elems * uint64(got.width))
	if err != nil {
		return nil, err
	}
	if err := r.Close(); err != nil {
		return nil, err
	}
	switch w := want.(type) {
	case *column.Bools:
		for i, x := range b {
			if x > 1 {
				return nil, format.ErrorAt(int64(headerSize+i), "bool byte %d", x)
			}
		}
		return &column.Bools{Data: unsafe.Slice((*bool)(unsafe.Pointer(unsafe.SliceData(b))), len(b))}, nil
	case *column.Ints:
		return &column.Ints{T: w.T, Data: view[int64](b, 8, func(u uint64) int64 { return int64(u) })}, nil
	case *column.Floats:
		return &column.Floats{T: w.T, Data: view[float64](b, 8, math.Float64frombits)}, nil
	case *column.FloatVectors:
		return &column.FloatVectors{Dim: w.Dim, Data: view[float32](b, 4, func(u uint64) float32 { return math.Float32frombits(uint32(u)) })}, nil
	case *column.ByteVectors:
		return &column.ByteVectors{T: w.T, Dim: w.Dim, Width: w.Width, Data: b}, nil
	}
	return nil, fmt.Errorf("colfile: a %T column has no column file", want)
}

// view returns b, little-endian values of width bytes, as a []T: b itself
// when the machine is little-endian and b is aligned for T, else decoded
// into a new slice.
func view[T any](b []byte, width int, conv func(uint64) T) []T {
	n := len(b) / width
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if littleEndian && uintptr(p)%uintptr(width) == 0 {
		return unsafe.Slice((*T)(p), n)
	}
	out := make([]T, n)
	for i := range out {
		if width == 8 {
			out[i] = conv(binary.LittleEndian.Uint64(b[8*i:]))
		} else {
			out[i] = conv(uint64(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return out
}
