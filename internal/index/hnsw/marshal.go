package hnsw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"

	"github.com/strata-db/strata/internal/index"
)

// Serialized format, version 1. All integers and floats are little-endian.
//
//	offset  size  field
//	0       8     magic "STRHNSW\x00"
//	8       4     version (1)
//	12      4     metric (0 L2, 1 IP, 2 COSINE)
//	16      4     dim
//	20      4     M
//	24      4     efConstruction
//	28      4     reserved, 0
//	32      8     seed
//	40      8     n, the number of rows
//	48      8     entry point row, -1 when n == 0
//	56      8     upperWords, the length of the upper-layer link array
//	64      n     levels, one byte per row
//	...     4*n*dim          vectors, row-major float32 (unit length for COSINE)
//	...     4*n*(2M+1)       layer-0 link blocks: count, then 2M ids (unused slots 0)
//	...     4*upperWords     upper-layer link blocks, rows in order, each row
//	                         with levels[row] blocks of count + M ids
//	...     4     CRC-32C (Castagnoli) of every preceding byte
//
// Build-only settings (Workers) are not stored.
const (
	magic         = "STRHNSW\x00"
	formatVersion = 1
	headerSize    = 64
)

// ErrCorrupt is wrapped by every Unmarshal error caused by malformed data.
var ErrCorrupt = errors.New("hnsw: corrupt index data")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Marshal writes the index in the version-1 format described above. It is
// safe to call concurrently with Search.
func (x *Index) Marshal(w io.Writer) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)

	var h [headerSize]byte
	copy(h[0:8], magic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], formatVersion)
	le.PutUint32(h[12:], uint32(x.metric))
	le.PutUint32(h[16:], uint32(x.dim))
	le.PutUint32(h[20:], uint32(x.cfg.M))
	le.PutUint32(h[24:], uint32(x.cfg.EfConstruction))
	le.PutUint64(h[32:], x.cfg.Seed)
	le.PutUint64(h[40:], uint64(x.n))
	le.PutUint64(h[48:], uint64(int64(x.entry)))
	le.PutUint64(h[56:], uint64(len(x.upper)))
	if _, err := bw.Write(h[:]); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	if _, err := bw.Write(x.levels); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	// Encode words through a fixed buffer; bufio's error is sticky and
	// checked at Flush.
	var chunk [4096]byte
	put := func(cnt int, word func(i int) uint32) {
		for i := 0; i < cnt; {
			c := min(cnt-i, len(chunk)/4)
			for j := range c {
				le.PutUint32(chunk[4*j:], word(i+j))
			}
			_, _ = bw.Write(chunk[:4*c])
			i += c
		}
	}
	put(len(x.vecs), func(i int) uint32 { return math.Float32bits(x.vecs[i]) })
	put(len(x.links0), func(i int) uint32 { return x.links0[i] })
	put(len(x.upper), func(i int) uint32 { return x.upper[i] })
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	var buf [4]byte
	le.PutUint32(buf[:], crc.Sum32())
	if _, err := w.Write(buf[:]); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	return nil
}

// reader tracks the offset and checksum of what Unmarshal has read.
type reader struct {
	r   *bufio.Reader
	crc hash.Hash32
	off int64
	buf []byte
}

// next returns the next n bytes, valid until the following call.
func (r *reader) next(n int) ([]byte, error) {
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: truncated at offset %d", ErrCorrupt, r.off)
		}
		return nil, fmt.Errorf("hnsw: unmarshal: %w", err)
	}
	r.crc.Write(b)
	r.off += int64(n)
	return b, nil
}

