package sparse

import (
	"math"
	"math/bits"

	"github.com/strata-db/strata/internal/index"
)

// wandTerm is one query term's cursor for searchWAND.
type wandTerm struct {
	q     float32 // query value
	aq    float64 // |q|
	start uint64  // first posting of the list
	blk0  uint64  // first block of the list
	pos   uint64  // cursor: next posting not yet passed
	hi    uint64  // end of the current window's postings
	end   uint64  // end of the list
	wub   float64 // upper bound of the term's contribution in the window
}

// wandWindow is the number of consecutive rows searchWAND handles at a
// time (a power of two; its 64 KiB accumulator stays in the L2 cache).
const wandWindow = 1 << 14

// wandPays reports whether searchWAND is worth its per-window work for
// terms: with fewer than one posting per wandSparse rows the windows are
// nearly empty and the term-at-a-time search, which returns the same hits,
// is faster.
func (x *Index) wandPays(terms []term) bool {
	var postings uint64
	for _, t := range terms {
		postings += x.listOff[t.list+1] - x.listOff[t.list]
	}
	return postings*wandSparse >= uint64(x.Len())
}

// wandSparse: see wandPays.
const wandSparse = 4

// searchWAND is a windowed block-max search. Rows are processed in
// windows of wandWindow consecutive rows. For each window every term gets
// an upper bound from the block maxima of its postings inside the window;
// a window whose bounds sum to no more than the current limit is skipped
// whole. Otherwise split decides how to search it:
//
//   - exactly: every term is accumulated term at a time, in ascending
//     dimension order, into a window-sized array, which then holds each
//     row's exact float32 score (the same sum, in the same order, as Dot
//     and the inverted search);
//   - MaxScore: the terms are ordered by bound, and the longest prefix of
//     weak terms whose bounds together cannot beat the limit is
//     non-essential. Only the essential terms are accumulated; a touched
//     row whose partial score plus the non-essential bounds could beat the
//     limit probes the non-essential lists (strongest first, giving up as
//     soon as the bound fails).
//
// Rows that pass become candidates with their (approximate) score, and
// the limit follows the k-th best candidate score. At the end the
// candidates still above the limit are scored exactly and ranked. The
// bounds are float64 and allow for float32 rounding (slack), so pruning
// never drops a row that could qualify and the hits equal the inverted
// search's.
//
// mode is split's choice (wandAuto outside tests). It also returns how
// many rows it scored exactly.
func (x *Index) searchWAND(terms []term, k int, allowed []bool, mode wandSplit) ([]index.Hit, int) {
	ts := make([]wandTerm, len(terms))
	qv := Vector{Indices: make([]uint32, len(terms)), Values: make([]float32, len(terms))}
	var ubAll float64
	for i, t := range terms {
		aq := math.Abs(float64(t.q))
		lo, hi := x.listOff[t.list], x.listOff[t.list+1]
		qv.Indices[i], qv.Values[i] = x.dims[t.list], t.q
		ts[i] = wandTerm{q: t.q, aq: aq, start: lo, blk0: x.blockOff[t.list], pos: lo, hi: lo, end: hi}
		ubAll += aq * float64(x.maxAbs[t.list])
	}
	// A float32 sum of n products differs from the real sum by at most
	// about (n+1)·2⁻²⁴ times the sum of the absolute products, which ubAll
	// bounds; twice that is ample.
	slack := 2 * float64(len(ts)+2) * 0x1p-24 * ubAll
	const w = wandWindow
	s := x.getScratch()
	defer x.scratch.Put(s)
	if len(s.acc) < w {
		s.acc = make([]float32, w)
		s.bits = make([]uint64, w/64)
	}
	acc, seen := (*[w]float32)(s.acc), (*[w / 64]uint64)(s.bits)
	order := make([]int, len(ts)) // term indices by ascending window bound
	cum := make([]float64, len(ts))
	rows, vals := x.postRow, x.postVal
	// limit: a row whose bound is at most limit cannot make the top k.
	// Until k rows are known it is -slack (only positive scores are hits);
	// then it follows the k-th best of the candidates' bounds, each within
	// slack/2 of the exact score.
	limit := -slack
	ak := &kthBound{k: k}
	var cands []wandCand
	for {
		// Start the window at the first row any list still holds.
		first := uint32(math.MaxUint32)
		for i := range ts {
			if t := &ts[i]; t.pos < t.end {
				first = min(first, rows[t.pos])
			}
		}
		if first == math.MaxUint32 {
			break
		}
		base := first &^ uint32(w-1)
		wend := base + uint32(w) // rows are below 2^31
		var total float64
		var all uint64 // postings in the window
		for i := range ts {
			t := &ts[i]
			t.hi, t.wub = t.pos, 0
			if t.pos == t.end {
				continue
			}
			t.hi = seek(rows, t.pos, t.end, wend)
			if t.hi == t.pos {
				continue
			}
			all += t.hi - t.pos
			var m float32
			for b := t.blk0 + (t.pos-t.start)/blockSize; b <= t.blk0+(t.hi-1-t.start)/blockSize; b++ {
				m = max(m, x.blockMax[b])
			}
			t.wub = t.aq * float64(m)
			total += t.wub
		}
		if total > limit {
			ne := x.split(ts, order, cum, limit, all, mode)
			var neSum float64
			if ne > 0 {
				neSum = cum[ne-1]
			}
			if ne == 0 && all >= wandWindow/4 {
				// Dense and exact: no touched-row bitmap, scan the window.
				for i := range ts {
					accumulate(acc, base, ts[i].q, rows[ts[i].pos:ts[i].hi], vals[ts[i].pos:ts[i].hi])
				}
				lim := below(max(limit, 0))
				for d, a := range acc {
					if a <= lim {
						continue
					}
					r := base + uint32(d)
					if float64(a) <= limit || (allowed != nil && !allowed[r]) {
						continue
					}
					cands = append(cands, wandCand{row: r, bound: float64(a)})
					if ak.push(float64(a)) && ak.kth() > slack {
						limit = max(limit, ak.kth()-slack)
						lim = below(limit)
					}
				}
				clear(acc[:])
			} else {
				for _, ti := range order[ne:] {
					t := &ts[ti]
					rs, vs := rows[t.pos:t.hi], vals[t.pos:t.hi]
					vs = vs[:len(rs)]
					for j, r := range rs {
						d := (r - base) & (wandWindow - 1)
						acc[d] += float32(t.q * vs[j])
						seen[d>>6] |= 1 << (d & 63)
					}
				}
				for wi, word := range seen {
					if word == 0 {
						continue
					}
					seen[wi] = 0
					for word != 0 {
						d := uint32(wi*64 + bits.TrailingZeros64(word))
						word &= word - 1
						a := float64(acc[d])
						acc[d] = 0
						r := base + d
						if a+neSum <= limit || (ne == 0 && a <= 0) || (allowed != nil && !allowed[r]) {
							continue
						}
						ok := true
						for j := ne - 1; j >= 0; j-- {
							if a+cum[j] <= limit {
								ok = false
								break
							}
							t := &ts[order[j]]
							t.pos = seek(rows, t.pos, t.hi, r)
							if t.pos < t.hi && rows[t.pos] == r {
								a += float64(float32(t.q * vals[t.pos]))
							}
						}
						if !ok || a <= limit {
							continue
						}
						cands = append(cands, wandCand{row: r, bound: a})
						if ak.push(a) && ak.kth() > slack {
							limit = max(limit, ak.kth()-slack)
						}
					}
				}
			}
		}
		for i := range ts {
			ts[i].pos = ts[i].hi
		}
	}
	// Score the surviving candidates exactly, in ascending dimension order.
	top := newTopK(k)
	scored := 0
	for _, c := range cands {
		if c.bound <= limit {
			continue
		}
		scored++
		var sc float32
		if x.dropped {
			for i := range ts {
				t := &ts[i]
				p := seek(rows, t.start, t.end, c.row)
				if p < t.end && rows[p] == c.row {
					sc += float32(t.q * vals[p])
				}
			}
		} else {
			// The lists hold every value: the row itself is faster.
			sc = Dot(qv, x.row(c.row))
		}
		if sc > 0 {
			top.offer(c.row, sc)
		}
	}
	return top.sorted(), scored
}

