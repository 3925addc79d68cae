package sparse

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/strata-db/strata/internal/index"
)

// BM25 holds the parameters of BM25 scoring over rows of term frequencies
// (the output of a BM25 function: dimension = token hash, value = how often
// the token occurs in the document). A row's length is the sum of its
// values. A query holds one weight per term, its IDF times its frequency in
// the query text (the query node computes them from collection statistics).
// A row scores
//
//	Σ_t w_t · tf·(K1+1) / (tf + K1·(1 − B + B·len/Avgdl))
//
// over the terms t it shares with the query, added in ascending dimension
// order in float32 by every search path (exact and inverted), so the paths
// give bit-identical scores.
type BM25 struct {
	K1, B float32
	// Avgdl is the collection's average row length; it must be positive.
	Avgdl float32
}

// Validate reports parameters that cannot score.
func (b BM25) Validate() error {
	if !(b.Avgdl > 0) || math.IsInf(float64(b.Avgdl), 0) {
		return fmt.Errorf("sparse: BM25 average document length %v is not positive", b.Avgdl)
	}
	if !(b.K1 >= 0) || !(b.B >= 0 && b.B <= 1) {
		return fmt.Errorf("sparse: BM25 k1 %v / b %v out of range", b.K1, b.B)
	}
	return nil
}

// term returns one term's contribution: weight w, frequency tf, row
// length dl.
func (b BM25) term(w, tf, dl float32) float32 {
	// The conversions round every step, so no path fuses operations
	// differently from another.
	norm := float32(b.K1 * float32(1-b.B+float32(float32(b.B*dl)/b.Avgdl)))
	return float32(w * float32(float32(tf*(b.K1+1))/float32(tf+norm)))
}

// RowLen returns the length of a wire row: the sum of its values, added in
// ascending index order in float32.
func RowLen(row []byte) float32 {
	var s float32
	for j := 0; j+8 <= len(row); j += 8 {
		s += math.Float32frombits(binary.LittleEndian.Uint32(row[j+4:]))
	}
	return s
}

// ScoreRow returns the BM25 score of a wire row for query weights q.
func (b BM25) ScoreRow(q Vector, row []byte) float32 {
	dl := RowLen(row)
	var s float32
	i, j, n := 0, 0, len(row)/8
	for i < len(q.Indices) && j < n {
		y := binary.LittleEndian.Uint32(row[8*j:])
		switch x := q.Indices[i]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			s += b.term(q.Values[i], math.Float32frombits(binary.LittleEndian.Uint32(row[8*j+4:])), dl)
			i++
			j++
		}
	}
	return s
}

// score is ScoreRow for a decoded row of length dl.
func (b BM25) score(q, row Vector, dl float32) float32 {
	var s float32
	i, j := 0, 0
	for i < len(q.Indices) && j < len(row.Indices) {
		switch x, y := q.Indices[i], row.Indices[j]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			s += b.term(q.Values[i], row.Values[j], dl)
			i++
			j++
		}
	}
	return s
}

// docLens returns the length of every row, derived once from the forward
// rows (which always hold every value, whatever drop_ratio_build left out
// of the lists).
func (x *Index) docLens() []float32 {
	x.lensOnce.Do(func() {
		x.lens = make([]float32, x.Len())
		for r := range x.lens {
			var s float32
			for _, v := range x.fwdVal[x.rowOff[r]:x.rowOff[r+1]] {
				s += v
			}
			x.lens[r] = s
		}
	})
	return x.lens
}

// Stats adds what BM25 statistics need of the rows allowed (nil = every
// row) to st: their number, their total length and, for each of dims
// (ascending), how many of them hold it (df, aligned with dims).
func (x *Index) Stats(dims []uint32, allowed []bool, st *Stats) error {
	if allowed != nil && len(allowed) != x.Len() {
		return fmt.Errorf("sparse: allowed has %d entries, the index %d rows", len(allowed), x.Len())
	}
	if len(st.DF) != len(dims) {
		return fmt.Errorf("sparse: %d document frequencies for %d dimensions", len(st.DF), len(dims))
	}
	lens := x.docLens()
	live := 0
	var total float64
	for r, dl := range lens {
		if allowed == nil || allowed[r] {
			live++
			total += float64(dl)
		}
	}
	st.Rows += int64(live)
	st.TotalLen += total
	if live == 0 {
		return nil
	}
	all := live == x.Len()
	for i, d := range dims {
		if !x.dropped && all {
			if l, ok := x.list(d); ok {
				st.DF[i] += int64(x.listOff[l+1] - x.listOff[l])
			}
			continue
		}
		st.DF[i] += int64(x.docFreq(d, allowed))
	}
	return nil
}

