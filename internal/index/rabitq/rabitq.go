package rabitq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/ivf"
	"github.com/strata-db/strata/internal/index/quant"
	"github.com/strata-db/strata/internal/index/topk"
)

// Parameter limits and defaults, as Milvus (knowhere) sets them for
// IVF_RABITQ.
const (
	// MinNlist and MaxNlist bound Config.Nlist.
	MinNlist, MaxNlist = 1, 65536
	// DefaultNlist is the default number of inverted lists.
	DefaultNlist = 128
	// DefaultNprobe is the number of lists a search scans when
	// SearchParams.Nprobe is 0 (capped at Nlist).
	DefaultNprobe = 8
	// MaxQueryBits bounds rbq_bits_query, SearchParams.QueryBits.
	MaxQueryBits = 8
	// kmeansIterations is the number of Lloyd iterations of the coarse
	// quantizer.
	kmeansIterations = 20
	// trainPerList bounds the k-means sample at trainPerList*Nlist rows.
	trainPerList = 256
)

// Config holds the build parameters of an index.
type Config struct {
	// Nlist is the number of inverted lists; Milvus accepts [1, 65536].
	Nlist int
	// Refine keeps a second copy of the vectors, encoded as RefineType, to
	// re-rank the best refine_k*k candidates with.
	Refine bool
	// RefineType is the refine store's encoding: FP32, FP16, BF16, SQ8 or
	// SQ6.
	RefineType quant.Kind
	// Seed seeds the k-means sample and the random rotation.
	Seed uint64
	// Workers is the number of goroutines of k-means and encoding; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
}

// Defaults returns the Milvus defaults: nlist 128, no refine (FP32 when
// refine is turned on), seed 42, all cores.
func Defaults() Config { return Config{Nlist: DefaultNlist, RefineType: quant.FP32, Seed: 42} }

// Validate checks c against the Milvus limits.
func (c Config) Validate() error {
	var errs []error
	if c.Nlist < MinNlist || c.Nlist > MaxNlist {
		errs = append(errs, fmt.Errorf("rabitq: param 'nlist' (%d) should be in range [%d, %d]", c.Nlist, MinNlist, MaxNlist))
	}
	if c.RefineType > quant.BF16 {
		errs = append(errs, fmt.Errorf("rabitq: invalid refine type %v", c.RefineType))
	}
	if c.Workers < 0 {
		errs = append(errs, fmt.Errorf("rabitq: workers(%d) must not be negative", c.Workers))
	}
	return errors.Join(errs...)
}

// refineTypeNames lists the refine types in Milvus's error message.
const refineTypeNames = "[sq6, sq8, fp16, bf16, fp32, flat]"

