// Package quant holds the vector encodings of the quantized indexes
// (HNSW_SQ and HNSW_PQ in package hnsw): a Store of per-row codes, trained
// on the rows (SQ8 and SQ6: per-dimension minimum and scale; PQ: k-means
// codebooks per sub-space on a sample; FP16, BF16 and FP32 need none), and
// a Query prepared once per search that scores rows from their codes
// without decoding them (SQ through the SIMD row kernels of package ivf,
// PQ by asymmetric table look-ups). Write and Read give a store's durable
// layout, which the index formats embed (documented in
// internal/index/hnsw/marshal_quant.go).
package quant

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/ivf"
)

// Kind is a vector encoding: how a quantized index stores the vectors it
// searches over (Milvus HNSW_SQ's sq_type, or PQ for HNSW_PQ), and how a
// refine store keeps them (refine_type).
type Kind uint8

const (
	// FP32 keeps float32 vectors: the encoding of a plain HNSW index, and
	// the exact refine type.
	FP32 Kind = iota
	// SQ8 keeps one byte per dimension: 256 levels between the dimension's
	// minimum and maximum over the indexed rows.
	SQ8
	// SQ6 keeps 64 levels per dimension, stored one byte per dimension
	// (the levels of Milvus SQ6, not its packing).
	SQ6
	// FP16 keeps IEEE 754 half-precision values, two bytes per dimension.
	FP16
	// BF16 keeps bfloat16 values (the top half of a float32), two bytes
	// per dimension.
	BF16
	// PQ keeps a product-quantizer code: m sub-vectors of dim/m floats,
	// each replaced by the index of the nearest of 2^nbits codewords
	// trained by k-means (one byte per sub-vector, nbits <= 8).
	PQ
)

// String returns the Milvus name of q ("FP32", "SQ8", "SQ6", "FP16",
// "BF16" or "PQ").
func (q Kind) String() string {
	switch q {
	case FP32:
		return "FP32"
	case SQ8:
		return "SQ8"
	case SQ6:
		return "SQ6"
	case FP16:
		return "FP16"
	case BF16:
		return "BF16"
	case PQ:
		return "PQ"
	}
	return fmt.Sprintf("Kind(%d)", int(q))
}

// ParseKind parses a Milvus sq_type or refine_type name in any case:
// SQ6, SQ8, FP16, BF16, FP32 and its alias FLAT.
func ParseKind(s string) (Kind, bool) {
	switch strings.ToUpper(s) {
	case "SQ8":
		return SQ8, true
	case "SQ6":
		return SQ6, true
	case "FP16":
		return FP16, true
	case "BF16":
		return BF16, true
	case "FP32", "FLAT":
		return FP32, true
	}
	return 0, false
}

// Store holds the encoded vectors of an index's rows, row i's code at
// Data()[i*Size():][:Size()] (FP32: Vectors()[i*dim:][:dim]). A store is
// built by New, Train and Encode (or Adopt) and is read-only after: its
// methods are then safe for concurrent use.
type Store struct {
	kind Kind
	dim  int
	size int // bytes per row (FP32: 4*dim, held in vecs)

	// SQ8 and SQ6: code = round((x-vmin)/scale), per dimension.
	vmin, scale []float32
	// PQ: m sub-vectors of dsub floats, ksub codewords each; cents holds
	// sub-space j's codebook at cents[j*ksub*dsub:][:ksub*dsub].
	m, nbits, ksub, dsub int
	cents                []float32

	data []byte    // n*size code bytes (every kind but FP32)
	vecs []float32 // n*dim floats (FP32)
}

// levels returns the largest code of an SQ kind.
func (c *Store) levels() float32 {
	if c.kind == SQ6 {
		return 63
	}
	return 255
}

// New returns an empty store of kind for vectors of dimension dim; m and
// nbits are PQ's (m must divide dim, nbits be in [1, 8]).
func New(kind Kind, dim, m, nbits int) *Store {
	c := &Store{kind: kind, dim: dim}
	switch kind {
	case FP32:
		c.size = 4 * dim
	case SQ8, SQ6:
		c.size = dim
	case FP16, BF16:
		c.size = 2 * dim
	case PQ:
		c.m, c.nbits, c.ksub, c.dsub = m, nbits, 1<<nbits, dim/m
		c.size = m
	}
	return c
}

// pqTrainRows bounds the training sample of a product quantizer at
// pqTrainRows*2^nbits rows (faiss uses 256 per centroid; 64 keeps the
// training of a 100k-row segment to seconds at the same code quality
// within a recall point on the benchmark data).
const pqTrainRows = 64

// pqIterations is the number of Lloyd iterations of PQ training.
const pqIterations = 12