// accumulate adds q times each value of vs to the accumulator slot of its
// row in rs (rows base onwards, within the window).
func accumulate(acc *[wandWindow]float32, base uint32, q float32, rs []uint32, vs []float32) {
	vs = vs[:len(rs)]
	j := 0
	for ; j+4 <= len(rs); j += 4 {
		acc[(rs[j]-base)&(wandWindow-1)] += float32(q * vs[j])
		acc[(rs[j+1]-base)&(wandWindow-1)] += float32(q * vs[j+1])
		acc[(rs[j+2]-base)&(wandWindow-1)] += float32(q * vs[j+2])
		acc[(rs[j+3]-base)&(wandWindow-1)] += float32(q * vs[j+3])
	}
	for ; j < len(rs); j++ {
		acc[(rs[j]-base)&(wandWindow-1)] += float32(q * vs[j])
	}
}

// below returns the largest float32 not above v (v >= 0), so that for any
// float32 a, a <= below(v) whenever float64(a) <= v.
func below(v float64) float32 {
	f := float32(v)
	if float64(f) > v {
		f = math.Nextafter32(f, 0)
	}
	return f
}

// wandCand is a row that passed every bound, with its approximate score.
type wandCand struct {
	row   uint32
	bound float64
}

// kthBound keeps the k largest values pushed (a min-heap).
type kthBound struct {
	k int
	h []float64
}

