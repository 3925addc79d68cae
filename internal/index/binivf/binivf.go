package binivf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
)

// Parameter bounds and defaults, as Milvus has them for BIN_IVF_FLAT.
const (
	// MinNlist and MaxNlist bound Config.Nlist.
	MinNlist, MaxNlist = 1, 65536
	// DefaultNlist is the number of lists when the parameters name none.
	DefaultNlist = 128
	// DefaultNprobe is the number of lists probed when SearchParams.Nprobe
	// is 0 (at most nlist).
	DefaultNprobe = 8
	// iterations is the number of k-majority rounds.
	iterations = 10
	// pointsPerList bounds the training sample at pointsPerList*nlist rows.
	pointsPerList = 256
)

// Config holds the build parameters.
type Config struct {
	// Nlist is the number of inverted lists, in [MinNlist, MaxNlist].
	Nlist int
	// Seed seeds sampling and initialisation; equal data, Config and seed
	// give identical indexes.
	Seed uint64
}

// Defaults returns the default Config: nlist 128, seed 42.
func Defaults() Config { return Config{Nlist: DefaultNlist, Seed: 42} }

// Validate checks the parameters.
func (c Config) Validate() error {
	if c.Nlist < MinNlist || c.Nlist > MaxNlist {
		return fmt.Errorf("binivf: nlist(%d) out of range [%d, %d]", c.Nlist, MinNlist, MaxNlist)
	}
	return nil
}

// ParseParams returns the Config for Milvus index parameters given as
// strings ("nlist"), starting from Defaults. Unknown keys are ignored.
func ParseParams(params map[string]string) (Config, error) {
	cfg := Defaults()
	if v, ok := params["nlist"]; ok {
		n, err := index.IntParam("nlist", v)
		if err != nil {
			return Config{}, fmt.Errorf("binivf: %w", err)
		}
		cfg.Nlist = n
	}
	return cfg, cfg.Validate()
}

// Index is a BIN_IVF_FLAT index. It is immutable once built, so every
// method is safe for concurrent use. It implements index.BinaryIndex.
type Index struct {
	cfg    Config
	metric index.Metric
	dim    int // bits
	width  int // bytes a row
	n      int

	centroids []byte   // nlist packed centroids
	offsets   []uint32 // list l holds positions offsets[l] .. offsets[l+1]-1
	rows      []int32  // row number of each position
	vecs      []byte   // row vectors in position order

	pool sync.Pool // *scratch
}

var _ index.BinaryIndex = (*Index)(nil)

