package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/strata-db/strata/internal/index"
)

// Index is an inverted index over the sparse rows of one segment: one
// posting list per dimension (rows ascending, with their values and the
// largest absolute value of the list) plus the rows themselves, which exact
// refinement needs when values were dropped.
//
// Search is safe for concurrent use; an Index is immutable after Build or
// Unmarshal.
type Index struct {
	kind           Kind
	dropRatioBuild float32
	dropped        bool // some values were left out of the posting lists

	// Forward rows: row r holds fwdIdx/fwdVal[rowOff[r]:rowOff[r+1]].
	rowOff []uint64
	fwdIdx []uint32
	fwdVal []float32

	// Posting lists: list l is dimension dims[l] (ascending) and holds
	// postRow/postVal[listOff[l]:listOff[l+1]], rows ascending.
	dims    []uint32
	listOff []uint64
	maxAbs  []float32
	postRow []uint32
	postVal []float32

	// Block maxima (derived, not stored): list l's blocks are
	// blockMax[blockOff[l]:blockOff[l+1]], see buildBlocks.
	blockOff []uint64
	blockMax []float32

	scratch sync.Pool // *scratch

	// Row lengths (derived on first BM25 use, not stored): see docLens.
	lensOnce  sync.Once
	lens      []float32
	lensTotal float64
}

// scratch is the per-search state of the term-at-a-time search and of
// searchWAND.
type scratch struct {
	scores  []float32
	seen    []bool
	touched []uint32
	acc     []float32 // searchWAND's window accumulator
	bits    []uint64  // searchWAND's rows touched in the window
	partial []int64   // searchMaxScoreBM25's partial scores
	sel     []int64   // kthLargest's scratch
}

// Build indexes rows (each in the Milvus wire format; see Validate, which
// Build applies to every row). A build stops soon after ctx ends (it checks
// every checkEvery rows and between its passes) and returns ctx.Err().
func Build(ctx context.Context, rows [][]byte, p BuildParams) (*Index, error) {
	if p.DropRatioBuild < 0 || p.DropRatioBuild >= 1 {
		return nil, fmt.Errorf("sparse: invalid drop_ratio_build: %v, must be in range [0, 1)", p.DropRatioBuild)
	}
	if p.Kind != Inverted && p.Kind != WAND {
		return nil, fmt.Errorf("sparse: unknown index kind %d", p.Kind)
	}
	if uint64(len(rows)) >= math.MaxInt32 {
		return nil, fmt.Errorf("sparse: %d rows is more than an index holds", len(rows))
	}
	x := &Index{kind: p.Kind, dropRatioBuild: float32(p.DropRatioBuild), rowOff: make([]uint64, 1, len(rows)+1)}
	for r, row := range rows {
		if r%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := Validate(row); err != nil {
			return nil, fmt.Errorf("sparse: row %d: %w", r, err)
		}
		v := Decode(row)
		x.fwdIdx = append(x.fwdIdx, v.Indices...)
		x.fwdVal = append(x.fwdVal, v.Values...)
		x.rowOff = append(x.rowOff, uint64(len(x.fwdIdx)))
	}
	threshold := dropThreshold(x.fwdVal, p.DropRatioBuild)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.buildPostings(threshold)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.buildBlocks()
	return x, nil
}

// checkEvery is how many rows Build decodes between two checks of its
// context.
const checkEvery = 4096

// dropThreshold returns the absolute value below which the smallest ratio
// of vals fall (0 when nothing is dropped).
func dropThreshold(vals []float32, ratio float64) float32 {
	n := int(ratio * float64(len(vals)))
	if n <= 0 {
		return 0
	}
	abs := make([]float32, len(vals))
	for i, v := range vals {
		abs[i] = float32(math.Abs(float64(v)))
	}
	slices.Sort(abs)
	return abs[n]
}

