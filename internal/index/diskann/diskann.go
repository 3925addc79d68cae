package diskann

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/index/quant"
)

// pqNbits is the width of a PQ code: 256 codewords a sub-space.
const pqNbits = 8

// ErrCorrupt is wrapped by every error about a malformed index file.
var ErrCorrupt = errors.New("diskann: corrupt index file")

// records reads node records by position: the index file (loaded) or
// the built graph (before it is written).
type records interface {
	io.ReaderAt
}

// Index is a DISKANN index. It implements index.Index. A built index holds
// its vectors and graph in memory until it is written; a loaded one (Open)
// holds only the PQ codebooks and codes and reads node records from its
// file. Search, Len, MemoryBytes and Marshal are safe for concurrent use.
type Index struct {
	metric    index.Metric
	ip        bool // score by negated inner product (IP, COSINE)
	dim       int
	n         int
	maxDegree int
	recSize   int
	medoid    uint32
	pq        *quant.Store

	src records // node records, record i at offset recOff+i*recSize of src
	// recOff is the records' offset in src.
	recOff int64

	// Built indexes only: the (normalised) vectors and the adjacency,
	// node i's neighbours at adj[i*maxDegree:][:deg[i]].
	vecs []float32
	adj  []uint32
	deg  []uint32

	pool sync.Pool // *scratch
}

var _ index.Index = (*Index)(nil)

// recordSize returns the size of the record of a node of dimension dim
// with maxDegree neighbour slots (see the package documentation).
func recordSize(dim, maxDegree int) int {
	raw := 4*dim + 4 + 4*maxDegree
	if raw > 4096 {
		return (raw + 4095) &^ 4095
	}
	r := 512
	for r < raw {
		r *= 2
	}
	return r
}

// Build returns an index over vectors, which holds len(vectors)/dim
// row-major vectors of dimension dim. It copies the data. A build stops
// soon after ctx ends and returns ctx.Err().
func Build(ctx context.Context, vectors []float32, dim int, metric index.Metric, cfg Config) (*Index, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("diskann: dim(%d) must be positive", dim)
	}
	if !metric.Float() {
		return nil, fmt.Errorf("diskann: invalid metric %v", metric)
	}
	if len(vectors)%dim != 0 {
		return nil, fmt.Errorf("diskann: %d floats are not a whole number of %d-dimensional vectors", len(vectors), dim)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := len(vectors) / dim
	if n > math.MaxUint32 {
		return nil, fmt.Errorf("diskann: %d rows exceed the format's limit", n)
	}
	vecs := slices.Clone(vectors)
	graphMetric := metric
	if metric == index.Cosine {
		for i := range n {
			normalize(vecs[i*dim : (i+1)*dim])
		}
		graphMetric = index.IP
	}
	x := &Index{
		metric: metric, ip: metric != index.L2, dim: dim, n: n,
		maxDegree: cfg.MaxDegree, recSize: recordSize(dim, cfg.MaxDegree), vecs: vecs,
	}
	m := PQSubspaces(dim, cfg.PQCodeBudgetRatio)
	x.pq = quant.New(quant.PQ, dim, m, pqNbits)
	if err := x.pq.Train(ctx, vecs, cfg.Workers, cfg.Seed); err != nil {
		return nil, err
	}
	if err := x.pq.Encode(ctx, vecs, cfg.Workers); err != nil {
		return nil, err
	}
	if err := x.buildGraph(ctx, graphMetric, cfg); err != nil {
		return nil, err
	}
	x.medoid = medoid(vecs, dim)
	x.src = builtRecords{x}
	return x, nil
}

// buildGraph builds an HNSW graph over x.vecs and keeps its bottom layer,
// pruned to the maxDegree closest links of each node.
func (x *Index) buildGraph(ctx context.Context, metric index.Metric, cfg Config) error {
	x.adj = make([]uint32, x.n*x.maxDegree)
	x.deg = make([]uint32, x.n)
	if x.n == 0 {
		return nil
	}
	h, err := hnsw.Build(ctx, x.vecs, x.dim, metric, hnsw.Config{
		M: max(hnsw.MinM, (x.maxDegree+1)/2), EfConstruction: cfg.SearchListSize,
		Seed: cfg.Seed, Workers: cfg.Workers,
	})
	if err != nil {
		return err
	}
	type link struct {
		id uint32
		d  float32
	}
	var (
		nb    []uint32
		links []link
	)
	for i := range x.n {
		nb = h.Neighbors(nb[:0], uint32(i))
		if len(nb) > x.maxDegree {
			links = links[:0]
			v := x.vec(uint32(i))
			for _, id := range nb {
				links = append(links, link{id, x.dist(v, x.vec(id))})
			}
			slices.SortFunc(links, func(a, b link) int {
				if a.d != b.d {
					if a.d < b.d {
						return -1
					}
					return 1
				}
				return int(a.id) - int(b.id)
			})
			nb = nb[:x.maxDegree]
			for j := range nb {
				nb[j] = links[j].id
			}
		}
		copy(x.adj[i*x.maxDegree:], nb)
		x.deg[i] = uint32(len(nb))
	}
	return ctx.Err()
}

