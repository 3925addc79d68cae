package ivf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"unsafe"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
)

// Index is an inverted-file index over float32 vectors: k-means centroids
// partition the rows into Nlist lists, and a search scans only the lists of
// the centroids nearest to the query. It implements index.Index.
//
// An Index is immutable once built, so every method is safe for concurrent
// use.
type Index struct {
	cfg    Config
	metric index.Metric
	ip     bool // score by negated inner product (IP, COSINE)
	dim    int
	n      int

	// centroids holds Nlist row-major centroids.
	centroids []float32
	// List l holds positions offsets[l] to offsets[l+1]-1; rows[p] is the
	// row number of the vector at position p, ascending within a list.
	offsets []uint32
	rows    []int32

	// vecs holds the n vectors in list order (Flat; unit length for COSINE).
	vecs []float32
	// codes holds the encoded vectors in list order: dim bytes each for
	// SQ8, M bytes each for PQ.
	codes []byte
	// sqMin and sqScale decode SQ8: x[j] = sqMin[j] + code[j]*sqScale[j].
	sqMin, sqScale []float32
	// codebooks holds, for PQ sub-space j, ksub row-major centroids of
	// dsub dimensions at codebooks[j*ksub*dsub:], which quantise residuals
	// (vector minus its list centroid).
	codebooks  []float32
	ksub, dsub int
	// cbT holds the codebooks transposed per sub-space (dimension-major:
	// cbT[j*ksub*dsub + d*ksub + c] is dimension d of codeword c), for
	// pqInner. Derived from codebooks; not serialized.
	cbT []float32
	// cbNorm holds the squared norm of every codeword, M*ksub values.
	// Derived from codebooks; not serialized.
	cbNorm []float32
	// pqPre holds, for an L2 PQ index, the per-list tables of
	// precomputePQ: Nlist blocks of M*ksub values (nil if too large, or
	// under IP). Derived from the centroids and codebooks; not serialized.
	pqPre []float32

	pool sync.Pool // *scratch for searches
}

var _ index.Index = (*Index)(nil)