// buildPostings transposes the forward rows into posting lists, leaving out
// values whose absolute value is below threshold.
func (x *Index) buildPostings(threshold float32) {
	keep := func(v float32) bool { return float32(math.Abs(float64(v))) >= threshold }
	counts := map[uint32]uint64{}
	for _, i := range x.fwdIdx {
		counts[i]++
	}
	x.dims = make([]uint32, 0, len(counts))
	for d := range counts {
		x.dims = append(x.dims, d)
	}
	slices.Sort(x.dims)
	slot := make(map[uint32]int, len(x.dims))
	x.listOff = make([]uint64, len(x.dims)+1)
	for l, d := range x.dims {
		slot[d] = l
	}
	var kept uint64
	sizes := make([]uint64, len(x.dims))
	for j, d := range x.fwdIdx {
		if keep(x.fwdVal[j]) {
			sizes[slot[d]]++
			kept++
		}
	}
	x.dropped = kept < uint64(len(x.fwdIdx))
	for l, s := range sizes {
		x.listOff[l+1] = x.listOff[l] + s
	}
	x.postRow = make([]uint32, kept)
	x.postVal = make([]float32, kept)
	x.maxAbs = make([]float32, len(x.dims))
	fill := slices.Clone(x.listOff[:len(x.dims)])
	for r := 0; r+1 < len(x.rowOff); r++ {
		for j := x.rowOff[r]; j < x.rowOff[r+1]; j++ {
			v := x.fwdVal[j]
			if !keep(v) {
				continue
			}
			l := slot[x.fwdIdx[j]]
			x.postRow[fill[l]] = uint32(r)
			x.postVal[fill[l]] = v
			fill[l]++
			x.maxAbs[l] = max(x.maxAbs[l], float32(math.Abs(float64(v))))
		}
	}
}

// Kind returns the index's search algorithm.
func (x *Index) Kind() Kind { return x.kind }

// DropRatioBuild returns the build parameter the index was built with.
func (x *Index) DropRatioBuild() float64 { return float64(x.dropRatioBuild) }

// Len returns the number of indexed rows.
func (x *Index) Len() int { return len(x.rowOff) - 1 }

// MemoryBytes estimates the bytes the index holds.
func (x *Index) MemoryBytes() int64 {
	return int64(8*len(x.rowOff) + 8*len(x.fwdIdx) + 12*len(x.dims) + 8*len(x.listOff) + 8*len(x.postRow) +
		8*len(x.blockOff) + 4*len(x.blockMax))
}

// row returns row r as a Vector sharing the index's memory.
func (x *Index) row(r uint32) Vector {
	lo, hi := x.rowOff[r], x.rowOff[r+1]
	return Vector{Indices: x.fwdIdx[lo:hi], Values: x.fwdVal[lo:hi]}
}

// term is one query dimension present in the index.
type term struct {
	list int     // posting list
	q    float32 // query value
}

// ErrBadQuery is returned for a query vector that is not a valid sparse
// vector (unsorted indices, mismatched lengths, non-finite values).
var ErrBadQuery = errors.New("sparse: invalid query vector")