// medoid returns the row closest (L2) to the mean of the n rows of vecs.
func medoid(vecs []float32, dim int) uint32 {
	n := len(vecs) / dim
	if n == 0 {
		return 0
	}
	mean := make([]float64, dim)
	for i := range n {
		for j, v := range vecs[i*dim : (i+1)*dim] {
			mean[j] += float64(v)
		}
	}
	c := make([]float32, dim)
	for j := range c {
		c[j] = float32(mean[j] / float64(n))
	}
	best, bd := 0, float32(math.Inf(1))
	for i := range n {
		if d := distance.L2Squared(c, vecs[i*dim:(i+1)*dim]); d < bd {
			best, bd = i, d
		}
	}
	return uint32(best)
}

// normalize scales v to unit length (a zero vector stays zero).
func normalize(v []float32) {
	s := float32(math.Sqrt(float64(distance.Dot(v, v))))
	if s == 0 {
		return
	}
	for i := range v {
		v[i] /= s
	}
}

// vec returns the vector of node id of a built index.
func (x *Index) vec(id uint32) []float32 {
	o := int(id) * x.dim
	return x.vecs[o : o+x.dim : o+x.dim]
}

// dist is the internal distance: smaller is better for every metric.
func (x *Index) dist(a, b []float32) float32 {
	if x.ip {
		return -distance.Dot(a, b)
	}
	return distance.L2Squared(a, b)
}

// Len returns the number of indexed rows.
func (x *Index) Len() int { return x.n }

// Dim returns the vectors' dimension.
func (x *Index) Dim() int { return x.dim }

// Metric returns the index's metric.
func (x *Index) Metric() index.Metric { return x.metric }

// MaxDegree returns the most neighbours a node keeps.
func (x *Index) MaxDegree() int { return x.maxDegree }

// PQSubspaces returns the number of PQ sub-spaces: the code bytes a row.
func (x *Index) PQSubspaces() int { return x.pq.Size() }

// MemoryBytes estimates the heap memory the index holds: for a loaded
// index the PQ codebooks and codes (the records stay in the file).
func (x *Index) MemoryBytes() int64 {
	return x.pq.MemoryBytes() + 4*int64(cap(x.vecs)+cap(x.adj)+cap(x.deg)) + int64(unsafe.Sizeof(*x))
}

// DiskBytes returns the bytes of node records the index reads from its
// file.
func (x *Index) DiskBytes() int64 { return int64(x.n) * int64(x.recSize) }

// builtRecords serves the records of a built index from its memory, as
// the file will hold them.
type builtRecords struct{ x *Index }

// ReadAt encodes the records that p spans from offset off.
func (b builtRecords) ReadAt(p []byte, off int64) (int, error) {
	x := b.x
	rs := int64(x.recSize)
	if off < 0 || off%rs != 0 || len(p)%x.recSize != 0 || off/rs+int64(len(p)/x.recSize) > int64(x.n) {
		return 0, fmt.Errorf("diskann: read of %d bytes at %d is not a run of records", len(p), off)
	}
	for i := range len(p) / x.recSize {
		x.encodeRecord(uint32(off/rs)+uint32(i), p[i*x.recSize:(i+1)*x.recSize])
	}
	return len(p), nil
}

// encodeRecord writes the record of node id of a built index into rec
// (recSize bytes).
func (x *Index) encodeRecord(id uint32, rec []byte) {
	clear(rec)
	for j, v := range x.vec(id) {
		putU32(rec[4*j:], math.Float32bits(v))
	}
	o := 4 * x.dim
	putU32(rec[o:], x.deg[id])
	for j, nb := range x.adj[int(id)*x.maxDegree : int(id)*x.maxDegree+int(x.deg[id])] {
		putU32(rec[o+4+4*j:], nb)
	}
}

// putU32 stores v little-endian in b.
func putU32(b []byte, v uint32) {
	_ = b[3]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// getU32 loads a little-endian uint32 from b.
func getU32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
