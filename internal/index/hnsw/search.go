package hnsw

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/strata-db/strata/internal/index"
)

// DefaultEf is the search list size used when SearchParams.Ef is 0 (the
// effective value is max(k, DefaultEf)).
const DefaultEf = 64

// searchMode chooses between graph search and an exact scan.
type searchMode int

const (
	modeAuto  searchMode = iota // pick by the cost model in useBruteForce
	modeGraph                   // always walk the graph
	modeBrute                   // always scan the allowed rows
)

// Search returns the k nearest rows to q, best first (ties by ascending
// row), considering only rows with allowed[row] == true when allowed is
// non-nil. It is safe for concurrent use. See index.Index for the contract.
//
// params.Ef is the size of the dynamic candidate list; as in Milvus it must
// not be smaller than k ("ef(%d) should be larger than k(%d)"), and 0
// selects max(k, DefaultEf).
//
// With a filter, the graph walk still expands disallowed nodes (they route
// the search) but only allowed nodes enter the result list, so a search
// returns k hits whenever k rows are allowed. When few rows are allowed
// that walk degenerates into visiting most of the graph, so Search scans
// the allowed rows exactly instead when that is estimated to be cheaper;
// see useBruteForce.
func (x *Index) Search(q []float32, k int, params index.SearchParams, allowed []bool) ([]index.Hit, error) {
	return x.search(q, k, params, allowed, modeAuto)
}