// Search returns the k best rows by inner product with q, best first, ties
// by ascending row. Only rows with a positive score are hits, as with
// Milvus: a row that shares no dimension with the query is never returned.
// allowed, when non-nil, has Len() entries and masks rows out.
//
// With no values dropped (drop_ratio_build and drop_ratio_search 0) the
// result equals an exact search, for both kinds. Otherwise the search
// collects k×RefineFactor candidates from the pruned lists and query and
// rescores them exactly with the full rows.
func (x *Index) Search(q Vector, k int, p SearchParams, allowed []bool) ([]index.Hit, error) {
	if err := x.checkSearch(q, k, p, allowed); err != nil {
		return nil, err
	}
	if k == 0 || len(q.Indices) == 0 || x.Len() == 0 {
		return nil, nil
	}
	terms, droppedQ := x.terms(q, p.DropRatioSearch)
	kk := k
	refine := x.dropped || droppedQ
	if refine {
		rf := p.RefineFactor
		if rf == 0 {
			rf = DefaultRefineFactor
		}
		kk = k * rf
	}
	var hits []index.Hit
	if x.kind == WAND && x.wandPays(terms) {
		hits, _ = x.searchWAND(terms, kk, allowed, wandAuto)
	} else {
		hits = x.searchInverted(terms, kk, allowed)
	}
	if !refine {
		return hits, nil
	}
	out := hits[:0]
	for _, h := range hits {
		if s := Dot(q, x.row(uint32(h.Row))); s > 0 {
			out = append(out, index.Hit{Row: h.Row, Score: s})
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	index.SortHits(out, index.IP)
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// checkSearch validates the arguments of a search.
func (x *Index) checkSearch(q Vector, k int, p SearchParams, allowed []bool) error {
	if k < 0 {
		return fmt.Errorf("sparse: k %d is negative", k)
	}
	if err := CheckDropRatioSearch(p.DropRatioSearch); err != nil {
		return fmt.Errorf("sparse: %w", err)
	}
	if p.RefineFactor < 0 {
		return fmt.Errorf("sparse: refine_factor %d is negative", p.RefineFactor)
	}
	if allowed != nil && len(allowed) != x.Len() {
		return fmt.Errorf("sparse: allowed has %d entries, the index %d rows", len(allowed), x.Len())
	}
	if len(q.Indices) != len(q.Values) {
		return fmt.Errorf("%w: %d indices and %d values", ErrBadQuery, len(q.Indices), len(q.Values))
	}
	for i := 1; i < len(q.Indices); i++ {
		if q.Indices[i] <= q.Indices[i-1] {
			return fmt.Errorf("%w: indices are not strictly ascending", ErrBadQuery)
		}
	}
	return nil
}

// terms maps the query's dimensions to posting lists, in ascending
// dimension order, leaving out the smallest ratio of the query's values
// (by absolute value). It reports whether any query value was dropped.
func (x *Index) terms(q Vector, ratio float64) ([]term, bool) {
	threshold := dropThreshold(q.Values, ratio)
	terms := make([]term, 0, len(q.Indices))
	dropped := false
	for i, d := range q.Indices {
		v := q.Values[i]
		if float32(math.Abs(float64(v))) < threshold {
			dropped = true
			continue
		}
		if v == 0 {
			continue
		}
		l := sort.Search(len(x.dims), func(j int) bool { return x.dims[j] >= d })
		if l < len(x.dims) && x.dims[l] == d && x.listOff[l] < x.listOff[l+1] {
			terms = append(terms, term{list: l, q: v})
		}
	}
	return terms, dropped
}

func (x *Index) getScratch() *scratch {
	if s, ok := x.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{}
}

// searchInverted accumulates the score of every row in the query's posting
// lists, term by term in ascending dimension order, then selects the top k.
func (x *Index) searchInverted(terms []term, k int, allowed []bool) []index.Hit {
	s := x.getScratch()
	defer x.scratch.Put(s)
	if s.scores == nil {
		s.scores, s.seen = make([]float32, x.Len()), make([]bool, x.Len())
	}
	s.touched = s.touched[:0]
	for _, t := range terms {
		lo, hi := x.listOff[t.list], x.listOff[t.list+1]
		rows, vals := x.postRow[lo:hi], x.postVal[lo:hi]
		for i, r := range rows {
			if !s.seen[r] {
				s.seen[r] = true
				s.touched = append(s.touched, r)
			}
			s.scores[r] += float32(t.q * vals[i])
		}
	}
	top := newTopK(k)
	for _, r := range s.touched {
		sc := s.scores[r]
		s.scores[r], s.seen[r] = 0, false
		if sc > 0 && (allowed == nil || allowed[r]) {
			top.offer(r, sc)
		}
	}
	return top.sorted()
}

// blockSize is the number of postings that share one block maximum.
const blockSize = 64

// buildBlocks derives the block maxima of every posting list: block b of
// list l covers postings listOff[l]+b*blockSize onwards.
func (x *Index) buildBlocks() {
	x.blockOff = make([]uint64, len(x.dims)+1)
	for l := range x.dims {
		n := x.listOff[l+1] - x.listOff[l]
		x.blockOff[l+1] = x.blockOff[l] + (n+blockSize-1)/blockSize
	}
	x.blockMax = make([]float32, x.blockOff[len(x.dims)])
	for l := range x.dims {
		for j := x.listOff[l]; j < x.listOff[l+1]; j++ {
			b := x.blockOff[l] + (j-x.listOff[l])/blockSize
			x.blockMax[b] = max(x.blockMax[b], float32(math.Abs(float64(x.postVal[j]))))
		}
	}
}
