package diskann

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/quant"
)

// cand is a candidate of the search list: a node and its PQ distance.
type cand struct {
	id   uint32
	d    float32
	done bool // expanded
}

// scratch is the per-search state, pooled.
type scratch struct {
	pq    quant.Query
	q     []float32
	rec   []byte
	list  []cand
	marks []uint16 // visited generation of each node
	gen   uint16
	hits  []index.Hit
}

// reset prepares the visited marks for a search over n nodes.
func (s *scratch) reset(n int) {
	if len(s.marks) < n {
		s.marks = make([]uint16, n)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 {
		clear(s.marks)
		s.gen = 1
	}
}

// parseRecord checks a node record (its degree and neighbour ids) and
// returns its degree.
func (x *Index) parseRecord(rec []byte) (int, error) {
	deg := int(getU32(rec[4*x.dim:]))
	if deg > x.maxDegree {
		return 0, fmt.Errorf("degree %d exceeds max_degree %d", deg, x.maxDegree)
	}
	for j := range deg {
		if id := x.neighbor(rec, j); int(id) >= x.n {
			return 0, fmt.Errorf("neighbour %d of %d rows", id, x.n)
		}
	}
	return deg, nil
}

// neighbor returns neighbour j of a record.
func (x *Index) neighbor(rec []byte, j int) uint32 { return getU32(rec[4*x.dim+4+4*j:]) }

// exact returns the internal distance of the query to the vector of a
// record: in place on a little-endian machine (record buffers start at a
// multiple of 8 bytes), decoded otherwise.
func (x *Index) exact(q []float32, rec []byte) float32 {
	if littleEndian {
		return x.dist(q, unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(rec))), x.dim))
	}
	v := make([]float32, x.dim)
	for j := range v {
		v[j] = math.Float32frombits(getU32(rec[4*j:]))
	}
	return x.dist(q, v)
}

// littleEndian is whether this machine stores float32 as the file does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// read reads the record of node id into s.rec.
func (x *Index) read(id uint32, s *scratch) error {
	if _, err := x.src.ReadAt(s.rec, x.recOff+int64(id)*int64(x.recSize)); err != nil {
		return fmt.Errorf("diskann: read node %d: %w", id, err)
	}
	return nil
}

// Search implements index.Index. params.Ef is the search list size
// (search_list; 0 selects DefaultSearchList).
func (x *Index) Search(q []float32, k int, params index.SearchParams, allowed []bool) ([]index.Hit, error) {
	if len(q) != x.dim {
		return nil, fmt.Errorf("diskann: query has dim %d, index has %d", len(q), x.dim)
	}
	if k < 0 {
		return nil, fmt.Errorf("diskann: k(%d) must not be negative", k)
	}
	if allowed != nil && len(allowed) != x.n {
		return nil, fmt.Errorf("diskann: allowed mask has %d entries, index has %d rows", len(allowed), x.n)
	}
	l, err := SearchList(params.Ef, k)
	if err != nil {
		return nil, err
	}
	if k == 0 || x.n == 0 {
		return nil, nil
	}
	s, _ := x.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	defer x.pool.Put(s)
	s.q = append(s.q[:0], q...)
	if x.metric == index.Cosine {
		normalize(s.q)
	}
	if cap(s.rec) < x.recSize {
		s.rec = make([]byte, x.recSize)
	}
	s.rec = s.rec[:x.recSize]
	s.pq.Prepare(x.pq, s.q, x.ip)
	s.hits = s.hits[:0]

	cnt := index.AllowedCount(allowed, x.n, params)
	switch {
	case cnt == 0:
		return nil, nil
	case allowed != nil && cnt <= l:
		err = x.scanExact(allowed, s)
	case allowed != nil && cnt < x.n/10:
		err = x.scanPQ(allowed, l, s)
	default:
		err = x.beam(l, allowed, s)
		if err == nil && len(s.hits) < min(k, cnt) {
			s.hits = s.hits[:0]
			err = x.scanPQ(allowed, l, s)
		}
	}
	if err != nil {
		return nil, err
	}
	if x.ip { // internal distances are negated inner products
		for i := range s.hits {
			s.hits[i].Score = -s.hits[i].Score
		}
	}
	index.SortHits(s.hits, x.metric)
	return slices.Clone(s.hits[:min(k, len(s.hits))]), nil
}

