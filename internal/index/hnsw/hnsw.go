package hnsw

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/quant"
)

// maxLevelCap bounds node levels so that they fit the one-byte level field
// of the serialized format. With M >= 2 a level above 60 has probability
// below 1e-18 per node, so the cap never bites in practice.
const maxLevelCap = 255

// Index is an HNSW graph over float32 vectors. It implements index.Index.
//
// Search, Len, MemoryBytes and Marshal may run concurrently with each other;
// Add excludes them while it inserts (it parallelises internally).
type Index struct {
	// mu is held for writing by Add and for reading by everything else.
	mu sync.RWMutex

	metric index.Metric
	ip     bool // score by negated inner product (IP, COSINE)
	dim    int
	cfg    Config
	maxM   int     // link capacity on layers >= 1
	maxM0  int     // link capacity on layer 0
	mL     float64 // level multiplier 1/ln(M)

	n      int
	vecs   []float32 // n*dim, row-major; normalised for COSINE
	levels []uint8   // top layer of each node

	// links0 holds layer 0: node i owns links0[i*(maxM0+1):][:maxM0+1],
	// a count followed by up to maxM0 neighbour ids.
	links0 []uint32
	// upper holds layers >= 1: node i with levels[i] > 0 owns levels[i]
	// consecutive blocks of maxM+1 words (count, then ids) starting at
	// upperOff[i], one block per layer 1..levels[i].
	upper    []uint32
	upperOff []int

	entry    int32 // entry point, -1 while empty
	maxLevel int   // levels[entry]

	// qz, when set, holds the quantized vectors the graph is searched
	// with, and vecs is nil (see Config.Quant); rf, when set, is the
	// refine store a search re-ranks its candidates with.
	qz, rf *quant.Store

	// Build-time state, only used inside Add.
	locks   []sync.Mutex // one per node
	entryMu sync.Mutex   // guards entry and maxLevel during Add

	pool sync.Pool // *scratch for searches
}

var (
	_ index.Index      = (*Index)(nil)
	_ index.RawVectors = (*Index)(nil)
)

// New returns an empty index for vectors of dimension dim.
func New(dim int, metric index.Metric, cfg Config) (*Index, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("hnsw: dim(%d) must be positive", dim)
	}
	if !metric.Float() {
		return nil, fmt.Errorf("hnsw: invalid metric %v", metric)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Quant.validate(dim); err != nil {
		return nil, err
	}
	x := &Index{
		metric: metric,
		ip:     metric != index.L2,
		dim:    dim,
		cfg:    cfg,
		maxM:   cfg.M,
		maxM0:  2 * cfg.M,
		mL:     1 / math.Log(float64(cfg.M)),
		entry:  -1,
	}
	return x, nil
}

// Build returns an index over vectors, which holds len(vectors)/dim
// row-major vectors of dimension dim; row i is vectors[i*dim:(i+1)*dim].
// The index copies the data. A build stops soon after ctx ends (within
// checkEvery inserts per worker) and returns ctx.Err().
func Build(ctx context.Context, vectors []float32, dim int, metric index.Metric, cfg Config) (*Index, error) {
	x, err := New(dim, metric, cfg)
	if err != nil {
		return nil, err
	}
	if err := x.Add(ctx, vectors); err != nil {
		return nil, err
	}
	if cfg.Quant.Kind != quant.FP32 {
		if err := x.quantize(ctx); err != nil {
			return nil, err
		}
	}
	x.adviseHuge()
	return x, nil
}

// adviseHuge asks for huge pages under the arrays a search reads at
// random: the vectors and the layer-0 link blocks.
func (x *Index) adviseHuge() {
	adviseHuge(x.vecs)
	adviseHuge(x.links0)
}

// Len returns the number of indexed vectors.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Dim returns the vector dimension.
func (x *Index) Dim() int { return x.dim }

// Metric returns the metric the index was built for.
func (x *Index) Metric() index.Metric { return x.metric }

