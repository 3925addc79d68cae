package sparse

import (
	"container/heap"

	"github.com/strata-db/strata/internal/index"
)

// topK keeps the k best (score, row) pairs: higher score first, then lower
// row. The worst kept pair is on top of the heap.
type topK struct {
	k    int
	hits []index.Hit
}

func newTopK(k int) *topK { return &topK{k: k, hits: make([]index.Hit, 0, min(k, 1024))} }

// worse reports whether a ranks below b.
func worse(a, b index.Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Row > b.Row
}

func (t *topK) Len() int           { return len(t.hits) }
func (t *topK) Less(i, j int) bool { return worse(t.hits[i], t.hits[j]) }
func (t *topK) Swap(i, j int)      { t.hits[i], t.hits[j] = t.hits[j], t.hits[i] }
func (t *topK) Push(x any)         { t.hits = append(t.hits, x.(index.Hit)) }
func (t *topK) Pop() any {
	h := t.hits[len(t.hits)-1]
	t.hits = t.hits[:len(t.hits)-1]
	return h
}

// offer adds (row, score) if it ranks among the k best so far.
func (t *topK) offer(row uint32, score float32) {
	h := index.Hit{Row: int32(row), Score: score}
	if len(t.hits) < t.k {
		heap.Push(t, h)
		return
	}
	if worse(t.hits[0], h) {
		t.hits[0] = h
		heap.Fix(t, 0)
	}
}

// threshold is the score a new row must exceed to enter: the k-th score
// once k rows are kept, else 0 (only positive scores are hits).
func (t *topK) threshold() float64 {
	if len(t.hits) < t.k {
		return 0
	}
	return float64(t.hits[0].Score)
}

// sorted returns the kept hits best first.
func (t *topK) sorted() []index.Hit {
	if len(t.hits) == 0 {
		return nil
	}
	out := t.hits
	index.SortHits(out, index.IP)
	return out
}
