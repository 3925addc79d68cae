package ivf

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
//	0       8     magic "STRIVF\x00\x00"
//	8       4     version (1)
//	12      4     kind (0 IVF_FLAT, 1 IVF_SQ8, 2 IVF_PQ)
//	16      4     metric (0 L2, 1 IP, 2 COSINE)
//	20      4     dim
//	24      4     nlist
//	28      4     m (IVF_PQ; 0 otherwise)
//	32      4     nbits (IVF_PQ; 0 otherwise)
//	36      4     init (0 k-means++, 1 random)
//	40      4     iterations
//	44      4     max points per centroid
//	48      8     seed
//	56      8     n, the number of rows
//	64      4*nlist*dim      centroids, row-major float32
//	...     4*(nlist+1)      list offsets: list l holds positions
//	                         offsets[l] .. offsets[l+1]-1
//	...     4*n              row number of each position
//	...     payload, by kind:
//	          IVF_FLAT  4*n*dim   vectors in position order (unit length
//	                              for COSINE)
//	          IVF_SQ8   4*dim     per-dimension minimum
//	                    4*dim     per-dimension scale (step per code)
//	                    n*dim     codes in position order
//	          IVF_PQ    4*m*2^nbits*(dim/m)  codebooks, sub-space major
//	                    n*m       codes in position order
//	...     4     CRC-32C (Castagnoli) of every preceding byte
//
// Build-only settings (Workers) are not stored.
const (
	magic         = "STRIVF\x00\x00"
	formatVersion = 1
	headerSize    = 64
)

// ErrCorrupt is wrapped by every Unmarshal error caused by malformed data.
var ErrCorrupt = errors.New("ivf: corrupt index data")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Marshal writes the index in the version-1 format described above. It is
// safe to call concurrently with Search.
func (x *Index) Marshal(w io.Writer) error {
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	le := binary.LittleEndian
	var h [headerSize]byte
	copy(h[0:8], magic)
	le.PutUint32(h[8:], formatVersion)
	le.PutUint32(h[12:], uint32(x.cfg.Kind))
	le.PutUint32(h[16:], uint32(x.metric))
	le.PutUint32(h[20:], uint32(x.dim))
	le.PutUint32(h[24:], uint32(x.cfg.Nlist))
	if x.cfg.Kind == PQ {
		le.PutUint32(h[28:], uint32(x.cfg.M))
		le.PutUint32(h[32:], uint32(x.cfg.Nbits))
	}
	le.PutUint32(h[36:], uint32(x.cfg.Init))
	le.PutUint32(h[40:], uint32(x.cfg.Iterations))
	le.PutUint32(h[44:], uint32(x.cfg.MaxPointsPerCentroid))
	le.PutUint64(h[48:], x.cfg.Seed)
	le.PutUint64(h[56:], uint64(x.n))
	// bufio's error is sticky and checked at Flush.
	_, _ = bw.Write(h[:])
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
	floats := func(v []float32) { put(len(v), func(i int) uint32 { return math.Float32bits(v[i]) }) }
	floats(x.centroids)
	put(len(x.offsets), func(i int) uint32 { return x.offsets[i] })
	put(len(x.rows), func(i int) uint32 { return uint32(x.rows[i]) })
	switch x.cfg.Kind {
	case Flat:
		floats(x.vecs)
	case SQ8:
		floats(x.sqMin)
		floats(x.sqScale)
		_, _ = bw.Write(x.codes)
	case PQ:
		floats(x.codebooks)
		_, _ = bw.Write(x.codes)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("ivf: marshal: %w", err)
	}
	var buf [4]byte
	le.PutUint32(buf[:], crc.Sum32())
	if _, err := w.Write(buf[:]); err != nil {
		return fmt.Errorf("ivf: marshal: %w", err)
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

// readChunk bounds single reads, so that a corrupt length fails at the end
// of the data rather than allocating it all up front.
const readChunk = 1 << 16

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
		return nil, fmt.Errorf("ivf: unmarshal: %w", err)
	}
	r.crc.Write(b)
	r.off += int64(n)
	return b, nil
}

// bytes reads cnt bytes into a new slice.
func (r *reader) bytes(cnt uint64) ([]byte, error) {
	out := make([]byte, 0, min(cnt, 1<<24))
	for cnt > 0 {
		c := min(cnt, readChunk)
		b, err := r.next(int(c))
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		cnt -= c
	}
	return out, nil
}

