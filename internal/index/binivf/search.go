package binivf

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/index"
)

// scratch is the per-search working memory, pooled across searches.
type scratch struct {
	lists []index.Hit // every list with its centroid distance (Row = list)
	res   []index.Hit // the best rows so far, a max-heap on (Score, Row)
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
		nAllowed := 0
		for _, a := range allowed {
			if a {
				nAllowed++
			}
		}
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
	s.lists = s.lists[:0]
	for l := range nlist {
		s.lists = append(s.lists, index.Hit{Row: int32(l), Score: x.dist(q, x.centroids[l*w:(l+1)*w])})
	}
	slices.SortFunc(s.lists, func(a, b index.Hit) int {
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Row, b.Row)
	})
	s.res = s.res[:0]
	for i, l := range s.lists {
		if i >= nprobe && len(s.res) >= k {
			break
		}
		x.scan(q, int(l.Row), k, allowed, s)
	}
	out := append([]index.Hit(nil), s.res...)
	index.SortHits(out, x.metric)
	return out, nil
}

// scan offers every allowed row of list l to the top-k heap.
func (x *Index) scan(q []byte, l, k int, allowed []bool, s *scratch) {
	w := x.width
	for p := int(x.offsets[l]); p < int(x.offsets[l+1]); p++ {
		r := x.rows[p]
		if allowed != nil && !allowed[r] {
			continue
		}
		h := index.Hit{Row: r, Score: x.dist(q, x.vecs[p*w:(p+1)*w])}
		if len(s.res) < k {
			s.res = append(s.res, h)
			up(s.res, len(s.res)-1)
		} else if worse(s.res[0], h) {
			s.res[0] = h
			down(s.res, 0)
		}
	}
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
