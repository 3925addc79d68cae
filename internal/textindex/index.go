package textindex

import (
	"sync"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/column"
)

// posting is one term's rows and positions (see the package doc).
type posting struct {
	rows []int32
	offs []int32
	pos  []int32
}

// positions returns the positions of the term in the posting's i-th row.
func (p *posting) positions(i int) []int32 {
	end := int32(len(p.pos))
	if i+1 < len(p.offs) {
		end = p.offs[i+1]
	}
	return p.pos[p.offs[i]:end]
}

// Index is the positional inverted index of one text column.
type Index struct {
	an *analyzer.Field

	mu      sync.RWMutex
	covered int // rows 0 … covered-1 are indexed
	terms   map[string]*posting
}

// New returns an empty index whose rows are analyzed by an.
func New(an *analyzer.Field) *Index {
	return &Index{an: an, terms: map[string]*posting{}}
}

// Rows is the number of rows indexed so far.
func (x *Index) Rows() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.covered
}

// Terms is the number of distinct terms indexed so far.
func (x *Index) Terms() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.terms)
}

// Sync indexes rows covered … n-1 of texts (null rows hold no terms); each
// row is analyzed in the language langs gives it (langs may be nil, and a
// null language is ""). Rows already indexed are not read again, so texts
// must only have grown since the last call.
func (x *Index) Sync(texts *column.Strings, langs *column.Strings, n int) {
	n = min(n, len(texts.Data))
	x.mu.RLock()
	done := x.covered >= n
	x.mu.RUnlock()
	if done {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for r := x.covered; r < n; r++ {
		if texts.IsNull(r) {
			continue
		}
		lang := ""
		if langs != nil && r < len(langs.Data) && !langs.IsNull(r) {
			lang = langs.Data[r]
		}
		for _, t := range x.an.Analyze(texts.Data[r], lang) {
			x.add(t.Text, int32(r), int32(t.Position))
		}
	}
	x.covered = max(x.covered, n)
}

// add records one occurrence; rows arrive in ascending order.
func (x *Index) add(term string, row, pos int32) {
	p := x.terms[term]
	if p == nil {
		p = &posting{}
		x.terms[term] = p
	}
	if k := len(p.rows); k == 0 || p.rows[k-1] != row {
		p.rows = append(p.rows, row)
		p.offs = append(p.offs, int32(len(p.pos)))
	}
	p.pos = append(p.pos, pos)
}

// MatchAny sets out[r] for every row r < len(out) that holds at least
// minMatch (≥ 1) of the distinct terms, and returns how many it set.
func (x *Index) MatchAny(terms []string, minMatch int, out []bool) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(out)
	var ps []*posting
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		if p := x.terms[t]; p != nil {
			ps = append(ps, p)
		}
	}
	marked := 0
	if minMatch <= 1 {
		for _, p := range ps {
			for _, r := range p.rows {
				if int(r) >= n {
					break
				}
				if !out[r] {
					out[r] = true
					marked++
				}
			}
		}
		return marked
	}
	if len(ps) < minMatch {
		return 0
	}
	counts := make([]int32, n)
	for _, p := range ps {
		for _, r := range p.rows {
			if int(r) >= n {
				break
			}
			if int(counts[r]) < minMatch { // minMatch ≤ len(ps); stop counting at it
				counts[r]++
				if int(counts[r]) == minMatch && !out[r] {
					out[r] = true
					marked++
				}
			}
		}
	}
	return marked
}

// QueryToken is one token of a phrase query: its text and its position in
// the analyzed query.
type QueryToken struct {
	Text     string
	Position int
}

// MatchPhrase sets out[r] for every row r < len(out) where the phrase
// occurs within slop (see the package doc), and returns how many it set.
// An empty phrase matches nothing.
func (x *Index) MatchPhrase(phrase []QueryToken, slop uint32, out []bool) int {
	if len(phrase) == 0 {
		return 0
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(out)
	ps := make([]*posting, len(phrase))
	rarest := 0
	for i, t := range phrase {
		p := x.terms[t.Text]
		if p == nil {
			return 0
		}
		ps[i] = p
		if len(p.rows) < len(ps[rarest].rows) {
			rarest = i
		}
	}
	cursors := make([]int, len(phrase))
	lists := make([][]int32, len(phrase))
	shifts := make([]int64, len(phrase))
	for i, t := range phrase {
		shifts[i] = int64(t.Position)
	}
	heads := make([]int, len(phrase))
	marked := 0
candidates:
	for _, r := range ps[rarest].rows {
		if int(r) >= n {
			break
		}
		for i, p := range ps {
			c := cursors[i]
			for c < len(p.rows) && p.rows[c] < r {
				c++
			}
			cursors[i] = c
			if c == len(p.rows) {
				break candidates
			}
			if p.rows[c] != r {
				continue candidates
			}
			lists[i] = p.positions(c)
		}
		if withinSlop(lists, shifts, heads, int64(slop)) && !out[r] {
			out[r] = true
			marked++
		}
	}
	return marked
}

// withinSlop reports whether one position can be picked from each list so
// that, each moved back by its shift, the picks span at most slop: the
// smallest window over k sorted lists, found by always advancing the list
// whose current pick is smallest. heads is scratch space of len(lists).
func withinSlop(lists [][]int32, shifts []int64, heads []int, slop int64) bool {
	for i := range heads {
		heads[i] = 0
	}
	for {
		lo, hi, loAt := int64(0), int64(0), 0
		for i, l := range lists {
			v := int64(l[heads[i]]) - shifts[i]
			if i == 0 || v < lo {
				lo, loAt = v, i
			}
			if i == 0 || v > hi {
				hi = v
			}
		}
		if hi-lo <= slop {
			return true
		}
		heads[loAt]++
		if heads[loAt] == len(lists[loAt]) {
			return false
		}
	}
}