// ParseParams reads the Milvus IVF_RABITQ build parameters nlist, refine
// (a boolean, any case) and refine_type (SQ6, SQ8, FP16, BF16, FP32 or
// FLAT, any case; checked even without refine, used only with it) with
// Milvus's wording of every refusal.
func ParseParams(params map[string]string) (Config, error) {
	cfg := Defaults()
	if v, ok := params["nlist"]; ok {
		n, err := index.IntParam("nlist", v)
		if err != nil {
			return Config{}, fmt.Errorf("rabitq: %w", err)
		}
		cfg.Nlist = n
	}
	if v, ok := params["refine"]; ok {
		switch strings.ToLower(strings.Trim(v, `"`)) {
		case "true":
			cfg.Refine = true
		case "false":
		default:
			return Config{}, fmt.Errorf("rabitq: Type conflict in json: param 'refine' (%q) should be a boolean", v)
		}
	}
	if v, ok := params["refine_type"]; ok {
		t, known := quant.ParseKind(v)
		if !known || t == quant.PQ {
			return Config{}, fmt.Errorf("rabitq: invalid refine type : %s, optional types are %s", v, refineTypeNames)
		}
		cfg.RefineType = t
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Index is an IVF_RABITQ index over float32 vectors. It is immutable after
// Build or Unmarshal, and every method is safe for concurrent use. It
// implements index.Index.
type Index struct {
	metric index.Metric
	ip     bool
	dim    int
	nbytes int // code bytes per row, ceil(dim/8)
	cfg    Config
	n      int

	rot   []float32 // dim×dim orthogonal rotation P, row-major
	cents []float32 // Nlist×dim centroids (unit-length data for COSINE)
	offs  []int32   // Nlist+1 slot boundaries of the lists
	rows  []int32   // row of each slot, lists one after another
	codes []byte    // nbytes per slot: bit j set when (P o)_j > 0
	norms []float32 // |r| per slot, r = x - centroid
	ipoo  []float32 // <ō, P o> per slot, the estimator's correction
	cr    []float32 // <c, r> per slot (the inner product's exact part)

	rcents []float32    // P c for every centroid; derived, not serialized
	rf     *quant.Store // refine store, by row; nil without refine

	pool sync.Pool // *scratch
}

var (
	_ index.Index      = (*Index)(nil)
	_ index.RawVectors = (*Index)(nil)
)

// RawVectors implements index.RawVectors: an FP32 refine store holds the
// vectors given to Build bit for bit under L2 and IP (normalised under
// COSINE: then nil); without one the index keeps no exact copy (nil).
func (x *Index) RawVectors() []float32 {
	if x.metric == index.Cosine || x.rf == nil || x.rf.Kind() != quant.FP32 {
		return nil
	}
	return x.rf.Vectors()
}

// Build returns an index over the len(vectors)/dim rows of vectors. It
// returns ctx.Err() soon after ctx ends.
func Build(ctx context.Context, vectors []float32, dim int, metric index.Metric, cfg Config) (*Index, error) {
	if dim <= 0 || len(vectors)%dim != 0 {
		return nil, fmt.Errorf("rabitq: %d values do not make rows of dim %d", len(vectors), dim)
	}
	if !metric.Float() {
		return nil, fmt.Errorf("rabitq: invalid metric %v", metric)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	x := newIndex(dim, metric, cfg)
	x.n = len(vectors) / dim
	data := vectors
	if metric == index.Cosine {
		data = slices.Clone(vectors)
		for i := range x.n {
			normalize(data[i*dim : (i+1)*dim])
		}
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	x.rot = rotation(dim, cfg.Seed)
	nlist := min(cfg.Nlist, max(x.n, 1))
	sample := data
	if limit := trainPerList * nlist; x.n > limit {
		rng := rand.New(rand.NewPCG(cfg.Seed, 3))
		sample = make([]float32, 0, limit*dim)
		for _, r := range rng.Perm(x.n)[:limit] {
			sample = append(sample, data[r*dim:(r+1)*dim]...)
		}
	}
	cents, err := ivf.KMeans(ctx, sample, dim, nlist, kmeansIterations, workers, cfg.Seed)
	if err != nil {
		return nil, err
	}
	// Lists beyond the rows (nlist > n) stay empty.
	x.cents = make([]float32, cfg.Nlist*dim)
	copy(x.cents, cents)
	if err := x.encode(ctx, data, nlist, workers); err != nil {
		return nil, err
	}
	if cfg.Refine {
		rf := quant.New(cfg.RefineType, dim, 0, 0)
		if err := rf.Train(ctx, data, workers, cfg.Seed); err != nil {
			return nil, err
		}
		if rf.Kind() == quant.FP32 {
			rf.Adopt(slices.Clone(data))
		} else if err := rf.Encode(ctx, data, workers); err != nil {
			return nil, err
		}
		x.rf = rf
	}
	x.derive()
	return x, nil
}

// newIndex returns an empty index with its shape set.
func newIndex(dim int, metric index.Metric, cfg Config) *Index {
	return &Index{metric: metric, ip: metric != index.L2, dim: dim, nbytes: (dim + 7) / 8, cfg: cfg}
}

// encode assigns every row to its nearest centroid (by L2: the smallest
// residual, which the estimator's error scales with) and stores its code.
func (x *Index) encode(ctx context.Context, data []float32, nlist, workers int) error {
	dim := x.dim
	list := make([]int32, x.n)
	res := make([]float32, x.n*dim)
	chunks := make(chan int, (x.n+1023)/1024)
	for lo := 0; lo < x.n; lo += 1024 {
		chunks <- lo
	}
	close(chunks)
	var wg sync.WaitGroup
	for range max(1, min(workers, cap(chunks))) {
		wg.Go(func() {
			ds := make([]float32, nlist)
			for lo := range chunks {
				if ctx.Err() != nil {
					continue
				}
				for i := lo; i < min(lo+1024, x.n); i++ {
					v := data[i*dim : (i+1)*dim]
					distance.L2SquaredBatch(v, x.cents[:nlist*dim], ds)
					best := 0
					for c, d := range ds {
						if d < ds[best] {
							best = c
						}
					}
					list[i] = int32(best)
					c := x.cents[best*dim : (best+1)*dim]
					for j := range v {
						res[i*dim+j] = v[j] - c[j]
					}
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	x.offs = make([]int32, x.cfg.Nlist+1)
	for _, l := range list {
		x.offs[l+1]++
	}
	for l := range x.cfg.Nlist {
		x.offs[l+1] += x.offs[l]
	}
	x.rows = make([]int32, x.n)
	x.codes = make([]byte, x.n*x.nbytes)
	x.norms = make([]float32, x.n)
	x.ipoo = make([]float32, x.n)
	x.cr = make([]float32, x.n)
	next := slices.Clone(x.offs[:x.cfg.Nlist])
	rotated := make([]float32, dim)
	for i, l := range list {
		slot := next[l]
		next[l]++
		x.rows[slot] = int32(i)
		r := res[i*dim : (i+1)*dim]
		x.cr[slot] = distance.Dot(x.cents[int(l)*dim:(int(l)+1)*dim], r)
		x.codeRow(r, rotated, int(slot))
	}
	return nil
}

// codeRow stores the code of residual r in slot: its norm, the sign bits
// of the rotated unit residual P o and the correction <ō, P o> =
// sum_j |(P o)_j| / sqrt(dim). A zero residual gets norm 0 (its estimate
// term vanishes) and correction 1.
func (x *Index) codeRow(r, rotated []float32, slot int) {
	nr := distance.Norm(r)
	x.norms[slot] = nr
	x.ipoo[slot] = 1
	if nr == 0 {
		return
	}
	x.rotate(r, rotated)
	code := x.codes[slot*x.nbytes : (slot+1)*x.nbytes]
	var abs float64
	for j, v := range rotated {
		if v > 0 {
			code[j/8] |= 1 << (j % 8)
		}
		abs += math.Abs(float64(v))
	}
	if ipoo := abs / float64(nr) / math.Sqrt(float64(x.dim)); ipoo > 0 {
		x.ipoo[slot] = float32(ipoo)
	}
}

// rotate sets out = P v.
func (x *Index) rotate(v, out []float32) {
	dim := x.dim
	for i := range dim {
		out[i] = distance.Dot(x.rot[i*dim:(i+1)*dim], v)
	}
}

// derive computes the rotated centroids.
func (x *Index) derive() {
	x.rcents = make([]float32, len(x.cents))
	for c := range x.cfg.Nlist {
		x.rotate(x.cents[c*x.dim:(c+1)*x.dim], x.rcents[c*x.dim:(c+1)*x.dim])
	}
}

// rotation returns a random dim×dim orthogonal matrix: Gram-Schmidt over
// Gaussian rows drawn from seed, in float64.
func rotation(dim int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	m := make([]float64, dim*dim)
	for i := range dim {
		row := m[i*dim : (i+1)*dim]
		for {
			for j := range row {
				row[j] = rng.NormFloat64()
			}
			for k := range i {
				prev := m[k*dim : (k+1)*dim]
				var d float64
				for j := range row {
					d += row[j] * prev[j]
				}
				for j := range row {
					row[j] -= d * prev[j]
				}
			}
			var nrm float64
			for _, v := range row {
				nrm += v * v
			}
			if nrm = math.Sqrt(nrm); nrm > 1e-9 {
				for j := range row {
					row[j] /= nrm
				}
				break
			}
		}
	}
	out := make([]float32, dim*dim)
	for i, v := range m {
		out[i] = float32(v)
	}
	return out
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) {
	if nrm := distance.Norm(v); nrm > 0 {
		inv := 1 / nrm
		for i := range v {
			v[i] *= inv
		}
	}
}

// Len returns the number of indexed rows.
func (x *Index) Len() int { return x.n }

// Config returns the build parameters.
func (x *Index) Config() Config { return x.cfg }

// MemoryBytes estimates the heap memory the index holds.
func (x *Index) MemoryBytes() int64 {
	b := 4*int64(len(x.rot)+len(x.cents)+len(x.rcents)+len(x.offs)+len(x.rows)+len(x.norms)+len(x.ipoo)+len(x.cr)) +
		int64(len(x.codes))
	if x.rf != nil {
		b += x.rf.MemoryBytes()
	}
	return b
}

// scratch is the per-search working memory.
type scratch struct {
	q, qrot, qr []float32
	lut         []float32 // nbytes×256 partial sums
	lists       []topk.Item
	heap        topk.Heap
	rq          quant.Query
}

// Search returns the (approximate) k best rows for q. params.Nprobe lists
// are scanned (0: DefaultNprobe; values above Nlist are capped, as Milvus
// does); params.QueryBits (rbq_bits_query, 0 to 8; 0 keeps the rotated
// query exact) quantizes the query; with a refine store the best
// ceil(k×params.RefineK) candidates are re-scored with it. If the probed
// lists hold fewer than k allowed rows, the next lists in rank order are
// scanned until they do.
func (x *Index) Search(q []float32, k int, params index.SearchParams, allowed []bool) ([]index.Hit, error) {
	if len(q) != x.dim {
		return nil, fmt.Errorf("rabitq: query dimension %d, index dimension %d", len(q), x.dim)
	}
	if k < 0 {
		return nil, fmt.Errorf("rabitq: k(%d) must not be negative", k)
	}
	if params.Nprobe < 0 {
		return nil, fmt.Errorf("rabitq: param 'nprobe' (%d) should be in range [1, 65536]", params.Nprobe)
	}
	if params.QueryBits < 0 || params.QueryBits > MaxQueryBits {
		return nil, fmt.Errorf("rabitq: param 'rbq_bits_query' (%d) should be in range [0, %d]", params.QueryBits, MaxQueryBits)
	}
	if allowed != nil && len(allowed) != x.n {
		return nil, fmt.Errorf("rabitq: allowed mask has %d entries, index has %d rows", len(allowed), x.n)
	}
	if k == 0 || x.n == 0 {
		return []index.Hit{}, nil
	}
	s, _ := x.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	defer x.pool.Put(s)
	dim := x.dim
	s.q = append(s.q[:0], q...)
	if x.metric == index.Cosine {
		normalize(s.q)
	}
	q = s.q
	pad := x.nbytes * 8
	s.qrot = resize(s.qrot, pad)
	clear(s.qrot)
	x.rotate(q, s.qrot[:dim])
	s.qr = resize(s.qr, pad)
	s.lut = resize(s.lut, x.nbytes*256)

	// Rank the lists: by L2 to the centroid, or by inner product.
	s.lists = s.lists[:0]
	for c := range x.cfg.Nlist {
		if x.offs[c] == x.offs[c+1] {
			continue
		}
		cv := x.cents[c*dim : (c+1)*dim]
		d := distance.L2Squared(q, cv)
		if x.ip {
			d = -distance.Dot(q, cv)
		}
		s.lists = append(s.lists, topk.Item{D: d, ID: int32(c)})
	}
	slices.SortFunc(s.lists, topk.Compare)
	nprobe := params.Nprobe
	if nprobe == 0 {
		nprobe = DefaultNprobe
	}

	kc := k
	if x.rf != nil {
		rk := max(params.RefineK, 1)
		kc = int(min(math.Ceil(float64(k)*rk), float64(x.n)))
	}
	s.heap.Reset(kc)
	allowedSeen := 0
	for i, l := range s.lists {
		if i >= nprobe && allowedSeen >= kc {
			break
		}
		allowedSeen += x.scanList(int(l.ID), l.D, q, params.QueryBits, allowed, s)
	}
	items := s.heap.Sorted()
	if x.rf != nil {
		s.rq.Prepare(x.rf, q, x.ip)
		for i := range items {
			items[i].D = s.rq.Dist(uint32(items[i].ID))
		}
		slices.SortFunc(items, topk.Compare)
	}
	items = items[:min(k, len(items))]
	out := make([]index.Hit, len(items))
	for i, it := range items {
		sc := it.D
		if x.ip {
			sc = -sc
		}
		out[i] = index.Hit{Row: it.ID, Score: sc}
	}
	return out, nil
}

// scanList scores the allowed rows of list c into s.heap and returns how
// many it scored. cd is the list's rank key: ||q-c||^2 under L2, -<q,c>
// otherwise.
func (x *Index) scanList(c int, cd float32, q []float32, qbits int, allowed []bool, s *scratch) int {
	dim, nb := x.dim, x.nbytes
	// The query as the estimator sees it: P(q - c) = P q - P c.
	qr := s.qr
	clear(qr[dim:])
	rc := x.rcents[c*dim : (c+1)*dim]
	for j := range dim {
		qr[j] = s.qrot[j] - rc[j]
	}
	if qbits > 0 {
		quantizeQuery(qr[:dim], qbits)
	}
	var sumq float32
	for _, v := range qr[:dim] {
		sumq += v
	}
	// lut[b*256+v] = sum of the qr entries of byte b whose bits v sets.
	lut := s.lut
	for b := range nb {
		t := lut[b*256 : (b+1)*256]
		t[0] = 0
		for v := 1; v < 256; v++ {
			t[v] = t[v&(v-1)] + qr[b*8+bits.TrailingZeros(uint(v))]
		}
	}
	invSqrt := float32(1 / math.Sqrt(float64(dim)))
	qn2 := cd // ||q - c||^2 under L2
	base := -cd
	if x.ip {
		d := qr[:dim]
		qn2 = distance.Dot(d, d)
	}
	scored := 0
	for slot := x.offs[c]; slot < x.offs[c+1]; slot++ {
		row := x.rows[slot]
		if allowed != nil && !allowed[row] {
			continue
		}
		scored++
		code := x.codes[int(slot)*nb : int(slot+1)*nb]
		var sum float32
		for b, v := range code {
			sum += lut[b*256+int(v)]
		}
		est := (2*sum - sumq) * invSqrt / x.ipoo[slot] // ~ <o, P(q-c)>
		nr := x.norms[slot]
		var d float32
		if x.ip {
			d = -(base + x.cr[slot] + nr*est) // -( <q,c> + <c,r> + <q-c,r> )
		} else {
			d = nr*nr + qn2 - 2*nr*est
		}
		s.heap.Offer(topk.Item{D: d, ID: row})
	}
	return scored
}

// quantizeQuery rounds every entry of v to one of 2^bits levels evenly
// spaced between its minimum and maximum (rbq_bits_query).
func quantizeQuery(v []float32, bits int) {
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	step := (hi - lo) / float32(int(1)<<bits-1)
	if step == 0 {
		return
	}
	for i, x := range v {
		v[i] = lo + step*float32(math.Round(float64((x-lo)/step)))
	}
}

// resize returns b with n entries.
func resize(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