func (x *Index) search(q []float32, k int, params index.SearchParams, allowed []bool, mode searchMode) ([]index.Hit, error) {
	if len(q) != x.dim {
		return nil, fmt.Errorf("hnsw: query dimension %d, index dimension %d", len(q), x.dim)
	}
	if k < 0 {
		return nil, fmt.Errorf("hnsw: k(%d) must not be negative", k)
	}
	ef := params.Ef
	if ef == 0 {
		ef = max(k, DefaultEf)
	}
	if ef < k {
		return nil, fmt.Errorf("hnsw: ef(%d) should be larger than k(%d)", ef, k)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if allowed != nil && len(allowed) != x.n {
		return nil, fmt.Errorf("hnsw: allowed mask has %d entries, index has %d rows", len(allowed), x.n)
	}
	if k == 0 || x.n == 0 {
		return []index.Hit{}, nil
	}

	s, _ := x.pool.Get().(*scratch)
	if s == nil {
		s = newScratch()
	}
	defer x.pool.Put(s)
	if x.metric == index.Cosine {
		s.q = append(s.q[:0], q...)
		normalize(s.q)
		q = s.q
	}

	nAllowed := index.AllowedCount(allowed, x.n, params)
	if nAllowed == 0 {
		return []index.Hit{}, nil
	}
	if x.qz != nil {
		s.qq.Prepare(x.qz, q, x.ip)
	}
	kc := x.candidates(k, params.RefineK)
	ef = max(ef, kc)
	var items []item
	if mode == modeBrute || (mode == modeAuto && x.useBruteForce(nAllowed, ef)) {
		items = x.bruteForce(q, kc, allowed, s)
	} else {
		ep := uint32(x.entry)
		cur := item{x.distTo(q, ep, s), ep}
		for l := x.maxLevel; l > 0; l-- {
			cur = x.greedy(q, cur, l, s)
		}
		x.searchBase(q, cur, ef, allowed, s)
		if len(s.res) < min(k, nAllowed) {
			// The walk found fewer rows than exist (a component unreachable
			// from the entry point, or ef >= the allowed rows): be exact.
			items = x.bruteForce(q, kc, allowed, s)
		} else {
			s.sel = append(s.sel[:0], s.res...)
			slices.SortFunc(s.sel, cmpItem)
			items = s.sel[:min(kc, len(s.sel))]
		}
	}
	if x.rf != nil {
		items = x.refine(q, items, s)
	}
	return x.hits(items[:min(k, len(items))]), nil
}

// distTo is the internal distance of node v to the query q: over the
// quantized codes (with q prepared in s.qq) or the float32 vectors.
func (x *Index) distTo(q []float32, v uint32, s *scratch) float32 {
	if x.qz != nil {
		return s.qq.Dist(v)
	}
	return x.dist(q, x.vec(v))
}

// useBruteForce is the cost model for filtered searches. An unfiltered walk
// with list size ef computes roughly ef*M distances; when only a fraction
// p = allowed/n of rows pass the filter, the walk has to look at about 1/p
// times as many nodes to collect ef allowed ones, ef*M*n/allowed in all,
// each with a random memory access and heap work. The exact scan computes
// allowed distances over mostly sequential memory. The scan is chosen when
// allowed*allowed <= ef*M*n (for 20,000 rows, M=16, ef=64: up to ~22% of
// rows allowed), and always when allowed <= ef.
func (x *Index) useBruteForce(nAllowed, ef int) bool {
	if nAllowed >= x.n {
		return false
	}
	if nAllowed <= ef {
		return true
	}
	a := float64(nAllowed)
	return a*a <= float64(ef)*float64(x.cfg.M)*float64(x.n)
}

// greedy walks layer l (>= 1) from cur towards q until no neighbour is
// closer. It takes no locks: searches never overlap Add.
func (x *Index) greedy(q []float32, cur item, l int, s *scratch) item {
	for changed := true; changed; {
		changed = false
		b := x.block(cur.id, l)
		for _, v := range b[1 : 1+b[0]] {
			if d := x.distTo(q, v, s); d < cur.d {
				cur = item{d, v}
				changed = true
			}
		}
	}
	return cur
}

// searchBase is the beam search on layer 0. It leaves in s.res the (up to)
// ef closest allowed nodes it finds. Disallowed nodes are expanded like
// any other but never enter s.res.
func (x *Index) searchBase(q []float32, ep item, ef int, allowed []bool, s *scratch) {
	s.vis.reset(x.n)
	vis, gen := s.vis.marks[:x.n], s.vis.gen
	cand, res := s.cand[:0], s.res[:0]
	links, stride := x.links0, x.maxM0+1
	vecs, dim := x.vecs, x.dim
	var codes []byte
	csize := 0
	if x.qz != nil {
		codes, csize = x.qz.Data(), x.qz.Size()
	}

	vis[ep.id] = gen
	cand.push(ep)
	if allowed == nil || allowed[ep.id] {
		res.push(ep)
	}
	nb := s.nbuf[:0]
	for len(cand) > 0 {
		c := cand.pop()
		if len(res) >= ef && before(res[0], c) {
			break
		}
		o := int(c.id) * stride
		b := links[o : o+stride]
		// Gather the unvisited neighbours and start loading their vectors,
		// so that the memory fetches overlap instead of stalling each
		// distance computation in turn.
		nb = nb[:0]
		for _, v := range b[1 : 1+b[0]] {
			if vis[v] == gen {
				continue
			}
			vis[v] = gen
			nb = append(nb, v)
			if codes != nil {
				prefetch(unsafe.Pointer(&codes[int(v)*csize]))
			} else if vecs != nil {
				prefetch(unsafe.Pointer(&vecs[int(v)*dim]))
			}
		}
		if x.qz != nil {
			if cap(s.dists) < len(nb) {
				s.dists = make([]float32, len(nb))
			}
			s.dists = s.dists[:len(nb)]
			s.qq.DistMany(nb, s.dists)
		}
		for i, v := range nb {
			var it item
			if x.qz != nil {
				it = item{s.dists[i], v}
			} else {
				vo := int(v) * dim
				it = item{x.dist(q, vecs[vo:vo+dim:vo+dim]), v}
			}
			if len(res) < ef || before(it, res[0]) {
				cand.push(it)
				if allowed == nil || allowed[v] {
					if len(res) < ef {
						res.push(it)
					} else {
						res.replaceTop(it)
					}
				}
			}
		}
		// The closest candidate is most likely expanded next: start
		// loading its link block.
		if len(cand) > 0 {
			prefetch(unsafe.Pointer(&links[int(cand[0].id)*stride]))
		}
	}
	s.cand, s.res, s.nbuf = cand, res, nb
}

// bruteForce scores every allowed row and returns the k best, best first
// (exact for a float32 index; by quantized distance otherwise).
func (x *Index) bruteForce(q []float32, k int, allowed []bool, s *scratch) []item {
	res := s.res[:0]
	for id := range x.n {
		if allowed != nil && !allowed[id] {
			continue
		}
		it := item{x.distTo(q, uint32(id), s), uint32(id)}
		if len(res) < k {
			res.push(it)
		} else if before(it, res[0]) {
			res.replaceTop(it)
		}
	}
	s.res = res
	s.sel = append(s.sel[:0], res...)
	slices.SortFunc(s.sel, cmpItem)
	return s.sel
}

// hits converts sorted items into Milvus-scored hits.
func (x *Index) hits(items []item) []index.Hit {
	out := make([]index.Hit, len(items))
	for i, it := range items {
		out[i] = index.Hit{Row: int32(it.id), Score: x.score(it.d)}
	}
	return out
}
