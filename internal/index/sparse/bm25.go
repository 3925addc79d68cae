package sparse

import (
	"encoding/binary"
	"fmt"
	"math"
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
// over the terms t it shares with the query. Each term's contribution is
// computed in float64 and fixed to a multiple of 2⁻³² (an int64), and the
// contributions are added as integers, so a score does not depend on the
// order its terms are added in: every search path (exact, term at a time,
// MaxScore) gives bit-identical scores, which are the sum as a float32.
type BM25 struct {
	K1, B float32
	// Avgdl is the collection's average row length; it must be positive.
	Avgdl float32
}

// fixedOne is the fixed-point unit of term contributions (2³²).
const fixedOne = 1 << 32

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

// contribution returns one term's contribution in fixed point: weight w,
// frequency tf, row length dl.
func (b BM25) contribution(w, tf, dl float32) int64 {
	k1, bb, f := float64(b.K1), float64(b.B), float64(tf)
	c := float64(w) * f * (k1 + 1) / (f + k1*(1-bb+bb*float64(dl)/float64(b.Avgdl)))
	return int64(c * fixedOne)
}

// bound returns an upper bound, in fixed point, of the contribution of a
// term of weight w to any row, given the largest frequency m in its list:
// the contribution grows with the frequency and shrinks with the row's
// length, which is at least the frequency (a row's length is the sum of
// its frequencies). The margin covers float64 rounding.
func (b BM25) bound(w, m float32) int64 {
	k1, bb, f := float64(b.K1), float64(b.B), float64(m)
	c := float64(w) * f * (k1 + 1) / (f + k1*(1-bb+bb*f/float64(b.Avgdl)))
	return int64(c*fixedOne*(1+1e-9)) + 2
}

// fixedScore turns a sum of fixed-point contributions into a score.
func fixedScore(sum int64) float32 { return float32(float64(sum) / fixedOne) }

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
	var s int64
	i, j, n := 0, 0, len(row)/8
	for i < len(q.Indices) && j < n {
		y := binary.LittleEndian.Uint32(row[8*j:])
		switch x := q.Indices[i]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			s += b.contribution(q.Values[i], math.Float32frombits(binary.LittleEndian.Uint32(row[8*j+4:])), dl)
			i++
			j++
		}
	}
	return fixedScore(s)
}

// score is ScoreRow for a decoded row of length dl, in fixed point.
func (b BM25) score(q, row Vector, dl float32) int64 {
	var s int64
	i, j := 0, 0
	for i < len(q.Indices) && j < len(row.Indices) {
		switch x, y := q.Indices[i], row.Indices[j]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			s += b.contribution(q.Values[i], row.Values[j], dl)
			i++
			j++
		}
	}
	return s
}

// docLens returns the length of every row, derived once from the forward
// rows (which always hold every value, whatever drop_ratio_build left out
// of the lists), and their total.
func (x *Index) docLens() []float32 {
	x.lensOnce.Do(func() {
		x.lens = make([]float32, x.Len())
		for r := range x.lens {
			var s float32
			for _, v := range x.fwdVal[x.rowOff[r]:x.rowOff[r+1]] {
				s += v
			}
			x.lens[r] = s
			x.lensTotal += float64(s)
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
	live, total := x.Len(), x.lensTotal
	if allowed != nil {
		live, total = 0, 0
		for r, dl := range lens {
			if allowed[r] {
				live++
				total += float64(dl)
			}
		}
		if live == x.Len() {
			allowed, total = nil, x.lensTotal // the same sum, in the same order
		}
	}
	st.Rows += int64(live)
	st.TotalLen += total
	if live == 0 {
		return nil
	}
	for i, d := range dims {
		if !x.dropped && allowed == nil {
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
