package ivf

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
// The magic, version and CRC are the envelope of package indexfile.
// Build-only settings (Workers) are not stored.
const headerSize = 64

// ErrCorrupt is wrapped by every Unmarshal error caused by malformed data.
var ErrCorrupt = errors.New("ivf: corrupt index data")

// format is the file envelope.
var format = indexfile.Format{Magic: "STRIVF\x00\x00", Version: 1, VersionSize: 4, Corrupt: ErrCorrupt}

// Marshal writes the index in the version-1 format described above. It is
// safe to call concurrently with Search.
func (x *Index) Marshal(w io.Writer) error {
	fw := format.NewWriter(w)
	// h holds the header after the envelope's magic and version; the
	// indexes below are its file offsets.
	var h [headerSize]byte
	le := binary.LittleEndian
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
	// The writer's error is sticky and returned by Close.
	_, _ = fw.Write(h[format.HeaderSize():])
	fw.Float32s(x.centroids)
	fw.Uint32s(x.offsets)
	fw.Int32s(x.rows)
	switch x.cfg.Kind {
	case Flat:
		fw.Float32s(x.vecs)
	case SQ8:
		fw.Float32s(x.sqMin)
		fw.Float32s(x.sqScale)
		_, _ = fw.Write(x.codes)
	case PQ:
		fw.Float32s(x.codebooks)
		_, _ = fw.Write(x.codes)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("ivf: marshal: %w", err)
	}
	return nil
}

// f32s reads cnt little-endian float32 values.
func f32s(r *indexfile.Reader, cnt uint64) ([]float32, error) { return r.Float32s(cnt) }

// Unmarshal reads an index written by Marshal, verifying its checksum, its
// parameters and that the lists hold every row exactly once. Errors caused
// by bad data wrap ErrCorrupt.
func Unmarshal(rd io.Reader) (*Index, error) {
	x, err := unmarshal(rd)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("ivf: unmarshal: %w", err)
	}
	return x, err
}

func unmarshal(rd io.Reader) (*Index, error) {
	r, err := format.NewReader(rd)
	if err != nil {
		return nil, err
	}
	h, err := r.Header(headerSize)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
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
		return nil, format.ErrorAt(20, "dim %d", dim)
	}
	if le.Uint32(h[12:]) > uint32(PQ) {
		return nil, format.ErrorAt(12, "kind %d", le.Uint32(h[12:]))
	}
	x, err := newIndex(int(dim), metric, cfg)
	if err != nil {
		return nil, format.ErrorAt(12, "%v", err)
	}
	if n > math.MaxInt32 {
		return nil, format.ErrorAt(56, "row count %d", n)
	}
	x.n = int(n)
	nlist, d := uint64(cfg.Nlist), uint64(dim)
	if x.centroids, err = f32s(r, nlist*d); err != nil {
		return nil, err
	}
	offOff := r.Offset()
	if x.offsets, err = r.Words(nlist + 1); err != nil {
		return nil, err
	}
	rowsOff := r.Offset()
	if x.rows, err = r.Int32s(n); err != nil {
		return nil, err
	}
	switch cfg.Kind {
	case Flat:
		x.vecs, err = f32s(r, n*d)
	case SQ8:
		if x.sqMin, err = f32s(r, d); err == nil {
			if x.sqScale, err = f32s(r, d); err == nil {
				x.codes, err = r.Bytes(n * d)
			}
		}
	case PQ:
		if x.codebooks, err = f32s(r, uint64(cfg.M)*uint64(x.ksub)*uint64(x.dsub)); err == nil {
			x.codes, err = r.Bytes(n * uint64(cfg.M))
		}
	}
	if err != nil {
		return nil, err
	}
	if err := r.Close(); err != nil {
		return nil, err
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
		return format.ErrorAt(offOff, "first list offset %d", x.offsets[0])
	}
	for l := range x.cfg.Nlist {
		if x.offsets[l+1] < x.offsets[l] {
			return format.ErrorAt(offOff+int64(4*(l+1)), "list offset %d after %d", x.offsets[l+1], x.offsets[l])
		}
	}
	if int(x.offsets[x.cfg.Nlist]) != x.n {
		return format.ErrorAt(offOff+int64(4*x.cfg.Nlist), "lists hold %d rows, index has %d", x.offsets[x.cfg.Nlist], x.n)
	}
	seen := make([]bool, x.n)
	for p, r := range x.rows {
		if r < 0 || int(r) >= x.n || seen[r] {
			return format.ErrorAt(rowsOff+int64(4*p), "row %d at position %d is out of range or repeated", r, p)
		}
		seen[r] = true
	}
	return nil
}