// beam runs the graph search with a candidate list of l nodes and leaves
// in s.hits every expanded node that allowed admits, scored by exact
// internal distance.
func (x *Index) beam(l int, allowed []bool, s *scratch) error {
	s.reset(x.n)
	s.list = s.list[:0]
	x.seed(l, s)
	next := 0 // no unexpanded candidate before next
	for next < len(s.list) {
		id := s.list[next].id
		if err := x.read(id, s); err != nil {
			return err
		}
		d := x.exact(s.q, s.rec)
		if allowed == nil || allowed[id] {
			s.hits = append(s.hits, index.Hit{Row: int32(id), Score: d})
		}
		// The expanded node is ranked by its exact distance from now on.
		s.list = slices.Delete(s.list, next, next+1)
		if p := s.insert(l, cand{id: id, d: d, done: true}); p < next {
			next = p
		}
		deg := int(getU32(s.rec[4*x.dim:]))
		if deg > x.maxDegree {
			return fmt.Errorf("%w: node %d has degree %d", ErrCorrupt, id, deg)
		}
		for j := range deg {
			nb := x.neighbor(s.rec, j)
			if int(nb) >= x.n {
				return fmt.Errorf("%w: node %d links to %d", ErrCorrupt, id, nb)
			}
			if s.marks[nb] == s.gen {
				continue
			}
			s.marks[nb] = s.gen
			p := s.insert(l, cand{id: nb, d: s.pq.Dist(nb)})
			if p < next {
				next = p
			}
		}
		for next < len(s.list) && s.list[next].done {
			next++
		}
	}
	return nil
}

// entries returns the number of entry nodes of a graph of n nodes: the
// medoid and entries-1 rows spread evenly over the row numbers.
func entries(n int) int { return min(n, max(256, int(math.Sqrt(float64(n))))) }

// seed starts the candidate list of a search with the best l of the entry
// nodes by PQ distance: the medoid and rows i*n/e for i in [1, e), e =
// entries(n). Starting from the entry nearest the query, rather than from
// the medoid alone, keeps a search on clustered data from spending its
// list in the wrong cluster; the PQ distances of the entries cost no
// read.
func (x *Index) seed(l int, s *scratch) {
	e := entries(x.n)
	for i := range e {
		id := x.medoid
		if i > 0 {
			id = uint32(i * x.n / e)
		}
		if s.marks[id] == s.gen {
			continue
		}
		s.marks[id] = s.gen
		s.insert(l, cand{id: id, d: s.pq.Dist(id)})
	}
}

// insert adds c to the candidate list, kept sorted by distance and at
// most l long, and returns its position (l when it is not kept).
func (s *scratch) insert(l int, c cand) int {
	if len(s.list) == l && c.d >= s.list[l-1].d {
		return l
	}
	p, _ := slices.BinarySearchFunc(s.list, c.d, func(e cand, d float32) int {
		if e.d <= d {
			return -1
		}
		return 1
	})
	if len(s.list) == l {
		s.list = s.list[:l-1]
	}
	s.list = slices.Insert(s.list, p, c)
	return p
}

// scanExact leaves in s.hits every row allowed admits, scored exactly
// from its record.
func (x *Index) scanExact(allowed []bool, s *scratch) error {
	for id, ok := range allowed {
		if !ok {
			continue
		}
		if err := x.read(uint32(id), s); err != nil {
			return err
		}
		s.hits = append(s.hits, index.Hit{Row: int32(id), Score: x.exact(s.q, s.rec)})
	}
	return nil
}

// scanPQ scores every row allowed admits by its PQ code and leaves in
// s.hits the best l of them, scored exactly from their records.
func (x *Index) scanPQ(allowed []bool, l int, s *scratch) error {
	s.list = s.list[:0]
	for id := range x.n {
		if allowed != nil && !allowed[id] {
			continue
		}
		s.insert(l, cand{id: uint32(id), d: s.pq.Dist(uint32(id))})
	}
	for _, c := range s.list {
		if err := x.read(c.id, s); err != nil {
			return err
		}
		s.hits = append(s.hits, index.Hit{Row: int32(c.id), Score: x.exact(s.q, s.rec)})
	}
	return nil
}