// list returns the posting list of dimension d.
func (x *Index) list(d uint32) (int, bool) {
	lo, hi := 0, len(x.dims)
	for lo < hi {
		m := (lo + hi) / 2
		if x.dims[m] < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(x.dims) && x.dims[lo] == d
}

// docFreq counts the allowed rows that hold dimension d: from its posting
// list when the lists are complete, otherwise from the forward rows.
func (x *Index) docFreq(d uint32, allowed []bool) int {
	n := 0
	if !x.dropped {
		l, ok := x.list(d)
		if !ok {
			return 0
		}
		for _, r := range x.postRow[x.listOff[l]:x.listOff[l+1]] {
			if allowed == nil || allowed[r] {
				n++
			}
		}
		return n
	}
	for r := 0; r < x.Len(); r++ {
		if allowed != nil && !allowed[r] {
			continue
		}
		idx := x.fwdIdx[x.rowOff[r]:x.rowOff[r+1]]
		if hasDim(idx, d) {
			n++
		}
	}
	return n
}

func hasDim(idx []uint32, d uint32) bool {
	lo, hi := 0, len(idx)
	for lo < hi {
		m := (lo + hi) / 2
		if idx[m] < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(idx) && idx[lo] == d
}

// Stats are BM25 collection statistics, summed over segments.
type Stats struct {
	// Rows is the number of documents, TotalLen the sum of their lengths.
	Rows     int64
	TotalLen float64
	// DF[i] is the number of documents holding the i-th term asked for.
	DF []int64
}

// RowStats adds a wire row to st (as Stats does for an index's rows).
func (st *Stats) RowStats(dims []uint32, row []byte) {
	st.Rows++
	st.TotalLen += float64(RowLen(row))
	i, j, n := 0, 0, len(row)/8
	for i < len(dims) && j < n {
		y := binary.LittleEndian.Uint32(row[8*j:])
		switch x := dims[i]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			st.DF[i]++
			i++
			j++
		}
	}
}

// Avgdl is the average document length (0 with no documents).
func (st *Stats) Avgdl() float64 {
	if st.Rows == 0 {
		return 0
	}
	return st.TotalLen / float64(st.Rows)
}

// IDF is the inverse document frequency of a term held by df of the
// documents, as Milvus and Lucene define it: ln(1 + (N − df + 0.5)/(df + 0.5)).
func (st *Stats) IDF(df int64) float64 {
	return math.Log(1 + (float64(st.Rows)-float64(df)+0.5)/(float64(df)+0.5))
}

// SearchBM25 returns the k best allowed rows by BM25 score for query
// weights q, best first, ties by ascending row. Only rows with a positive
// score are hits. With p.DropRatioSearch > 0 the smallest query weights
// are left out of the candidate search and the k×RefineFactor candidates
// rescored with every term; values drop_ratio_build left out of the lists
// are handled the same way.
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
	kk := k
	refine := x.dropped || droppedQ
	if refine {
		rf := p.RefineFactor
		if rf == 0 {
			rf = DefaultRefineFactor
		}
		kk = k * rf
	}
	lens := x.docLens()
	hits := x.searchInvertedBM25(terms, kk, b, lens, allowed)
	if !refine {
		return hits, nil
	}
	out := hits[:0]
	for _, h := range hits {
		r := uint32(h.Row)
		if s := b.score(q, x.row(r), lens[r]); s > 0 {
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

// searchInvertedBM25 is searchInverted with BM25 term scores.
func (x *Index) searchInvertedBM25(terms []term, k int, b BM25, lens []float32, allowed []bool) []index.Hit {
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
			if allowed != nil && !allowed[r] {
				continue
			}
			if !s.seen[r] {
				s.seen[r] = true
				s.touched = append(s.touched, r)
			}
			s.scores[r] += b.term(t.q, vals[i], lens[r])
		}
	}
	top := newTopK(k)
	for _, r := range s.touched {
		sc := s.scores[r]
		s.scores[r], s.seen[r] = 0, false
		if sc > 0 {
			top.offer(r, sc)
		}
	}
	return top.sorted()
}
