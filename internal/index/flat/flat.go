// Package flat is exact k-nearest-neighbour search over row-major float32
// vectors: the FLAT index type, and the scan the query node runs over a
// segment without a vector index.
//
// # Single query
//
// Search scores rows in blocks of blockRows with the batched distance
// kernels (distance.L2SquaredBatch, distance.DotBatch), which stream the
// rows with one call per block and no per-row call, then keeps the best k
// with a bounded heap behind a threshold test: once k rows are held, a row
// costs one comparison unless it beats the worst kept. The scan is bound by
// memory bandwidth (each row is read once), see internal/bench.
//
// # Many queries
//
// SearchBatch scores every query against a block of rows at once with the
// register-tiled kernel distance.Queries.DotMatrix, which is bound by
// arithmetic rather than memory; distance.FirstL2Below skips the rows whose
// key cannot enter a query's top k. L2 distances are ranked by
// ||x||² - 2 x·q (||q||² is the same for every row of a query) and the hits'
// reported scores are recomputed exactly with distance.L2Squared, so they
// equal Search's; rows within rounding error of each other may rank in
// another order than in Search. The rows' squared norms are computed once
// per call. Queries are taken in chunks of queryChunk, so that a chunk's
// packed queries stay in the L2 cache, and the rows are read from memory
// once per chunk.
//
// # Scores
//
// Scores follow index.Hit: squared L2 distance, inner product, or cosine
// similarity (0 when either vector is zero). Rows whose score is NaN are
// never returned. Hits are best first, equal scores by ascending row.
package flat

import (
	"fmt"
	"math"
	"slices"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/topk"
)

const (
	// blockRows is the number of rows a single-query search scores per
	// kernel call; its scores stay in the L1 cache.
	blockRows = 1024
	// batchRows is the number of rows of a SearchBatch block, a multiple of
	// every kernel height (8, 6 and 3); a block's dot products (queryChunk ×
	// batchRows) stay in the L2 cache until the selection reads them.
	batchRows = 264
	// queryChunk is the largest number of queries scored together.
	queryChunk = 192
)

// checkArgs validates the shapes shared by Search and SearchBatch.
func checkArgs(data []float32, dim int, metric index.Metric, k int, allowed []bool) (n int, err error) {
	if dim <= 0 {
		return 0, fmt.Errorf("flat: dimension %d must be positive", dim)
	}
	if len(data)%dim != 0 {
		return 0, fmt.Errorf("flat: %d data floats are not a whole number of rows of dimension %d", len(data), dim)
	}
	if !metric.Valid() {
		return 0, fmt.Errorf("flat: invalid metric %v", metric)
	}
	if k < 0 {
		return 0, fmt.Errorf("flat: k(%d) must not be negative", k)
	}
	n = len(data) / dim
	if allowed != nil && len(allowed) != n {
		return 0, fmt.Errorf("flat: allowed mask has %d entries, data has %d rows", len(allowed), n)
	}
	return n, nil
}

// anyAllowed reports whether a row of allowed[lo:hi] is set (or allowed is
// nil).
func anyAllowed(allowed []bool, lo, hi int) bool {
	return allowed == nil || slices.Contains(allowed[lo:hi], true)
}

// offer feeds the keys of rows base.. into h, skipping NaN keys and rows
// not allowed; thr is the key a row must beat once h is full (+Inf until
// then), which offer updates and returns.
func offer(h *topk.Heap, thr float32, keys []float32, base int, allowed []bool) float32 {
	for j, s := range keys {
		if s <= thr { // false for NaN; one comparison per row once h is full
			thr = admit(h, thr, s, base+j, allowed)
		}
	}
	return thr
}

// offerL2 is offer for the L2 keys sq[j] - 2*dots[j] (||x||² - 2 x·q);
// distance.FirstL2Below skips the rows whose key exceeds the threshold.
func offerL2(h *topk.Heap, thr float32, dots, sq []float32, base int, allowed []bool) float32 {
	sq = sq[:len(dots)]
	for j := distance.FirstL2Below(dots, sq, thr); j < len(dots); {
		thr = admit(h, thr, sq[j]-2*dots[j], base+j, allowed)
		j++
		j += distance.FirstL2Below(dots[j:], sq[j:], thr)
	}
	return thr
}

