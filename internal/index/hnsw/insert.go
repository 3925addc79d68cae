package hnsw

import (
	"slices"
	"unsafe"
)

// scratch is the per-goroutine working memory of a build worker or a
// search; it is reused so that steady-state operations do not allocate.
type scratch struct {
	vis    visitedSet
	cand   minHeap
	res    maxHeap
	nbuf   []uint32  // copy of a link block taken under its lock
	sel    []item    // candidates sorted by distance, then selected links
	layers [][]item  // the new node's selected links, per layer
	prun   []item    // heuristic output when shrinking a neighbour
	q      []float32 // normalised query (COSINE)
}

func newScratch() *scratch { return &scratch{} }

// insert links node id into the graph. It is called by Add's workers
// concurrently: every read or write of a link block happens under that
// node's lock, and entry/maxLevel under entryMu.
func (x *Index) insert(id uint32, s *scratch) {
	level := int(x.levels[id])
	x.entryMu.Lock()
	ep, top := x.entry, x.maxLevel
	if ep < 0 {
		x.entry, x.maxLevel = int32(id), level
		x.entryMu.Unlock()
		return
	}
	// A node that raises the top layer keeps entryMu for its whole insert
	// (as in the reference implementation), so that concurrent inserts do
	// not descend from an entry point whose upper layers are still empty.
	raises := level > top
	if !raises {
		x.entryMu.Unlock()
	}

	q := x.vec(id)
	cur := item{x.dist(q, x.vec(uint32(ep))), uint32(ep)}
	for l := top; l > level; l-- {
		cur = x.greedyLocked(q, cur, l, s)
	}
	// Choose the links on every layer first and publish them afterwards:
	// once a back-link makes id reachable, another worker may start its
	// own search from id, and it must then find id's lists complete on
	// every layer. (Linking layer by layer would let a worker descend
	// through id onto a layer where id has no links yet, leaving that
	// worker with id as its only neighbour.)
	lo := min(level, top)
	if cap(s.layers) <= lo {
		s.layers = make([][]item, lo+1)
	}
	s.layers = s.layers[:lo+1]
	for l := lo; l >= 0; l-- {
		x.searchLayerLocked(q, cur, x.cfg.EfConstruction, l, s)
		// Sort the candidates closest first.
		s.sel = append(s.sel[:0], s.res...)
		slices.SortFunc(s.sel, cmpItem)
		cur = s.sel[0]
		// The new node keeps at most M links on every layer (as in the
		// paper); its neighbours may later add up to maxM0 on layer 0.
		s.layers[l] = x.selectHeuristic(s.sel, x.cfg.M, s.layers[l][:0])
	}
	mu := &x.locks[id]
	mu.Lock()
	for l, sel := range s.layers {
		b := x.block(id, l)
		b[0] = uint32(len(sel))
		for i, it := range sel {
			b[1+i] = it.id
		}
	}
	mu.Unlock()
	for l, sel := range s.layers {
		maxM := x.maxM
		if l == 0 {
			maxM = x.maxM0
		}
		x.connect(id, l, sel, maxM, s)
	}
	if raises {
		x.entry, x.maxLevel = int32(id), level
		x.entryMu.Unlock()
	}
}

func cmpItem(a, b item) int {
	if before(a, b) {
		return -1
	}
	if before(b, a) {
		return 1
	}
	return 0
}

// links copies the neighbour ids of node id on layer l into s.nbuf under
// the node's lock.
func (x *Index) links(id uint32, l int, s *scratch) []uint32 {
	mu := &x.locks[id]
	mu.Lock()
	b := x.block(id, l)
	s.nbuf = append(s.nbuf[:0], b[1:1+b[0]]...)
	mu.Unlock()
	return s.nbuf
}

// greedyLocked walks layer l from cur towards q until no neighbour is
// closer, and returns the closest node found.
func (x *Index) greedyLocked(q []float32, cur item, l int, s *scratch) item {
	for changed := true; changed; {
		changed = false
		for _, v := range x.links(cur.id, l, s) {
			if d := x.dist(q, x.vec(v)); d < cur.d {
				cur = item{d, v}
				changed = true
			}
		}
	}
	return cur
}

// searchLayerLocked is the build-time beam search on layer l: it leaves the
// ef closest nodes it finds in s.res.
func (x *Index) searchLayerLocked(q []float32, ep item, ef, l int, s *scratch) {
	s.vis.reset(x.n)
	vis, gen := s.vis.marks, s.vis.gen
	s.cand, s.res = s.cand[:0], s.res[:0]
	vis[ep.id] = gen
	s.cand.push(ep)
	s.res.push(ep)
	for len(s.cand) > 0 {
		c := s.cand.pop()
		if before(s.res[0], c) && len(s.res) >= ef {
			break
		}
		// Keep the unvisited neighbours and start loading their vectors
		// before computing any distance (see searchBase).
		nb := x.links(c.id, l, s)
		j := 0
		for _, v := range nb {
			if vis[v] != gen {
				vis[v] = gen
				nb[j] = v
				j++
				prefetch(unsafe.Pointer(&x.vecs[int(v)*x.dim]))
			}
		}
		for _, v := range nb[:j] {
			it := item{x.dist(q, x.vec(v)), v}
			if len(s.res) < ef {
				s.cand.push(it)
				s.res.push(it)
			} else if before(it, s.res[0]) {
				s.cand.push(it)
				s.res.replaceTop(it)
			}
		}
	}
}

// selectHeuristic implements the neighbour selection heuristic of the HNSW
// paper (algorithm 4, without candidate extension or keeping pruned
// links): walking cands closest first, a candidate is kept only if it is
// closer to the base node than to every candidate already kept, which
// spreads links over different directions. cands must be sorted closest
// first; the kept items are appended to out.
func (x *Index) selectHeuristic(cands []item, m int, out []item) []item {
	if len(cands) <= m {
		return append(out, cands...)
	}
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		cv := x.vec(c.id)
		good := true
		for _, r := range out {
			if x.dist(cv, x.vec(r.id)) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		}
	}
	return out
}

// connect adds a back link to id from each node of sel on layer l,
// shrinking that node's list with the heuristic when it is full.
func (x *Index) connect(id uint32, l int, sel []item, maxM int, s *scratch) {
	for _, e := range sel {
		mu := &x.locks[e.id]
		mu.Lock()
		b := x.block(e.id, l)
		cnt := int(b[0])
		if cnt < maxM {
			b[1+cnt] = id
			b[0]++
			mu.Unlock()
			continue
		}
		// Full: choose maxM among the current links and the new node.
		ev := x.vec(e.id)
		cands := append(s.sel[:0], item{e.d, id})
		for _, v := range b[1 : 1+cnt] {
			cands = append(cands, item{x.dist(ev, x.vec(v)), v})
		}
		slices.SortFunc(cands, cmpItem)
		keep := x.selectHeuristic(cands, maxM, s.prun[:0])
		b[0] = uint32(len(keep))
		for i, it := range keep {
			b[1+i] = it.id
		}
		mu.Unlock()
		s.sel, s.prun = cands, keep
	}
}
