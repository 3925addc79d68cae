package hnsw

import (
	"encoding/binary"
	"fmt"
	"math/bits"
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
	modeAuto  searchMode = iota // pick by the cost model in plan
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
	if mode == modeAuto {
		mode = x.plan(allowed != nil, nAllowed, ef)
	}
	var items []item
	if mode == modeBrute {
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

// plan is the cost model for a search: the exact scan of the allowed rows
// or the graph walk.
//
// With a fraction p = allowed/n of the rows allowed, a walk with list size
// ef must expand about ef allowed nodes; the walk reaches one per
// 1/p nodes it scores, so it scores about ef·M0·max(1, 1/(p·M0)) rows, each
// with a link block, heap work and a random vector fetch. The exact scan
// scores every allowed row with none of that, about four times cheaper per
// row (measured: ~80-100 ns against ~350-500 ns of CPU at 200,000 × 128).
// So the scan is chosen when allowed <= 4·ef·M0·max(1, 1/(p·M0)), and
// always when allowed <= ef. For 200,000 rows, M 16, ef 64 that is up to
// ~3 % of the rows (docs/bench/filtered-search.md).
func (x *Index) plan(filtered bool, nAllowed, ef int) searchMode {
	if !filtered || nAllowed >= x.n {
		return modeGraph
	}
	if nAllowed <= ef {
		return modeBrute
	}
	m0 := float64(x.maxM0)
	p := float64(nAllowed) / float64(x.n)
	graphCost := float64(ef) * m0 * max(1, 1/(p*m0))
	if float64(nAllowed) <= 4*graphCost {
		return modeBrute
	}
	return modeGraph
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
// (exact for a float32 index; by quantized distance otherwise). With a
// filter it reads the mask eight rows at a time, skipping runs of rejected
// rows, and starts loading a batch of allowed rows' float vectors before
// scoring them, so that sparse rows do not stall on memory one by one.
func (x *Index) bruteForce(q []float32, k int, allowed []bool, s *scratch) []item {
	res := s.res[:0]
	offer := func(id uint32) {
		it := item{x.distTo(q, id, s), id}
		if len(res) < k {
			res.push(it)
		} else if before(it, res[0]) {
			res.replaceTop(it)
		}
	}
	if allowed == nil {
		for id := range x.n {
			offer(uint32(id))
		}
	} else {
		batch := s.nbuf[:0]
		flush := func() {
			for _, id := range batch {
				offer(id)
			}
			batch = batch[:0]
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(allowed))), len(allowed))
		i := 0
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			for w != 0 {
				id := uint32(i + bits.TrailingZeros64(w)/8)
				w &= w - 1
				batch = append(batch, id)
				x.prefetchRow(id)
			}
			if len(batch) >= scanBatch {
				flush()
			}
		}
		for ; i < len(b); i++ {
			if b[i] != 0 {
				batch = append(batch, uint32(i))
			}
		}
		flush()
		s.nbuf = batch
	}
	s.res = res
	s.sel = append(s.sel[:0], res...)
	slices.SortFunc(s.sel, cmpItem)
	return s.sel
}

// prefetchRow starts loading every cache line of row id's vector.
func (x *Index) prefetchRow(id uint32) {
	if x.qz != nil {
		return // a quantized graph scores codes; its float vectors are gone
	}
	o := int(id) * x.dim
	for i := 0; i < x.dim; i += 32 { // prefetch covers 128 bytes
		prefetch(unsafe.Pointer(&x.vecs[o+i]))
	}
}

// scanBatch is how many allowed rows bruteForce gathers (and prefetches)
// before scoring them.
const scanBatch = 16

// hits converts sorted items into Milvus-scored hits.
func (x *Index) hits(items []item) []index.Hit {
	out := make([]index.Hit, len(items))
	for i, it := range items {
		out[i] = index.Hit{Row: int32(it.id), Score: x.score(it.d)}
	}
	return out
}