// u32s reads cnt little-endian words in chunks, so that a corrupt length
// fails at the end of the data rather than allocating it all up front.
func (r *reader) u32s(cnt uint64) ([]uint32, error) {
	const chunk = 1 << 14
	out := make([]uint32, 0, min(cnt, 1<<20))
	for cnt > 0 {
		c := min(cnt, chunk)
		b, err := r.next(int(c) * 4)
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

func corrupt(off int64, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
}

// Unmarshal reads an index written by Marshal, verifying its checksum and
// the consistency of the graph. Errors caused by bad data wrap ErrCorrupt.
func Unmarshal(rd io.Reader) (*Index, error) {
	r := &reader{r: bufio.NewReaderSize(rd, 1<<16), crc: crc32.New(castagnoli)}
	h, err := r.next(headerSize)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if string(h[0:8]) != magic {
		return nil, corrupt(0, "bad magic %q", h[0:8])
	}
	if v := le.Uint32(h[8:]); v != formatVersion {
		return nil, corrupt(8, "unsupported version %d", v)
	}
	metric := index.Metric(le.Uint32(h[12:]))
	dim := le.Uint32(h[16:])
	cfg := Config{M: int(le.Uint32(h[20:])), EfConstruction: int(le.Uint32(h[24:])), Seed: le.Uint64(h[32:])}
	n := le.Uint64(h[40:])
	entry := int64(le.Uint64(h[48:]))
	upperWords := le.Uint64(h[56:])
	if dim == 0 || dim > 1<<20 {
		return nil, corrupt(16, "dim %d", dim)
	}
	x, err := New(int(dim), metric, cfg)
	if err != nil {
		return nil, corrupt(12, "%v", err)
	}
	if n > math.MaxInt32 {
		return nil, corrupt(40, "row count %d", n)
	}
	if (n == 0 && entry != -1) || (n > 0 && (entry < 0 || uint64(entry) >= n)) {
		return nil, corrupt(48, "entry point %d with %d rows", entry, n)
	}

	lv, err := r.next(int(n))
	if err != nil {
		return nil, err
	}
	x.levels = append([]uint8(nil), lv...)
	x.upperOff = make([]int, n)
	var want uint64
	for i, l := range x.levels {
		x.upperOff[i] = int(want)
		want += uint64(l) * uint64(x.maxM+1)
	}
	if want != upperWords {
		return nil, corrupt(56, "upper-layer size %d, levels imply %d", upperWords, want)
	}

	bits, err := r.u32s(n * uint64(dim))
	if err != nil {
		return nil, err
	}
	x.vecs = make([]float32, len(bits))
	for i, b := range bits {
		x.vecs[i] = math.Float32frombits(b)
	}

	linkOff := r.off
	if x.links0, err = r.u32s(n * uint64(x.maxM0+1)); err != nil {
		return nil, err
	}
	upperOff := r.off
	if x.upper, err = r.u32s(upperWords); err != nil {
		return nil, err
	}
	sum := r.crc.Sum32()
	tail, err := r.next(4)
	if err != nil {
		return nil, err
	}
	if got := le.Uint32(tail); got != sum {
		return nil, corrupt(r.off-4, "checksum %08x, computed %08x", got, sum)
	}

	x.n = int(n)
	x.entry = int32(entry)
	if n > 0 {
		x.maxLevel = int(x.levels[entry])
	}
	if err := x.checkLinks(linkOff, upperOff); err != nil {
		return nil, err
	}
	return x, nil
}

// checkLinks verifies that every link block has a valid count and ids.
func (x *Index) checkLinks(linkOff, upperOff int64) error {
	check := func(b []uint32, capacity int, off int64) error {
		if int(b[0]) > capacity {
			return corrupt(off, "link count %d exceeds %d", b[0], capacity)
		}
		for _, v := range b[1 : 1+b[0]] {
			if int(v) >= x.n {
				return corrupt(off, "link to row %d of %d", v, x.n)
			}
		}
		return nil
	}
	for id := range x.n {
		if err := check(x.block(uint32(id), 0), x.maxM0, linkOff+int64(id*(x.maxM0+1)*4)); err != nil {
			return err
		}
		for l := 1; l <= int(x.levels[id]); l++ {
			o := x.upperOff[id] + (l-1)*(x.maxM+1)
			if err := check(x.block(uint32(id), l), x.maxM, upperOff+int64(o*4)); err != nil {
				return err
			}
		}
	}
	return nil
}