// newIndex checks the shape and returns an empty index.
func newIndex(dim int, metric index.Metric, cfg Config) (*Index, error) {
	if !metric.Binary() {
		return nil, fmt.Errorf("binivf: metric %v is not a binary metric (HAMMING or JACCARD)", metric)
	}
	if dim <= 0 || dim%8 != 0 {
		return nil, fmt.Errorf("binivf: dim(%d) must be a positive multiple of 8", dim)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Index{cfg: cfg, metric: metric, dim: dim, width: dim / 8}, nil
}

// Build returns an index over vectors, which holds len(vectors)/(dim/8)
// packed rows of dim bits; row i is vectors[i*dim/8:(i+1)*dim/8]. The index
// copies what it keeps. A build stops soon after ctx ends (at the next
// training iteration or assignment pass) and returns ctx.Err().
func Build(ctx context.Context, vectors []byte, dim int, metric index.Metric, cfg Config) (*Index, error) {
	x, err := newIndex(dim, metric, cfg)
	if err != nil {
		return nil, err
	}
	w := x.width
	if len(vectors)%w != 0 {
		return nil, fmt.Errorf("binivf: vector data length %d is not a multiple of %d bytes", len(vectors), w)
	}
	n := len(vectors) / w
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("binivf: %d rows exceed %d", n, math.MaxInt32)
	}
	x.n = n
	nlist := cfg.Nlist
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5bd1_e995_9e37_79b9))
	sample := sampleRows(n, pointsPerList*nlist, rng)
	train := make([]byte, len(sample)*w)
	for i, r := range sample {
		copy(train[i*w:], vectors[r*w:(r+1)*w])
	}
	if x.centroids, err = x.train(ctx, train, rng); err != nil {
		return nil, err
	}
	labels := make([]int32, n)
	parallelFor(n, func(lo, hi int) {
		buf := make([]float32, nlist)
		for i := lo; i < hi; i++ {
			labels[i] = x.nearest(vectors[i*w:(i+1)*w], buf)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.offsets = make([]uint32, nlist+1)
	for _, l := range labels {
		x.offsets[l+1]++
	}
	for l := range nlist {
		x.offsets[l+1] += x.offsets[l]
	}
	next := append([]uint32(nil), x.offsets[:nlist]...)
	x.rows = make([]int32, n)
	x.vecs = make([]byte, n*w)
	for r, l := range labels {
		p := next[l]
		x.rows[p] = int32(r)
		copy(x.vecs[int(p)*w:], vectors[r*w:(r+1)*w])
		next[l]++
	}
	return x, nil
}

// dist is the metric between two packed vectors; smaller is better.
func (x *Index) dist(a, b []byte) float32 {
	if x.metric == index.Jaccard {
		return distance.Jaccard(a, b)
	}
	return float32(distance.Hamming(a, b))
}

// distBatch fills out[i] with the metric between q and row i of data.
func (x *Index) distBatch(q, data []byte, out []float32) {
	if x.metric == index.Jaccard {
		distance.JaccardBatch(q, data, out)
		return
	}
	distance.HammingBatch(q, data, out)
}

// nearest returns the list whose centroid is nearest to v, the lowest on
// ties; buf is scratch of nlist entries.
func (x *Index) nearest(v []byte, buf []float32) int32 {
	x.distBatch(v, x.centroids, buf)
	best, bestD := int32(0), float32(math.Inf(1))
	for l, d := range buf {
		if d < bestD {
			best, bestD = int32(l), d
		}
	}
	return best
}

// train runs k-majority clustering over the packed sample and returns the
// nlist centroids. With fewer sample rows than lists, rows repeat and the
// extra lists stay empty. It returns ctx.Err() soon after ctx ends.
func (x *Index) train(ctx context.Context, sample []byte, rng *rand.Rand) ([]byte, error) {
	w, nlist := x.width, x.cfg.Nlist
	m := len(sample) / w
	cent := make([]byte, nlist*w)
	if m == 0 {
		return cent, nil
	}
	perm := rng.Perm(m)
	for l := range nlist {
		r := perm[l%m]
		copy(cent[l*w:], sample[r*w:(r+1)*w])
	}
	x.centroids = cent
	labels := make([]int32, m)
	counts := make([]int32, nlist*x.dim)
	sizes := make([]int32, nlist)
	for range iterations {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		parallelFor(m, func(lo, hi int) {
			buf := make([]float32, nlist)
			for i := lo; i < hi; i++ {
				labels[i] = x.nearest(sample[i*w:(i+1)*w], buf)
			}
		})
		clear(counts)
		clear(sizes)
		for i, l := range labels {
			sizes[l]++
			c := counts[int(l)*x.dim:]
			for j, b := range sample[i*w : (i+1)*w] {
				for bit := range 8 {
					c[j*8+bit] += int32(b >> bit & 1)
				}
			}
		}
		next := make([]byte, len(cent))
		for l := range nlist {
			if sizes[l] == 0 {
				r := rng.IntN(m)
				copy(next[l*w:], sample[r*w:(r+1)*w])
				continue
			}
			c := counts[l*x.dim:]
			for j := range w {
				var b byte
				for bit := range 8 {
					switch v := 2 * c[j*8+bit]; {
					case v > sizes[l]:
						b |= 1 << bit
					case v == sizes[l]:
						b |= cent[l*w+j] & (1 << bit)
					}
				}
				next[l*w+j] = b
			}
		}
		cent = next
		x.centroids = cent
	}
	return cent, nil
}

// Len returns the number of indexed rows.
func (x *Index) Len() int { return x.n }

// Dim returns the dimension in bits.
func (x *Index) Dim() int { return x.dim }

// Metric returns the metric the index was built for.
func (x *Index) Metric() index.Metric { return x.metric }

// Config returns the build parameters.
func (x *Index) Config() Config { return x.cfg }

// MemoryBytes estimates the bytes the index holds.
func (x *Index) MemoryBytes() int64 {
	return int64(len(x.centroids) + 4*len(x.offsets) + 4*len(x.rows) + len(x.vecs))
}

// sampleRows returns min(n, limit) distinct row numbers drawn by rng, all
// rows when n <= limit.
func sampleRows(n, limit int, rng *rand.Rand) []int {
	if n <= limit {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := rng.Perm(n)[:limit]
	return out
}

// parallelFor calls fn over [0, n) split into contiguous chunks on up to
// GOMAXPROCS goroutines, and waits for them.
func parallelFor(n int, fn func(lo, hi int)) {
	const minChunk = 512
	workers := runtime.GOMAXPROCS(0)
	chunks := min(workers, (n+minChunk-1)/minChunk)
	if chunks <= 1 {
		fn(0, n)
		return
	}
	size := (n + chunks - 1) / chunks
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += size {
		wg.Go(func() { fn(lo, min(lo+size, n)) })
	}
	wg.Wait()
}
