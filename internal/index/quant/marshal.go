package quant

import (
	"math"

	"github.com/strata-db/strata/internal/index/indexfile"
)

// Write writes the store: SQ8 and SQ6 4*dim vmin and 4*dim scale
// (float32), then the codes; PQ the codebooks (float32, sub-space by
// sub-space), then the codes; FP16 and BF16 the codes; FP32 the vectors
// (float32). The writer's error is sticky.
func (c *Store) Write(bw *indexfile.Writer) {
	switch c.kind {
	case FP32:
		bw.Float32s(c.vecs)
		return
	case SQ8, SQ6:
		bw.Float32s(c.vmin)
		bw.Float32s(c.scale)
	case PQ:
		bw.Float32s(c.cents)
	}
	_, _ = bw.Write(c.data)
}

// Read reads a store of n rows of kind written by Write; f is the file's
// envelope, whose Corrupt error invalid parameters and codes wrap.
func Read(r *indexfile.Reader, f indexfile.Format, kind Kind, dim, m, nbits int, n uint64) (*Store, error) {
	c := New(kind, dim, m, nbits)
	var err error
	switch kind {
	case FP32:
		c.vecs, err = r.Float32s(n * uint64(dim))
		return c, err
	case SQ8, SQ6:
		off := r.Offset()
		if c.vmin, err = r.Float32s(uint64(dim)); err != nil {
			return nil, err
		}
		if c.scale, err = r.Float32s(uint64(dim)); err != nil {
			return nil, err
		}
		for j := range dim {
			if s := c.scale[j]; !(s >= 0) || math.IsInf(float64(s), 0) || math.IsNaN(float64(c.vmin[j])) {
				return nil, f.ErrorAt(off, "scalar quantizer range of dimension %d", j)
			}
		}
	case PQ:
		if c.cents, err = r.Float32s(uint64(m) * uint64(c.ksub) * uint64(c.dsub)); err != nil {
			return nil, err
		}
	}
	off := r.Offset()
	if c.data, err = r.Bytes(n * uint64(c.size)); err != nil {
		return nil, err
	}
	if kind == SQ6 || kind == PQ {
		top := byte(63)
		if kind == PQ {
			top = byte(c.ksub - 1)
		}
		for i, b := range c.data {
			if b > top {
				return nil, f.ErrorAt(off+int64(i), "code %d exceeds %d", b, top)
			}
		}
	}
	return c, nil
}