// newIndex returns an empty index with the derived fields set.
func newIndex(dim int, metric index.Metric, cfg Config) (*Index, error) {
	if !metric.Float() {
		return nil, fmt.Errorf("ivf: invalid metric %v", metric)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.validateDim(dim); err != nil {
		return nil, err
	}
	x := &Index{cfg: cfg, metric: metric, ip: metric != index.L2, dim: dim}
	if cfg.Kind == PQ {
		x.ksub, x.dsub = 1<<cfg.Nbits, dim/cfg.M
	}
	return x, nil
}

// Build returns an index over vectors, which holds len(vectors)/dim
// row-major vectors of dimension dim; row i is vectors[i*dim:(i+1)*dim].
// It trains the coarse centroids (and for SQ8 the per-dimension ranges, for
// PQ the codebooks) on a random sample of at most
// cfg.MaxPointsPerCentroid rows per centroid, then assigns and encodes every
// row on cfg.Workers goroutines. The index copies what it keeps. A build
// stops soon after ctx ends and returns ctx.Err().
func Build(ctx context.Context, vectors []float32, dim int, metric index.Metric, cfg Config) (*Index, error) {
	return build(ctx, vectors, dim, metric, cfg, lloyd{stop: stopFraction, seedRows: seedPointsPerCentroid})
}

// build is Build with the stopping rule and seeding sample of the coarse
// k-means given by opt (its labels field is set here).
func build(ctx context.Context, vectors []float32, dim int, metric index.Metric, cfg Config, opt lloyd) (*Index, error) {
	x, err := newIndex(dim, metric, cfg)
	if err != nil {
		return nil, err
	}
	if len(vectors)%dim != 0 {
		return nil, fmt.Errorf("ivf: vector data length %d is not a multiple of dim %d", len(vectors), dim)
	}
	n := len(vectors) / dim
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("ivf: %d rows exceed %d", n, math.MaxInt32)
	}
	x.n = n
	workers := workerCount(cfg.Workers)
	data := vectors
	if metric == index.Cosine {
		data = append([]float32(nil), vectors...)
		parallelFor(ctx, n, workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				normalize(data[i*dim : (i+1)*dim])
			}
		})
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x1bf5_8fe3_d2c1_a06b))

	// Coarse quantizer.
	// When the sample is every row, k-means trains on data itself and
	// returns the rows' nearest centroids, which under L2 are their lists.
	sample := sampleRows(n, cfg.MaxPointsPerCentroid*cfg.Nlist, rng)
	all := len(sample) == n
	train := data
	if !all {
		train = gather(data, dim, sample)
	}
	opt.labels = all && !x.ip
	var labels []int32
	if x.centroids, labels, err = kmeans(ctx, train, dim, cfg.Nlist, cfg, opt, rng); err != nil {
		return nil, err
	}
	// Rows join the list whose centroid scores best under the metric, the
	// criterion Search ranks lists by (as faiss does for inner product).
	switch {
	case labels != nil:
	case x.ip:
		labels = assignIP(ctx, data, dim, x.centroids, workers)
	default:
		labels = assign(ctx, data, dim, x.centroids, workers)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.group(labels)

	switch cfg.Kind {
	case Flat:
		x.vecs = make([]float32, n*dim)
		parallelFor(ctx, n, workers, func(lo, hi int) {
			for p := lo; p < hi; p++ {
				r := int(x.rows[p])
				copy(x.vecs[p*dim:(p+1)*dim], data[r*dim:(r+1)*dim])
			}
		})
	case SQ8:
		x.trainSQ(train)
		x.codes = make([]byte, n*dim)
		parallelFor(ctx, n, workers, func(lo, hi int) {
			for p := lo; p < hi; p++ {
				r := int(x.rows[p])
				x.encodeSQ(data[r*dim:(r+1)*dim], x.codes[p*dim:(p+1)*dim])
			}
		})
	case PQ:
		m := cfg.M
		pqSample := sampleRows(n, cfg.MaxPointsPerCentroid*x.ksub, rng)
		resid := make([]float32, len(pqSample)*dim)
		for i, r := range pqSample {
			residual(data[r*dim:(r+1)*dim], x.centroid(int(labels[r])), resid[i*dim:(i+1)*dim])
		}
		if err := x.trainPQ(ctx, resid, rng); err != nil {
			return nil, err
		}
		x.codes = make([]byte, n*m)
		parallelFor(ctx, n, workers, func(lo, hi int) {
			res := make([]float32, dim)
			buf := make([]float32, x.ksub)
			for p := lo; p < hi; p++ {
				r := int(x.rows[p])
				residual(data[r*dim:(r+1)*dim], x.centroid(int(labels[r])), res)
				x.encodePQ(res, x.codes[p*m:(p+1)*m], buf)
			}
		})
		x.derivePQ()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return x, nil
}

// group sorts the rows into lists by label with a counting sort, keeping
// row order within each list.
func (x *Index) group(labels []int32) {
	nlist := x.cfg.Nlist
	x.offsets = make([]uint32, nlist+1)
	for _, l := range labels {
		x.offsets[l+1]++
	}
	for l := range nlist {
		x.offsets[l+1] += x.offsets[l]
	}
	next := append([]uint32(nil), x.offsets[:nlist]...)
	x.rows = make([]int32, len(labels))
	for r, l := range labels {
		x.rows[next[l]] = int32(r)
		next[l]++
	}
}

// gather copies the rows idx of data into a new row-major slice.
func gather(data []float32, dim int, idx []int) []float32 {
	out := make([]float32, len(idx)*dim)
	for i, r := range idx {
		copy(out[i*dim:(i+1)*dim], data[r*dim:(r+1)*dim])
	}
	return out
}

// residual writes v - c to out.
func residual(v, c, out []float32) {
	for j := range out {
		out[j] = v[j] - c[j]
	}
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) {
	nrm := distance.Norm(v)
	if nrm == 0 || nrm == 1 {
		return
	}
	inv := 1 / nrm
	for i := range v {
		v[i] *= inv
	}
}

// centroid returns the centroid of list l.
func (x *Index) centroid(l int) []float32 {
	return x.centroids[l*x.dim : (l+1)*x.dim : (l+1)*x.dim]
}

// Len returns the number of indexed vectors.
func (x *Index) Len() int { return x.n }

// Dim returns the vector dimension.
func (x *Index) Dim() int { return x.dim }

// Metric returns the metric the index was built for.
func (x *Index) Metric() index.Metric { return x.metric }

// Config returns the build parameters.
func (x *Index) Config() Config { return x.cfg }

// Kind returns the list encoding.
func (x *Index) Kind() Kind { return x.cfg.Kind }

// ListSizes returns the number of rows in each inverted list.
func (x *Index) ListSizes() []int {
	out := make([]int, x.cfg.Nlist)
	for l := range out {
		out[l] = int(x.offsets[l+1] - x.offsets[l])
	}
	return out
}

// MemoryBytes estimates the heap memory held by the index.
func (x *Index) MemoryBytes() int64 {
	b := int64(cap(x.centroids))*4 + int64(cap(x.offsets))*4 + int64(cap(x.rows))*4 +
		int64(cap(x.vecs))*4 + int64(cap(x.codes)) + int64(cap(x.sqMin))*4 +
		int64(cap(x.sqScale))*4 + int64(cap(x.codebooks))*4 + int64(cap(x.cbT))*4 + int64(cap(x.cbNorm))*4 + int64(cap(x.pqPre))*4
	return b + int64(unsafe.Sizeof(*x))
}
