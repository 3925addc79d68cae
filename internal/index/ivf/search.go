package ivf

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/topk"
)

// scratch is the per-search working memory, pooled across searches.
type scratch struct {
	q      []float32   // normalised query (COSINE)
	cdist  []float32   // internal distance of the query to every centroid
	probe  topk.Heap   // the lists to scan
	res    topk.Heap   // the best rows so far
	buf    []float32   // a PQ residual query
	tab    []float32   // PQ distance table, M*ksub
	t3     []float32   // PQ cross term -2<q, codeword>, M*ksub (precomputed tables)
	qa     []float32   // SQ8 query: q-min (L2) or q*scale (IP)
	dists  []float32   // scores of the rows of one list
	sqBase float32     // SQ8 under IP: <q, min>
	order  []topk.Item // remaining lists, when the probed ones fall short
	seen   []bool      // lists already scanned, when the probed ones fall short
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
	if allowed != nil && exactFilter(index.AllowedCount(allowed, x.n, params), x.n, nprobe, nlist) {
		nprobe = nlist
	}
	s.probe.Reset(nprobe)
	for l, d := range s.cdist {
		s.probe.Offer(topk.Item{D: d, ID: int32(l)})
	}
	probed := s.probe.Sorted()
	for i, p := range probed {
		if i+1 < len(probed) {
			x.prefetchList(int(probed[i+1].ID))
		}
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
		slices.SortFunc(s.order, func(a, b topk.Item) int {
			if topk.Worse(a, b) {
				return 1
			}
			if topk.Worse(b, a) {
				return -1
			}
			return 0
		})
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

// prepareQuery sizes the scratch buffers and computes what depends on the
// query but not on the list: for SQ8 the query rewritten for the code
// kernels, for PQ the query's distance table (IP) or its cross term (L2
// with precomputed tables).
func (x *Index) prepareQuery(q []float32, s *scratch) {
	switch x.cfg.Kind {
	case SQ8:
		s.qa = slices.Grow(s.qa[:0], x.dim)[:x.dim]
		if x.ip {
			// <q, min + scale*code> = <q, min> + <q*scale, code>.
			for j, v := range q {
				s.qa[j] = v * x.sqScale[j]
			}
			s.sqBase = distance.Dot(q, x.sqMin)
		} else {
			// (q - min - scale*code)^2, summed.
			for j, v := range q {
				s.qa[j] = v - x.sqMin[j]
			}
		}
	case PQ:
		s.buf = slices.Grow(s.buf[:0], x.dim)[:x.dim]
		s.qa = slices.Grow(s.qa[:0], x.dim)[:x.dim]
		s.tab = slices.Grow(s.tab[:0], x.cfg.M*x.ksub)[:x.cfg.M*x.ksub]
		switch {
		case x.ip:
			x.pqInnerTable(q, -1, s.qa, s.tab)
		case x.pqPre != nil:
			// The cross term -2<q, codeword> of every sub-space.
			s.t3 = slices.Grow(s.t3[:0], len(s.tab))[:len(s.tab)]
			x.pqInnerTable(q, -2, s.qa, s.t3)
		}
	}
}

// scan offers the allowed rows of list l to s.res. It scores runs of
// consecutive allowed rows with one batched kernel call each (the whole
// list when allowed is nil), then offers the scores to the heap, skipping
// without a push every score worse than the current k-th best.
func (x *Index) scan(q []float32, l int, allowed []bool, s *scratch) {
	lo, hi := int(x.offsets[l]), int(x.offsets[l+1])
	if lo == hi {
		return
	}
	s.dists = slices.Grow(s.dists[:0], hi-lo)[:hi-lo]
	base := x.prepareList(q, l, s)
	if allowed == nil {
		x.score(q, lo, hi, base, s, s.dists)
		s.res.OfferAll(s.dists, x.rows[lo:hi])
		return
	}
	for p := lo; p < hi; {
		if !allowed[x.rows[p]] {
			p++
			continue
		}
		end := p + 1
		for end < hi && allowed[x.rows[end]] {
			end++
		}
		d := s.dists[:end-p]
		x.score(q, p, end, base, s, d)
		s.res.OfferAll(d, x.rows[p:end])
		p = end
	}
}

// prefetchHead is how many bytes at the head of the next probed list of an
// IVF_FLAT index a search prefetches while it scans the current one; past
// them the batched distance kernels prefetch ahead themselves.
const prefetchHead = 4 << 10

// prefetchList asks the CPU to start loading the head of list l's vectors
// (IVF_FLAT only): the lists are scattered, so the hardware prefetcher
// cannot know where the next scan starts.
func (x *Index) prefetchList(l int) {
	if x.cfg.Kind != Flat {
		return
	}
	lo, hi := int(x.offsets[l])*x.dim, int(x.offsets[l+1])*x.dim
	distance.Prefetch(x.vecs[lo:min(hi, lo+prefetchHead/4)])
}

// prepareList readies the per-list state of a scan and returns the
// distance offset every row of list l shares: for PQ it builds the list's
// distance table in s.tab; under IP the offset is the centroid score, under
// L2 the query-to-centroid distance.
func (x *Index) prepareList(q []float32, l int, s *scratch) float32 {
	if x.cfg.Kind != PQ {
		return 0
	}
	switch {
	case x.ip:
		return s.cdist[l]
	case x.pqPre != nil:
		sz := x.cfg.M * x.ksub
		addTables(x.pqPre[l*sz:(l+1)*sz], s.t3, s.tab)
		return s.cdist[l]
	default:
		// ||r_q - w||^2 = ||r_q||^2 - 2<r_q, w> + ||w||^2 for the query
		// residual r_q = q - c, summed over sub-spaces: the ||r_q||^2
		// terms add up to the coarse distance.
		residual(q, x.centroid(l), s.buf)
		x.pqInnerTable(s.buf, -2, s.qa, s.tab)
		addTables(s.tab, x.cbNorm, s.tab)
		return s.cdist[l]
	}
}

// score writes the internal distances of positions lo..hi-1 to out.
func (x *Index) score(q []float32, lo, hi int, base float32, s *scratch, out []float32) {
	dim := x.dim
	switch x.cfg.Kind {
	case Flat:
		vecs := x.vecs[lo*dim : hi*dim]
		if x.ip {
			distance.DotBatch(q, vecs, out)
			for i, d := range out {
				out[i] = -d
			}
		} else {
			distance.L2SquaredBatch(q, vecs, out)
		}
	case SQ8:
		codes := x.codes[lo*dim : hi*dim]
		if x.ip {
			sq8Dot(s.qa, codes, out)
			for i, d := range out {
				out[i] = -(s.sqBase + d)
			}
		} else {
			sq8L2(s.qa, x.sqScale, codes, out)
		}
	case PQ:
		m := x.cfg.M
		pqScan(s.tab, x.ksub, x.codes[lo*m:hi*m], m, base, out)
	}
}