// Train fits the encoding's parameters to the n rows of vecs: the
// per-dimension range of SQ, the codebooks of PQ (on a random sample).
func (c *Store) Train(ctx context.Context, vecs []float32, workers int, seed uint64) error {
	n := len(vecs) / c.dim
	switch c.kind {
	case SQ8, SQ6:
		c.vmin = make([]float32, c.dim)
		vmax := make([]float32, c.dim)
		for j := range c.dim {
			c.vmin[j], vmax[j] = float32(math.Inf(1)), float32(math.Inf(-1))
		}
		for i := range n {
			for j, v := range vecs[i*c.dim : (i+1)*c.dim] {
				c.vmin[j] = min(c.vmin[j], v)
				vmax[j] = max(vmax[j], v)
			}
		}
		c.scale = make([]float32, c.dim)
		for j := range c.dim {
			if n == 0 {
				c.vmin[j] = 0
				continue
			}
			c.scale[j] = (vmax[j] - c.vmin[j]) / c.levels()
		}
	case PQ:
		limit := pqTrainRows * c.ksub
		sample := vecs
		if n > limit {
			sample = make([]float32, 0, limit*c.dim)
			rng := splitmix64(seed)
			for i := range limit {
				rng = splitmix64(rng + uint64(i))
				r := int(rng % uint64(n))
				sample = append(sample, vecs[r*c.dim:(r+1)*c.dim]...)
			}
		}
		sn := len(sample) / c.dim
		c.cents = make([]float32, c.m*c.ksub*c.dsub)
		sub := make([]float32, sn*c.dsub)
		for j := range c.m {
			for i := range sn {
				copy(sub[i*c.dsub:(i+1)*c.dsub], sample[i*c.dim+j*c.dsub:])
			}
			cb, err := ivf.KMeans(ctx, sub, c.dsub, c.ksub, pqIterations, workers, seed+uint64(j))
			if err != nil {
				return err
			}
			copy(c.cents[j*c.ksub*c.dsub:], cb)
		}
	}
	return nil
}

// codebook returns the ksub codewords of PQ sub-space j, row-major.
func (c *Store) codebook(j int) []float32 {
	sz := c.ksub * c.dsub
	return c.cents[j*sz : (j+1)*sz]
}

// encode writes the code of v into out; buf is PQ's scratch of ksub
// floats.
func (c *Store) encode(v []float32, out []byte, buf []float32) {
	switch c.kind {
	case SQ8, SQ6:
		top := c.levels()
		for j, x := range v {
			var q float32
			if s := c.scale[j]; s > 0 {
				q = (x - c.vmin[j]) / s
			}
			out[j] = byte(min(max(float32(math.Round(float64(q))), 0), top))
		}
	case FP16:
		distance.EncodeFloat16(out, v)
	case BF16:
		distance.EncodeBFloat16(out, v)
	case PQ:
		for j := range c.m {
			distance.L2SquaredBatch(v[j*c.dsub:(j+1)*c.dsub], c.codebook(j), buf)
			best, bd := 0, buf[0]
			for k, d := range buf[1:] {
				if d < bd {
					best, bd = k+1, d
				}
			}
			out[j] = byte(best)
		}
	}
}

// Decode writes the approximate vector of row id into out.
func (c *Store) Decode(id uint32, out []float32) {
	if c.kind == FP32 {
		copy(out, c.vecs[int(id)*c.dim:])
		return
	}
	code := c.data[int(id)*c.size : (int(id)+1)*c.size]
	switch c.kind {
	case SQ8, SQ6:
		for j, b := range code {
			out[j] = c.vmin[j] + c.scale[j]*float32(b)
		}
	case FP16:
		distance.DecodeFloat16(out, code)
	case BF16:
		distance.DecodeBFloat16(out, code)
	case PQ:
		for j, k := range code {
			copy(out[j*c.dsub:(j+1)*c.dsub], c.codebook(j)[int(k)*c.dsub:])
		}
	}
}

// MemoryBytes is the heap memory the store holds.
func (c *Store) MemoryBytes() int64 {
	return int64(cap(c.data)) + 4*int64(cap(c.vecs)+cap(c.vmin)+cap(c.scale)+cap(c.cents))
}

// Query is a query prepared for scoring against a store's codes (see
// Prepare): Dist returns the distance of a row, smaller is better (the
// squared L2 distance, or the negated inner product). A Query is reused
// across searches by one goroutine at a time.
type Query struct {
	c  *Store
	ip bool
	q  []float32 // the (normalised) query
	// SQ: under L2 q - vmin; under IP q*scale, with base = <q, vmin>.
	// PQ: the ksub-entry table of each sub-space, m*ksub floats.
	prep []float32
	base float32
	dec  []float32 // decode buffer (FP16, BF16)
	rows []byte    // gathered SQ codes of distMany
}

// DistMany sets out[i] to the internal distance of row ids[i]. For SQ8
// and SQ6 it gathers the rows' codes and scores them in one call of the
// SIMD row kernel of package ivf; other encodings score row by row.
func (p *Query) DistMany(ids []uint32, out []float32) {
	c := p.c
	if c.kind != SQ8 && c.kind != SQ6 {
		for i, id := range ids {
			out[i] = p.Dist(id)
		}
		return
	}
	n := len(ids) * c.size
	if cap(p.rows) < n {
		p.rows = make([]byte, n)
	}
	rows := p.rows[:n]
	for i, id := range ids {
		copy(rows[i*c.size:(i+1)*c.size], c.data[int(id)*c.size:])
	}
	if p.ip {
		ivf.SQ8Dot(p.prep, rows, out)
		for i, d := range out {
			out[i] = -(p.base + d)
		}
		return
	}
	ivf.SQ8L2(p.prep, c.scale, rows, out)
}