// Config returns the build parameters.
func (x *Index) Config() Config { return x.cfg }

// MemoryBytes estimates the heap memory held by the index.
func (x *Index) MemoryBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	b := int64(cap(x.vecs))*4 + int64(cap(x.levels)) + int64(cap(x.links0))*4 +
		int64(cap(x.upper))*4 + int64(cap(x.upperOff))*8 +
		int64(cap(x.locks))*int64(unsafe.Sizeof(sync.Mutex{}))
	if x.qz != nil {
		b += x.qz.MemoryBytes()
	}
	if x.rf != nil {
		b += x.rf.MemoryBytes()
	}
	return b + int64(unsafe.Sizeof(*x))
}

// RawVectors implements index.RawVectors: the stored vectors, which are
// the vectors given to Add bit for bit except under COSINE (normalised to
// unit length; then nil). A quantized index returns its FP32 refine store,
// the only exact copy it keeps, or nil without one.
func (x *Index) RawVectors() []float32 {
	if x.metric == index.Cosine {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.n * x.dim
	if x.qz != nil {
		if x.rf == nil || x.rf.Kind() != quant.FP32 {
			return nil
		}
		return x.rf.Vectors()[:n:n]
	}
	return x.vecs[:n:n]
}

// vec returns the stored vector of node id.
func (x *Index) vec(id uint32) []float32 {
	o := int(id) * x.dim
	return x.vecs[o : o+x.dim : o+x.dim]
}

// block returns the link block (count, then ids) of node id on layer l.
func (x *Index) block(id uint32, l int) []uint32 {
	if l == 0 {
		o := int(id) * (x.maxM0 + 1)
		return x.links0[o : o+x.maxM0+1]
	}
	o := x.upperOff[id] + (l-1)*(x.maxM+1)
	return x.upper[o : o+x.maxM+1]
}

// dist is the internal distance: smaller is better for every metric.
func (x *Index) dist(a, b []float32) float32 {
	if x.ip {
		return -distance.Dot(a, b)
	}
	return distance.L2Squared(a, b)
}

// score converts an internal distance into the score Milvus reports.
func (x *Index) score(d float32) float32 {
	if x.ip {
		return -d
	}
	return d
}

// levelFor draws the level of node id from the exponentially decaying
// distribution floor(-ln(U)*mL), with U derived from a hash of the seed and
// the id so that levels do not depend on how rows are batched into Add.
func (x *Index) levelFor(id int) int {
	h := splitmix64(x.cfg.Seed ^ (uint64(id) * 0x9e3779b97f4a7c15))
	u := (float64(h>>11) + 1) / (1 << 53) // (0, 1]
	l := int(-math.Log(u) * x.mL)
	return min(l, maxLevelCap)
}

func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// checkEvery is how many inserts a build worker makes between two checks of
// its context: a check is a few nanoseconds, an insert microseconds to
// milliseconds, so cancellation is prompt at no measurable cost.
const checkEvery = 64

// Add inserts len(vectors)/dim vectors as rows Len(), Len()+1, ... using
// Config.Workers goroutines. It blocks searches while it runs.
//
// Add stops soon after ctx ends and returns ctx.Err(); the index is then
// partially built (some new rows are unlinked) and must be discarded.
func (x *Index) Add(ctx context.Context, vectors []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if x.qz != nil {
		return fmt.Errorf("hnsw: a quantized index cannot take more rows")
	}
	if len(vectors)%x.dim != 0 {
		return fmt.Errorf("hnsw: vector data length %d is not a multiple of dim %d", len(vectors), x.dim)
	}
	cnt := len(vectors) / x.dim
	if cnt == 0 {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.n+cnt > math.MaxInt32 {
		return fmt.Errorf("hnsw: index would exceed %d rows", math.MaxInt32)
	}
	first := x.n
	x.grow(vectors, cnt)

	workers := x.cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, cnt)
	if workers <= 1 {
		s := newScratch()
		for id := first; id < x.n; id++ {
			if (id-first)%checkEvery == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			x.insert(uint32(id), s)
		}
		x.linkOrphans()
		return nil
	}
	// The first node of an empty index becomes the entry point; insert it
	// before fanning out so that every worker has a graph to search.
	start := first
	if x.entry < 0 {
		x.insert(uint32(first), newScratch())
		start++
	}
	var next atomic.Int64
	next.Store(int64(start))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := newScratch()
			for i := 0; ; i++ {
				if i%checkEvery == 0 && ctx.Err() != nil {
					return
				}
				id := next.Add(1) - 1
				if id >= int64(x.n) {
					return
				}
				x.insert(uint32(id), s)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	x.linkOrphans()
	return nil
}

// linkOrphans gives every node that no other node links to on layer 0 an
// incoming link from its nearest out-neighbour. Insertion can leave such
// nodes, concurrent insertion more often: typically one of several exact
// duplicates, of which the neighbour heuristic lets a node keep only one.
// A node nobody links to is never returned by a search, not even for its
// own vector. The new link takes a free slot or replaces the neighbour's
// farthest link whose target has other incoming links. The caller holds
// x.mu and no insertion runs.
func (x *Index) linkOrphans() {
	in := make([]int32, x.n)
	for id := range x.n {
		b := x.block(uint32(id), 0)
		for _, t := range b[1 : 1+b[0]] {
			in[t]++
		}
	}
	for id := range x.n {
		b := x.block(uint32(id), 0)
		cnt := int(b[0])
		if in[id] > 0 || int32(id) == x.entry || cnt == 0 {
			continue
		}
		v := x.vec(uint32(id))
		near, nd := b[1], x.dist(v, x.vec(b[1]))
		for _, t := range b[2 : 1+cnt] {
			if d := x.dist(v, x.vec(t)); d < nd {
				near, nd = t, d
			}
		}
		nb := x.block(near, 0)
		if nc := int(nb[0]); nc < x.maxM0 {
			nb[1+nc] = uint32(id)
			nb[0]++
			in[id]++
			continue
		}
		nv := x.vec(near)
		slot, far := -1, float32(math.Inf(-1))
		for j, t := range nb[1 : 1+nb[0]] {
			if in[t] > 1 {
				if d := x.dist(nv, x.vec(t)); d > far {
					slot, far = j, d
				}
			}
		}
		if slot >= 0 {
			in[nb[1+slot]]--
			nb[1+slot] = uint32(id)
			in[id]++
		}
	}
}

// grow appends cnt vectors with their levels and empty link blocks.
func (x *Index) grow(vectors []float32, cnt int) {
	first := x.n
	x.n += cnt
	x.vecs = append(x.vecs, vectors...)
	if x.metric == index.Cosine {
		for id := first; id < x.n; id++ {
			normalize(x.vec(uint32(id)))
		}
	}
	x.links0 = append(x.links0, make([]uint32, cnt*(x.maxM0+1))...)
	upperWords := 0
	for id := first; id < x.n; id++ {
		l := x.levelFor(id)
		x.levels = append(x.levels, uint8(l))
		x.upperOff = append(x.upperOff, len(x.upper)+upperWords)
		upperWords += l * (x.maxM + 1)
	}
	x.upper = append(x.upper, make([]uint32, upperWords)...)
	if len(x.locks) < x.n {
		// Every lock is free outside Add, so fresh ones can replace them.
		x.locks = make([]sync.Mutex, x.n+x.n/2)
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

// Neighbors appends the bottom-layer (layer 0) neighbours of node id to
// dst and returns it: the links a single-layer graph index (DISKANN) takes
// from an HNSW build. id must be below Len().
func (x *Index) Neighbors(dst []uint32, id uint32) []uint32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	b := x.block(id, 0)
	return append(dst, b[1:1+b[0]]...)
}