// push adds v and reports whether k values are kept.
func (b *kthBound) push(v float64) bool {
	h := b.h
	if len(h) < b.k {
		h = append(h, v)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p] <= h[i] {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		b.h = h
		return len(h) == b.k
	}
	if v <= h[0] {
		return true
	}
	h[0] = v
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l] < h[m] {
			m = l
		}
		if r < len(h) && h[r] < h[m] {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return true
}

// kth returns the smallest kept value (the k-th largest once k are kept).
func (b *kthBound) kth() float64 { return b.h[0] }

// seek returns the first position in [pos, end) whose row is >= target,
// or end: a linear look at the next few postings, then a galloping and a
// binary search.
func seek(rows []uint32, pos, end uint64, target uint32) uint64 {
	for i := 0; i < 4; i++ {
		if pos >= end || rows[pos] >= target {
			return pos
		}
		pos++
	}
	// rows[pos-1] < target: gallop until rows[hi] >= target or the end.
	lo, step := pos, uint64(1)
	for lo+step < end && rows[lo+step] < target {
		lo += step
		step *= 2
	}
	hi := min(lo+step, end)
	// the answer is in [lo, hi]: rows[hi] >= target or hi == end.
	for lo < hi {
		m := lo + (hi-lo)/2
		if rows[m] < target {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// split chooses how searchWAND handles a window whose terms' bounds
// (wub) are set, holding all postings, and returns ne: the terms order[:ne]
// are non-essential, cum[j] the sum of the bounds of order[:j+1]. With ne 0
// every term is essential and order is the query's (ascending dimension)
// order, so the window's accumulated scores are exact. That is also the
// choice unless the non-essential terms hold at least 8 times the essential
// terms' postings: probing a row's non-essential lists costs about as much
// as accumulating a dozen postings, and most rows of the essential lists
// need probing (measured on the zipf benchmark, where MaxScore windows that
// skipped under half of the postings were slower than exact ones).
func (x *Index) split(ts []wandTerm, order []int, cum []float64, limit float64, all uint64, mode wandSplit) int {
	for i := range order {
		order[i] = i
	}
	if mode == wandTAAT {
		return 0
	}
	// Order by window bound (insertion sort, few terms).
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && ts[order[j]].wub < ts[order[j-1]].wub; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	ne := 0
	var c float64
	var skipped uint64
	for ne < len(order) {
		t := &ts[order[ne]]
		if c+t.wub > limit {
			break
		}
		c += t.wub
		cum[ne] = c
		skipped += t.hi - t.pos
		ne++
	}
	if ne == 0 || (mode == wandAuto && skipped < 8*(all-skipped)) {
		for i := range order {
			order[i] = i
		}
		return 0
	}
	return ne
}

// wandSplit is how split handles a window. Searches use wandAuto; tests
// pass the other two to cover both ways of handling a window whatever the
// data's bounds favour.
type wandSplit int

const (
	wandAuto     wandSplit = iota // split decides
	wandTAAT                      // every window accumulates every term exactly
	wandMaxScore                  // non-essential terms whenever the bounds allow
)