// admit offers row with key s <= thr to h unless it only ties the worst of
// a full h (a later row loses ties) or is not allowed, and returns the new
// threshold.
func admit(h *topk.Heap, thr, s float32, row int, allowed []bool) float32 {
	if s == thr && h.Full() || allowed != nil && !allowed[row] {
		return thr
	}
	h.Offer(topk.Item{D: s, ID: int32(row)})
	if h.Full() {
		return h.Top().D
	}
	return thr
}

// hits converts the kept items, best first, from keys to scores.
func hits(items []topk.Item, metric index.Metric) []index.Hit {
	out := make([]index.Hit, len(items))
	for i, it := range items {
		sc := it.D
		if metric != index.L2 {
			sc = -sc
		}
		out[i] = index.Hit{Row: it.ID, Score: sc}
	}
	return out
}

// unit returns q scaled to unit length (a copy), or q itself when its norm
// is 0.
func unit(q []float32) []float32 {
	n := distance.Norm(q)
	if n == 0 {
		return q
	}
	u := make([]float32, len(q))
	for i, v := range q {
		u[i] = v / n
	}
	return u
}

// cosineKeys turns the dot products of a unit query with rows whose squared
// norms are in sq into negated cosine similarities, 0 for a zero row or a
// zero query.
func cosineKeys(keys, sq []float32, zeroQuery bool) {
	for j, d := range keys {
		if zeroQuery || sq[j] == 0 {
			keys[j] = 0
		} else {
			keys[j] = -d / float32(math.Sqrt(float64(sq[j])))
		}
	}
}

// Search returns the k best of the len(data)/dim rows in data for the
// query q under metric, considering only rows with allowed[row] set when
// allowed is non-nil.
func Search(data []float32, dim int, metric index.Metric, q []float32, k int, allowed []bool) ([]index.Hit, error) {
	n, err := checkArgs(data, dim, metric, k, allowed)
	if err != nil {
		return nil, err
	}
	if len(q) != dim {
		return nil, fmt.Errorf("flat: query dimension %d, data dimension %d", len(q), dim)
	}
	if k == 0 || n == 0 {
		return []index.Hit{}, nil
	}
	zeroQuery := false
	if metric == index.Cosine {
		q = unit(q)
		zeroQuery = distance.Norm(q) == 0
	}
	var h topk.Heap
	h.Reset(k)
	thr := float32(math.Inf(1))
	keys := make([]float32, min(blockRows, n))
	var sq []float32
	if metric == index.Cosine {
		sq = make([]float32, len(keys))
	}
	for lo := 0; lo < n; lo += blockRows {
		hi := min(lo+blockRows, n)
		if !anyAllowed(allowed, lo, hi) {
			continue
		}
		rows, kb := data[lo*dim:hi*dim], keys[:hi-lo]
		switch metric {
		case index.L2:
			distance.L2SquaredBatch(q, rows, kb)
		case index.IP:
			distance.DotBatch(q, rows, kb)
			for j := range kb {
				kb[j] = -kb[j]
			}
		default:
			distance.DotBatch(q, rows, kb)
			distance.SquaredNorms(rows, dim, sq[:hi-lo])
			cosineKeys(kb, sq, zeroQuery)
		}
		thr = offer(&h, thr, kb, lo, allowed)
	}
	return hits(h.Sorted(), metric), nil
}

// SearchBatch returns, for each of the len(queries)/dim row-major queries,
// the k best of the len(data)/dim rows in data under metric, considering
// only rows with allowed[row] set when allowed is non-nil. Reported scores
// equal Search's; see the package documentation for the ranking.
func SearchBatch(data []float32, dim int, metric index.Metric, queries []float32, k int, allowed []bool) ([][]index.Hit, error) {
	n, err := checkArgs(data, dim, metric, k, allowed)
	if err != nil {
		return nil, err
	}
	if len(queries)%dim != 0 {
		return nil, fmt.Errorf("flat: %d query floats are not a whole number of vectors of dimension %d", len(queries), dim)
	}
	nq := len(queries) / dim
	out := make([][]index.Hit, nq)
	var sq []float32 // squared row norms, for L2 and COSINE
	if metric != index.IP && k > 0 && nq > 0 {
		sq = make([]float32, n)
		distance.SquaredNorms(data, dim, sq)
	}
	for lo := 0; lo < nq; lo += queryChunk {
		hi := min(lo+queryChunk, nq)
		searchChunk(data, sq, n, dim, metric, queries[lo*dim:hi*dim], k, allowed, out[lo:hi])
	}
	return out, nil
}

