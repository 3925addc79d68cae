package ivf

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/topk"
)

// scratch is the per-search working memory, pooled across searches.
type scratch struct {
	q     []float32   // normalised query (COSINE)
	cdist []float32   // internal distance of the query to every centroid
	probe topk.Heap   // the lists to scan
	res   topk.Heap   // the best rows so far
	buf   []float32   // a decoded SQ8 vector, or a PQ residual query
	tab   []float32   // PQ distance table, M*ksub
	order []topk.Item // remaining lists, when the probed ones fall short
	seen  []bool      // lists already scanned, when the probed ones fall short
}

// Search returns the k nearest rows to q, best first (ties by ascending
// row), considering only rows with allowed[row] == true when allowed is
// non-nil. It is safe for concurrent use. See index.Index for the contract.
//
// params.Nprobe is the number of lists scanned, those whose centroids score
// best against q; 0 selects min(DefaultNprobe, Nlist), and values outside
// [1, Nlist] are rejected as in Milvus. A filter that allows at most
// Len()*nprobe/Nlist rows makes Search scan every list, which then costs
// no more distances than an unfiltered search (see exactFilter). When the
// scanned lists hold fewer than k allowed rows, Search goes on to the
// next-best lists until it has k hits or has scanned every list, so it
// returns k hits whenever k rows are allowed. Scores are exact for IVF_FLAT and computed from the encoded
// vectors for IVF_SQ8 and IVF_PQ.
func (x *Index) Search(q []float32, k int, params index.SearchParams, allowed []bool) ([]index.Hit, error) {
	if len(q) != x.dim {
		return nil, fmt.Errorf("ivf: query dimension %d, index dimension %d", len(q), x.dim)
	}
	if k < 0 {
		return nil, fmt.Errorf("ivf: k(%d) must not be negative", k)
	}
	nlist := x.cfg.Nlist
	nprobe := params.Nprobe
	if nprobe == 0 {
		nprobe = min(DefaultNprobe, nlist)
	}
	if nprobe < 1 || nprobe > nlist {
		return nil, fmt.Errorf("ivf: nprobe(%d) out of range [1, %d]", nprobe, nlist)
	}
	if allowed != nil && len(allowed) != x.n {
		return nil, fmt.Errorf("ivf: allowed mask has %d entries, index has %d rows", len(allowed), x.n)
	}
	if k == 0 || x.n == 0 {
		return []index.Hit{}, nil
	}

	s, _ := x.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	defer x.pool.Put(s)
	if x.metric == index.Cosine {
		s.q = append(s.q[:0], q...)
		normalize(s.q)
		q = s.q
	}

	// Rank the lists: smallest squared L2 distance, or largest inner
	// product, to the centroid.
	s.cdist = slices.Grow(s.cdist[:0], nlist)[:nlist]
	if x.ip {
		distance.DotBatch(q, x.centroids, s.cdist)
		for i, d := range s.cdist {
			s.cdist[i] = -d
		}
	} else {
		distance.L2SquaredBatch(q, x.centroids, s.cdist)
	}
	x.prepareQuery(q, s)
	s.res.Reset(k)
	if allowed != nil && exactFilter(countTrue(allowed), x.n, nprobe, nlist) {
		nprobe = nlist
	}
	s.probe.Reset(nprobe)
	for l, d := range s.cdist {
		s.probe.Offer(topk.Item{D: d, ID: int32(l)})
	}
	probed := s.probe.Sorted()
	for _, p := range probed {
		x.scan(q, int(p.ID), allowed, s)
	}
	if !s.res.Full() && nprobe < nlist {
		// Too few allowed rows in the probed lists: continue with the
		// remaining lists, best first.
		s.order = s.order[:0]
		s.seen = slices.Grow(s.seen[:0], nlist)[:nlist]
		clear(s.seen)
		for _, p := range probed {
			s.seen[p.ID] = true
		}
		for l, d := range s.cdist {
			if !s.seen[l] {
				s.order = append(s.order, topk.Item{D: d, ID: int32(l)})
			}
		}
		slices.SortFunc(s.order, topk.Compare)
		for _, p := range s.order {
			if s.res.Full() {
				break
			}
			x.scan(q, int(p.ID), allowed, s)
		}
	}
	best := s.res.Sorted()
	out := make([]index.Hit, len(best))
	for i, it := range best {
		sc := it.D
		if x.ip {
			sc = -sc
		}
		out[i] = index.Hit{Row: it.ID, Score: sc}
	}
	return out, nil
}

