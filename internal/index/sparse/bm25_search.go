package sparse

import (
	"slices"
	"sort"

	"github.com/strata-db/strata/internal/index"
)

// SearchBM25 returns the k best allowed rows by BM25 score for query
// weights q, best first, ties by ascending row. Only rows with a positive
// score are hits. With p.DropRatioSearch > 0 the smallest query weights
// are left out of the candidate search and the k×RefineFactor candidates
// rescored with every term; values drop_ratio_build left out of the lists
// are handled the same way. Otherwise the result is exact.
func (x *Index) SearchBM25(q Vector, k int, b BM25, p SearchParams, allowed []bool) ([]index.Hit, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := x.checkSearch(q, k, p, allowed); err != nil {
		return nil, err
	}
	if k == 0 || len(q.Indices) == 0 || x.Len() == 0 {
		return nil, nil
	}
	terms, droppedQ := x.terms(q, p.DropRatioSearch)
	lens := x.docLens()
	if !x.dropped && !droppedQ {
		hits, _ := x.searchMaxScoreBM25(terms, k, b, lens, allowed)
		return hits, nil
	}
	rf := p.RefineFactor
	if rf == 0 {
		rf = DefaultRefineFactor
	}
	// Candidates from what the lists and the pruned query hold, rescored
	// with every term from the forward rows.
	cands, _ := x.searchMaxScoreBM25(terms, k*rf, b, lens, allowed)
	top := newTopK(k)
	for _, h := range cands {
		r := uint32(h.Row)
		if s := b.score(q, x.row(r), lens[r]); s > 0 {
			top.offer(r, fixedScore(s))
		}
	}
	return top.sorted(), nil
}

// bm25Term is a query term with its fixed-point upper bound.
type bm25Term struct {
	term
	ub int64
}

// searchMaxScoreBM25 returns the k best allowed rows by the BM25 score
// that the posting lists of terms give, in the spirit of MaxScore: terms
// are taken by descending upper bound and accumulated term at a time.
// Before each term, once k rows have partial scores above the sum of the
// bounds of the terms left (rest), no row untouched so far can enter the
// top k: the terms left then only probe the rows whose partial score plus
// rest can still reach the k-th best partial score (theta, a lower bound of
// the k-th best score), which shrink as rest falls and theta rises.
// Contributions are fixed point (see BM25), so partial sums are exact and
// the hits, scores and ties equal an exhaustive search's. It also returns
// how many terms only probed candidates.
func (x *Index) searchMaxScoreBM25(terms []term, k int, b BM25, lens []float32, allowed []bool) ([]index.Hit, int) {
	ts := make([]bm25Term, len(terms))
	for i, t := range terms {
		ts[i] = bm25Term{term: t, ub: b.bound(t.q, x.maxAbs[t.list])}
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].ub > ts[j].ub })
	rest := make([]int64, len(ts)+1) // rest[i]: bounds of terms i onwards
	for i := len(ts) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + ts[i].ub
	}

	s := x.getScratch()
	defer x.scratch.Put(s)
	if s.partial == nil {
		s.partial, s.seen = make([]int64, x.Len()), make([]bool, x.Len())
	}
	s.touched = s.touched[:0]
	theta := int64(-1) // no k-th partial score yet
	done := len(ts)
	for i, e := range ts {
		if len(s.touched) >= k {
			theta = kthLargest(s.partial, s.touched, k, &s.sel)
			if theta > rest[i] {
				done = i
				break
			}
		}
		lo, hi := x.listOff[e.list], x.listOff[e.list+1]
		rows, vals := x.postRow[lo:hi], x.postVal[lo:hi]
		for j, r := range rows {
			if allowed != nil && !allowed[r] {
				continue
			}
			if !s.seen[r] {
				s.seen[r] = true
				s.touched = append(s.touched, r)
			}
			s.partial[r] += b.contribution(e.q, vals[j], lens[r])
		}
	}
	top := newTopK(k)
	if done == len(ts) {
		// Every term was accumulated: the partial scores are the scores.
		for _, r := range s.touched {
			if p := s.partial[r]; p > 0 {
				top.offer(r, fixedScore(p))
			}
			s.partial[r], s.seen[r] = 0, false
		}
		return top.sorted(), 0
	}
	// The rows that can still reach theta, ascending, with their partial
	// scores.
	var cands []uint32
	for _, r := range s.touched {
		if s.partial[r]+rest[done] >= theta {
			cands = append(cands, r)
		}
	}
	slices.Sort(cands)
	part := make([]int64, len(cands))
	for i, r := range cands {
		part[i] = s.partial[r]
	}
	for _, r := range s.touched {
		s.partial[r], s.seen[r] = 0, false
	}
	for j := done; j < len(ts) && len(cands) > 0; j++ {
		e := ts[j]
		pos, hi := x.listOff[e.list], x.listOff[e.list+1]
		n := 0
		for i, r := range cands {
			p := part[i]
			if pos < hi {
				pos = seek(x.postRow, pos, hi, r)
				if pos < hi && x.postRow[pos] == r {
					p += b.contribution(e.q, x.postVal[pos], lens[r])
				}
			}
			if p+rest[j+1] >= theta {
				cands[n], part[n] = r, p
				n++
			}
		}
		cands, part = cands[:n], part[:n]
		if len(cands) >= k {
			theta = max(theta, kthOf(part, k, &s.sel))
		}
	}
	for i, r := range cands {
		if part[i] > 0 {
			top.offer(r, fixedScore(part[i]))
		}
	}
	return top.sorted(), len(ts) - done
}

// kthOf returns the k-th largest of vals (k ≤ len(vals)).
func kthOf(vals []int64, k int, buf *[]int64) int64 {
	b := append((*buf)[:0], vals...)
	*buf = b
	return quickselect(b, k)
}

// kthLargest returns the k-th largest of vals[rows] (k ≤ len(rows)),
// using buf as scratch.
func kthLargest(vals []int64, rows []uint32, k int, buf *[]int64) int64 {
	b := (*buf)[:0]
	for _, r := range rows {
		b = append(b, vals[r])
	}
	*buf = b
	return quickselect(b, k)
}

// quickselect returns the k-th largest of b (k ≤ len(b)), reordering b.
func quickselect(b []int64, k int) int64 {
	lo, hi := 0, len(b)-1
	for lo < hi {
		p := b[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for b[i] > p {
				i++
			}
			for b[j] < p {
				j--
			}
			if i <= j {
				b[i], b[j] = b[j], b[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return b[k-1]
		}
	}
	return b[k-1]
}