// u32s reads cnt little-endian words.
func (r *reader) u32s(cnt uint64) ([]uint32, error) {
	out := make([]uint32, 0, min(cnt, 1<<22))
	for cnt > 0 {
		c := min(cnt, readChunk/4)
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

// f32s reads cnt little-endian float32 values.
func (r *reader) f32s(cnt uint64) ([]float32, error) {
	w, err := r.u32s(cnt)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(w))
	for i, b := range w {
		out[i] = math.Float32frombits(b)
	}
	return out, nil
}

func corrupt(off int64, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
}

// Unmarshal reads an index written by Marshal, verifying its checksum, its
// parameters and that the lists hold every row exactly once. Errors caused
// by bad data wrap ErrCorrupt.
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
	cfg := Config{
		Kind:                 Kind(le.Uint32(h[12:])),
		Nlist:                int(le.Uint32(h[24:])),
		M:                    int(le.Uint32(h[28:])),
		Nbits:                int(le.Uint32(h[32:])),
		Init:                 Init(le.Uint32(h[36:])),
		Iterations:           int(int32(le.Uint32(h[40:]))),
		MaxPointsPerCentroid: int(int32(le.Uint32(h[44:]))),
		Seed:                 le.Uint64(h[48:]),
	}
	metric := index.Metric(le.Uint32(h[16:]))
	dim := le.Uint32(h[20:])
	n := le.Uint64(h[56:])
	if dim == 0 || dim > 1<<20 {
		return nil, corrupt(20, "dim %d", dim)
	}
	if le.Uint32(h[12:]) > uint32(PQ) {
		return nil, corrupt(12, "kind %d", le.Uint32(h[12:]))
	}
	x, err := newIndex(int(dim), metric, cfg)
	if err != nil {
		return nil, corrupt(12, "%v", err)
	}
	if n > math.MaxInt32 {
		return nil, corrupt(56, "row count %d", n)
	}
	x.n = int(n)
	nlist, d := uint64(cfg.Nlist), uint64(dim)
	if x.centroids, err = r.f32s(nlist * d); err != nil {
		return nil, err
	}
	offOff := r.off
	if x.offsets, err = r.u32s(nlist + 1); err != nil {
		return nil, err
	}
	rowsOff := r.off
	rows, err := r.u32s(n)
	if err != nil {
		return nil, err
	}
	x.rows = make([]int32, len(rows))
	for i, v := range rows {
		x.rows[i] = int32(v)
	}
	switch cfg.Kind {
	case Flat:
		x.vecs, err = r.f32s(n * d)
	case SQ8:
		if x.sqMin, err = r.f32s(d); err == nil {
			if x.sqScale, err = r.f32s(d); err == nil {
				x.codes, err = r.bytes(n * d)
			}
		}
	case PQ:
		if x.codebooks, err = r.f32s(uint64(cfg.M) * uint64(x.ksub) * uint64(x.dsub)); err == nil {
			x.codes, err = r.bytes(n * uint64(cfg.M))
		}
	}
	if err != nil {
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
	if err := x.checkLists(offOff, rowsOff); err != nil {
		return nil, err
	}
	x.derivePQ()
	return x, nil
}

// checkLists verifies that the offsets are non-decreasing from 0 to n and
// that the positions hold every row exactly once.
func (x *Index) checkLists(offOff, rowsOff int64) error {
	if x.offsets[0] != 0 {
		return corrupt(offOff, "first list offset %d", x.offsets[0])
	}
	for l := range x.cfg.Nlist {
		if x.offsets[l+1] < x.offsets[l] {
			return corrupt(offOff+int64(4*(l+1)), "list offset %d after %d", x.offsets[l+1], x.offsets[l])
		}
	}
	if int(x.offsets[x.cfg.Nlist]) != x.n {
		return corrupt(offOff+int64(4*x.cfg.Nlist), "lists hold %d rows, index has %d", x.offsets[x.cfg.Nlist], x.n)
	}
	seen := make([]bool, x.n)
	for p, r := range x.rows {
		if r < 0 || int(r) >= x.n || seen[r] {
			return corrupt(rowsOff+int64(4*p), "row %d at position %d is out of range or repeated", r, p)
		}
		seen[r] = true
	}
	return nil
}