// exactFilter decides whether a filtered search scans every list. An
// unfiltered search computes about n*nprobe/nlist distances; a search of
// every list computes one per allowed row (the mask test per row is far
// cheaper). So when no more than n*nprobe/nlist rows are allowed, scanning
// every list costs no more distances than the unfiltered search and gives
// the exact answer, where probing would keep only about
// allowed*nprobe/nlist candidates, too few for a good top k.
func exactFilter(nAllowed, n, nprobe, nlist int) bool {
	return int64(nAllowed)*int64(nlist) <= int64(n)*int64(nprobe)
}

// countTrue counts the true entries of m eight at a time: a Go bool is one
// byte holding 0 or 1, so the population count of eight bools read as a
// little-endian uint64 is the number of true ones.
func countTrue(m []bool) int {
	if len(m) == 0 {
		return 0
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m))), len(m))
	n, i := 0, 0
	for ; i+8 <= len(b); i += 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < len(b); i++ {
		n += int(b[i])
	}
	return n
}

// dist is the internal distance: smaller is better for every metric.
func (x *Index) dist(a, b []float32) float32 {
	if x.ip {
		return -distance.Dot(a, b)
	}
	return distance.L2Squared(a, b)
}

// prepareQuery sizes the scratch buffers and, for PQ under IP, computes
// the distance table, which does not depend on the list.
func (x *Index) prepareQuery(q []float32, s *scratch) {
	switch x.cfg.Kind {
	case SQ8:
		s.buf = slices.Grow(s.buf[:0], x.dim)[:x.dim]
	case PQ:
		s.buf = slices.Grow(s.buf[:0], x.dim)[:x.dim]
		s.tab = slices.Grow(s.tab[:0], x.cfg.M*x.ksub)[:x.cfg.M*x.ksub]
		if x.ip {
			x.pqTable(q, s.tab, true)
		}
	}
}

// pqTable fills tab[j*ksub+c] with the internal distance between the
// sub-vector j of v and codeword c of sub-space j: the squared L2
// distance, or with ip the negated inner product.
func (x *Index) pqTable(v, tab []float32, ip bool) {
	dsub, ksub := x.dsub, x.ksub
	for j := range x.cfg.M {
		t := tab[j*ksub : (j+1)*ksub]
		if ip {
			distance.DotBatch(v[j*dsub:(j+1)*dsub], x.codebook(j), t)
			for c := range t {
				t[c] = -t[c]
			}
		} else {
			distance.L2SquaredBatch(v[j*dsub:(j+1)*dsub], x.codebook(j), t)
		}
	}
}

// scan offers the allowed rows of list l to s.res.
func (x *Index) scan(q []float32, l int, allowed []bool, s *scratch) {
	lo, hi := int(x.offsets[l]), int(x.offsets[l+1])
	if lo == hi {
		return
	}
	dim := x.dim
	rows := x.rows[lo:hi]
	switch x.cfg.Kind {
	case Flat:
		vecs := x.vecs[lo*dim : hi*dim]
		for i, r := range rows {
			if allowed != nil && !allowed[r] {
				continue
			}
			s.res.Offer(topk.Item{D: x.dist(q, vecs[i*dim:(i+1)*dim:(i+1)*dim]), ID: r})
		}
	case SQ8:
		codes := x.codes[lo*dim : hi*dim]
		for i, r := range rows {
			if allowed != nil && !allowed[r] {
				continue
			}
			x.decodeSQ(codes[i*dim:(i+1)*dim], s.buf)
			s.res.Offer(topk.Item{D: x.dist(q, s.buf), ID: r})
		}
	case PQ:
		x.scanPQ(q, l, lo, rows, allowed, s)
	}
}

// scanPQ scores the rows of list l by asymmetric distance: the query stays
// exact and each row's distance is a sum of M table look-ups. Under L2 the
// table is built per list from the query's residual q - centroid; under IP
// the inner product splits into <q, centroid> + <q, residual>, so the
// list-independent table from prepareQuery is offset by the list's
// centroid score.
func (x *Index) scanPQ(q []float32, l, lo int, rows []int32, allowed []bool, s *scratch) {
	m, ksub := x.cfg.M, x.ksub
	var base float32
	if x.ip {
		base = s.cdist[l]
	} else {
		residual(q, x.centroid(l), s.buf)
		x.pqTable(s.buf, s.tab, false)
	}
	tab := s.tab
	codes := x.codes[lo*m : (lo+len(rows))*m]
	for i, r := range rows {
		if allowed != nil && !allowed[r] {
			continue
		}
		d := base
		code := codes[i*m : (i+1)*m : (i+1)*m]
		for j, c := range code {
			d += tab[j*ksub+int(c)]
		}
		s.res.Offer(topk.Item{D: d, ID: r})
	}
}
