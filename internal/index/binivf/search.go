package binivf

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/index"
)

// scratch is the per-search working memory, pooled across searches.
type scratch struct {
	lists []index.Hit // the nprobe nearest lists, a max-heap (Row = list)
	res   []index.Hit // the best rows so far, a max-heap on (Score, Row)
	dists []float32   // the distances of one list's rows
}

// worse reports whether a ranks after b: a larger distance, or an equal one
// and a larger row.
func worse(a, b index.Hit) bool {
	return a.Score > b.Score || (a.Score == b.Score && a.Row > b.Row)
}

// SearchBinary returns the k nearest rows to the packed query q, best first
// (ties by ascending row), considering only rows with allowed[row] == true
// when allowed is non-nil. params.Nprobe is the number of lists scanned; 0
// selects min(DefaultNprobe, nlist), and values outside [1, nlist] are
// rejected. Scores are exact: the number of differing bits for HAMMING, the
// Jaccard distance for JACCARD. See index.BinaryIndex for the contract.
func (x *Index) SearchBinary(q []byte, k int, params index.SearchParams, allowed []bool) ([]index.Hit, error) {
	if len(q) != x.width {
		return nil, fmt.Errorf("binivf: query has %d bytes, the index's vectors have %d (dim %d)", len(q), x.width, x.dim)
	}
	if k < 0 {
		return nil, fmt.Errorf("binivf: k(%d) must not be negative", k)
	}
	nlist := x.cfg.Nlist
	nprobe := params.Nprobe
	if nprobe == 0 {
		nprobe = min(DefaultNprobe, nlist)
	}
	if nprobe < 1 || nprobe > nlist {
		return nil, fmt.Errorf("binivf: nprobe(%d) out of range [1, %d]", nprobe, nlist)
	}
	if allowed != nil && len(allowed) != x.n {
		return nil, fmt.Errorf("binivf: allowed mask has %d entries, index has %d rows", len(allowed), x.n)
	}
	if k == 0 || x.n == 0 {
		return []index.Hit{}, nil
	}
	if allowed != nil {
		nAllowed := index.AllowedCount(allowed, x.n, params)
		if nAllowed*nlist <= x.n*nprobe {
			nprobe = nlist // as cheap as probing, and exact
		}
	}
	s, _ := x.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	defer x.pool.Put(s)
	w := x.width
	// Keep the nprobe nearest lists in a max-heap (Row is the list).
	s.lists = s.lists[:0]
	for l := range nlist {
		s.lists = offer(s.lists, nprobe, index.Hit{Row: int32(l), Score: x.dist(q, x.centroids[l*w:(l+1)*w])})
	}
	s.res = s.res[:0]
	for _, l := range s.lists {
		x.scan(q, int(l.Row), k, allowed, s)
	}
	if len(s.res) < k && nprobe < nlist {
		// Too few allowed rows in the probed lists: go on with the others,
		// nearest first, until k hits.
		probed := make([]bool, nlist)
		for _, l := range s.lists {
			probed[l.Row] = true
		}
		rest := make([]index.Hit, 0, nlist-nprobe)
		for l := range nlist {
			if !probed[l] {
				rest = append(rest, index.Hit{Row: int32(l), Score: x.dist(q, x.centroids[l*w:(l+1)*w])})
			}
		}
		slices.SortFunc(rest, func(a, b index.Hit) int {
			if c := cmp.Compare(a.Score, b.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.Row, b.Row)
		})
		for _, l := range rest {
			if len(s.res) >= k {
				break
			}
			x.scan(q, int(l.Row), k, allowed, s)
		}
	}
	out := append([]index.Hit(nil), s.res...)
	index.SortHits(out, x.metric)
	return out, nil
}

// scan offers every allowed row of list l to the top-k heap.
func (x *Index) scan(q []byte, l, k int, allowed []bool, s *scratch) {
	w := x.width
	lo, hi := int(x.offsets[l]), int(x.offsets[l+1])
	s.dists = slices.Grow(s.dists[:0], hi-lo)[:hi-lo]
	x.distBatch(q, x.vecs[lo*w:hi*w], s.dists)
	for i, d := range s.dists {
		r := x.rows[lo+i]
		if allowed != nil && !allowed[r] {
			continue
		}
		s.res = offer(s.res, k, index.Hit{Row: r, Score: d})
	}
}

// offer adds h to the max-heap h of at most k best hits if it has room or
// h beats its worst, and returns the heap.
func offer(heap []index.Hit, k int, h index.Hit) []index.Hit {
	if len(heap) < k {
		heap = append(heap, h)
		up(heap, len(heap)-1)
	} else if worse(heap[0], h) {
		heap[0] = h
		down(heap, 0)
	}
	return heap
}

// up restores the max-heap order after h[i] was appended.
func up(h []index.Hit, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// down restores the max-heap order after h[i] was replaced.
func down(h []index.Hit, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && worse(h[c+1], h[c]) {
			c++
		}
		if !worse(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
