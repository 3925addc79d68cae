package hnsw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indexfile"
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
// The magic, version and CRC are the envelope of package indexfile.
// Build-only settings (Workers) are not stored.
const headerSize = 64

// ErrCorrupt is wrapped by every Unmarshal error caused by malformed data.
var ErrCorrupt = errors.New("hnsw: corrupt index data")

// format is the file envelope.
var format = indexfile.Format{Magic: "STRHNSW\x00", Version: 1, VersionSize: 4, Corrupt: ErrCorrupt}

// Marshal writes the index in the version-1 format described above. It is
// safe to call concurrently with Search.
func (x *Index) Marshal(w io.Writer) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.qz != nil {
		return x.marshalQuant(w)
	}
	bw := format.NewWriter(w)

	// h holds the header after the envelope's magic and version; the
	// indexes below are its file offsets.
	var hb [headerSize]byte
	h := hb[:]
	le := binary.LittleEndian
	le.PutUint32(h[12:], uint32(x.metric))
	le.PutUint32(h[16:], uint32(x.dim))
	le.PutUint32(h[20:], uint32(x.cfg.M))
	le.PutUint32(h[24:], uint32(x.cfg.EfConstruction))
	le.PutUint64(h[32:], x.cfg.Seed)
	le.PutUint64(h[40:], uint64(x.n))
	le.PutUint64(h[48:], uint64(int64(x.entry)))
	le.PutUint64(h[56:], uint64(len(x.upper)))
	if _, err := bw.Write(h[format.HeaderSize():]); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	if _, err := bw.Write(x.levels); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	// The writer's error is sticky and returned by Close.
	bw.Float32s(x.vecs)
	bw.Uint32s(x.links0)
	bw.Uint32s(x.upper)
	if err := bw.Close(); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	return nil
}

// Unmarshal reads an index written by Marshal, verifying its checksum and
// the consistency of the graph. Errors caused by bad data wrap ErrCorrupt.
func Unmarshal(rd io.Reader) (*Index, error) {
	x, err := unmarshal(rd)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("hnsw: unmarshal: %w", err)
	}
	return x, err
}

func unmarshal(rd io.Reader) (*Index, error) {
	r, err := format.NewReader(rd)
	if err != nil {
		return nil, err
	}
	// The indexes into h below are its file offsets.
	h, err := r.Header(headerSize)
	if err != nil {
		return nil, err
	}
	x, err := readGraph(format, r, h, Config{}, func(x *Index, n uint64) (err error) {
		x.vecs, err = r.Float32s(n * uint64(x.dim))
		return err
	})
	if err != nil {
		return nil, err
	}
	x.adviseHuge()
	return x, nil
}

// readGraph reads what the float and the quantized formats share: the
// header fields at offsets 12–63 (metric, dim, M, efConstruction, seed, row
// count, entry point, upper-layer size), the levels, then, after rows reads
// the format's own per-row data, the links. cfg carries the header fields a
// format adds (the encoding); f words the errors.
func readGraph(f indexfile.Format, r *indexfile.Reader, h []byte, cfg Config, rows func(x *Index, n uint64) error) (*Index, error) {
	le := binary.LittleEndian
	metric := index.Metric(le.Uint32(h[12:]))
	dim := le.Uint32(h[16:])
	cfg.M, cfg.EfConstruction, cfg.Seed = int(le.Uint32(h[20:])), int(le.Uint32(h[24:])), le.Uint64(h[32:])
	n := le.Uint64(h[40:])
	entry := int64(le.Uint64(h[48:]))
	upperWords := le.Uint64(h[56:])
	if dim == 0 || dim > 1<<20 {
		return nil, f.ErrorAt(16, "dim %d", dim)
	}
	x, err := New(int(dim), metric, cfg)
	if err != nil {
		return nil, f.ErrorAt(12, "%v", err)
	}
	if n > math.MaxInt32 {
		return nil, f.ErrorAt(40, "row count %d", n)
	}
	if (n == 0 && entry != -1) || (n > 0 && (entry < 0 || uint64(entry) >= n)) {
		return nil, f.ErrorAt(48, "entry point %d with %d rows", entry, n)
	}

	lv, err := r.Next(int(n))
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
		return nil, f.ErrorAt(56, "upper-layer size %d, levels imply %d", upperWords, want)
	}

	if err := rows(x, n); err != nil {
		return nil, err
	}

	linkOff := r.Offset()
	if x.links0, err = r.Words(n * uint64(x.maxM0+1)); err != nil {
		return nil, err
	}
	upperOff := r.Offset()
	if x.upper, err = r.Words(upperWords); err != nil {
		return nil, err
	}
	if err := r.Close(); err != nil {
		return nil, err
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
			return format.ErrorAt(off, "link count %d exceeds %d", b[0], capacity)
		}
		for _, v := range b[1 : 1+b[0]] {
			if int(v) >= x.n {
				return format.ErrorAt(off, "link to row %d of %d", v, x.n)
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