// searchChunk is SearchBatch for one chunk of queries, writing out; sq
// holds the squared norms of all rows (nil for IP).
func searchChunk(data, sq []float32, n, dim int, metric index.Metric, queries []float32, k int, allowed []bool, out [][]index.Hit) {
	nq := len(out)
	if k == 0 || n == 0 {
		for i := range out {
			out[i] = []index.Hit{}
		}
		return
	}
	zero := make([]bool, nq) // cosine: the query is the zero vector
	if metric == index.Cosine {
		u := make([]float32, 0, len(queries))
		for i := range nq {
			v := unit(queries[i*dim : (i+1)*dim])
			zero[i] = distance.Norm(v) == 0
			u = append(u, v...)
		}
		queries = u
	}
	qs := distance.NewQueries(queries, dim)
	heaps := make([]topk.Heap, nq)
	thr := make([]float32, nq)
	for i := range heaps {
		heaps[i].Reset(k)
		thr[i] = float32(math.Inf(1))
	}
	dots := make([]float32, nq*min(batchRows, n))
	for lo := 0; lo < n; lo += batchRows {
		hi := min(lo+batchRows, n)
		if !anyAllowed(allowed, lo, hi) {
			continue
		}
		m := hi - lo
		d := dots[:nq*m]
		qs.DotMatrix(data[lo*dim:hi*dim], d)
		var bsq []float32
		if sq != nil {
			bsq = sq[lo:hi]
		}
		for i := range nq {
			kb := d[i*m : (i+1)*m]
			switch metric {
			case index.L2:
				thr[i] = offerL2(&heaps[i], thr[i], kb, bsq, lo, allowed)
				continue
			case index.IP:
				for j := range kb {
					kb[j] = -kb[j]
				}
			default:
				cosineKeys(kb, bsq, zero[i])
			}
			thr[i] = offer(&heaps[i], thr[i], kb, lo, allowed)
		}
	}
	for i := range out {
		items := heaps[i].Sorted()
		if metric == index.L2 {
			q := qs.Query(i)
			for j := range items {
				r := int(items[j].ID)
				items[j].D = distance.L2Squared(q, data[r*dim:(r+1)*dim])
			}
			slices.SortFunc(items, topk.Compare)
		}
		out[i] = hits(items, metric)
	}
}

// Index is a FLAT index over one segment's vectors: the rows themselves,
// searched exactly. It holds no state besides the rows, so it has no
// durable form of its own.
type Index struct {
	data   []float32
	dim    int
	metric index.Metric
}

// New returns a FLAT index over the len(data)/dim row-major rows in data,
// which it references and which must not change while the index is in use.
func New(data []float32, dim int, metric index.Metric) (*Index, error) {
	if _, err := checkArgs(data, dim, metric, 0, nil); err != nil {
		return nil, err
	}
	return &Index{data: data, dim: dim, metric: metric}, nil
}

// Search returns the k best rows for q; params are ignored. It is safe for
// concurrent use.
func (x *Index) Search(q []float32, k int, _ index.SearchParams, allowed []bool) ([]index.Hit, error) {
	return Search(x.data, x.dim, x.metric, q, k, allowed)
}

// SearchBatch returns the k best rows for each of the len(queries)/dim
// row-major queries. It is safe for concurrent use.
func (x *Index) SearchBatch(queries []float32, k int, allowed []bool) ([][]index.Hit, error) {
	return SearchBatch(x.data, x.dim, x.metric, queries, k, allowed)
}

// Len returns the number of rows.
func (x *Index) Len() int { return len(x.data) / x.dim }

// MemoryBytes returns the size of the rows.
func (x *Index) MemoryBytes() int64 { return int64(len(x.data)) * 4 }