// Prepare makes p score q against c, reusing p's buffers: by negated
// inner product when ip, else by squared L2. p keeps q until the next
// Prepare.
func (p *Query) Prepare(c *Store, q []float32, ip bool) {
	p.c, p.ip, p.q = c, ip, q
	switch c.kind {
	case SQ8, SQ6:
		p.prep = grow(p.prep, c.dim)
		if ip {
			p.base = distance.Dot(q, c.vmin)
			for j, x := range q {
				p.prep[j] = x * c.scale[j]
			}
		} else {
			for j, x := range q {
				p.prep[j] = x - c.vmin[j]
			}
		}
	case FP16, BF16:
		p.dec = grow(p.dec, c.dim)
	case PQ:
		p.prep = grow(p.prep, c.m*c.ksub)
		for j := range c.m {
			qs, tab := q[j*c.dsub:(j+1)*c.dsub], p.prep[j*c.ksub:(j+1)*c.ksub]
			if ip {
				distance.DotBatch(qs, c.codebook(j), tab)
			} else {
				distance.L2SquaredBatch(qs, c.codebook(j), tab)
			}
		}
	}
}

// grow returns b resized to n entries.
func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Dist returns the distance of row id to the prepared query.
func (p *Query) Dist(id uint32) float32 {
	c := p.c
	switch c.kind {
	case FP32:
		o := int(id) * c.dim
		v := c.vecs[o : o+c.dim : o+c.dim]
		if p.ip {
			return -distance.Dot(p.q, v)
		}
		return distance.L2Squared(p.q, v)
	case SQ8, SQ6:
		code := c.data[int(id)*c.size : (int(id)+1)*c.size]
		var out [1]float32
		if p.ip {
			ivf.SQ8Dot(p.prep, code, out[:])
			return -(p.base + out[0])
		}
		ivf.SQ8L2(p.prep, c.scale, code, out[:])
		return out[0]
	case FP16, BF16:
		code := c.data[int(id)*c.size : (int(id)+1)*c.size]
		if c.kind == FP16 {
			distance.DecodeFloat16(p.dec, code)
		} else {
			distance.DecodeBFloat16(p.dec, code)
		}
		if p.ip {
			return -distance.Dot(p.q, p.dec)
		}
		return distance.L2Squared(p.q, p.dec)
	default: // PQ
		code := c.data[int(id)*c.size : (int(id)+1)*c.size]
		s := pqSum(p.prep, c.ksub, code)
		if p.ip {
			return -s
		}
		return s
	}
}

// pqSum returns the sum over sub-spaces j of tab[j*ksub+code[j]].
func pqSum(tab []float32, ksub int, code []byte) float32 {
	var s0, s1 float32
	j := 0
	for ; j+2 <= len(code); j += 2 {
		s0 += tab[j*ksub+int(code[j])]
		s1 += tab[(j+1)*ksub+int(code[j+1])]
	}
	if j < len(code) {
		s0 += tab[j*ksub+int(code[j])]
	}
	return s0 + s1
}

// Encode encodes the rows of vecs into the store on workers goroutines,
// which it starts and joins. It returns ctx.Err() soon after ctx ends.
func (c *Store) Encode(ctx context.Context, vecs []float32, workers int) error {
	n := len(vecs) / c.dim
	c.data = make([]byte, n*c.size)
	const chunk = 1024
	var (
		wg   sync.WaitGroup
		next = make(chan int, (n+chunk-1)/chunk)
	)
	for lo := 0; lo < n; lo += chunk {
		next <- lo
	}
	close(next)
	for range max(1, min(workers, (n+chunk-1)/chunk)) {
		wg.Go(func() {
			buf := make([]float32, c.ksub)
			for lo := range next {
				if ctx.Err() != nil {
					continue
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					c.encode(vecs[i*c.dim:(i+1)*c.dim], c.data[i*c.size:(i+1)*c.size], buf)
				}
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// Kind returns the store's encoding.
func (c *Store) Kind() Kind { return c.kind }

// Size returns the bytes of one row's code (4*dim for FP32).
func (c *Store) Size() int { return c.size }

// Data returns the code bytes of every row (nil for FP32). The caller must
// not modify them.
func (c *Store) Data() []byte { return c.data }

// Vectors returns the float32 vectors of an FP32 store (nil otherwise).
// The caller must not modify them.
func (c *Store) Vectors() []float32 { return c.vecs }

// Adopt makes the FP32 store hold vecs, without copying them; the caller
// must not modify them afterwards.
func (c *Store) Adopt(vecs []float32) { c.vecs = vecs }

// splitmix64 is the mixer that draws PQ's training sample.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
