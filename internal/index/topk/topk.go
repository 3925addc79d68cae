// Package topk keeps the k best of a stream of scored rows: a bounded
// binary max-heap of (distance, id) items in a plain slice, without
// container/heap's interface boxing. Smaller distances are better; equal
// distances rank by ascending id.
package topk

// Item is a candidate: a distance (smaller is better) and a row or list
// number.
type Item struct {
	D  float32
	ID int32
}

// Worse reports whether a ranks after b: a larger distance, or an equal
// distance and a larger id.
func Worse(a, b Item) bool {
	return a.D > b.D || (a.D == b.D && a.ID > b.ID)
}

// Heap keeps the k best items offered to it in a binary max-heap whose root
// is the worst item kept.
type Heap struct {
	k     int
	items []Item
}

// Reset empties t and sets its capacity bound to k.
func (t *Heap) Reset(k int) {
	t.k = k
	t.items = t.items[:0]
}

// Full reports whether t holds k items.
func (t *Heap) Full() bool { return len(t.items) >= t.k }

// Offer adds it if t holds fewer than k items or it beats the worst one.
func (t *Heap) Offer(it Item) {
	h := t.items
	if len(h) < t.k {
		h = append(h, it)
		// Sift up.
		i := len(h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !Worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.items = h
		return
	}
	if t.k == 0 || !Worse(h[0], it) {
		return
	}
	h[0] = it
	// Sift down.
	i, n := 0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && Worse(h[r], h[l]) {
			c = r
		}
		if !Worse(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// Sorted orders the kept items best first, in place, and returns them. The
// heap is no longer valid afterwards; call Reset before reusing it.
func (t *Heap) Sorted() []Item {
	h := t.items
	// Heap sort: repeatedly move the worst item to the end.
	for end := len(h) - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		i := 0
		for {
			l := 2*i + 1
			if l >= end {
				break
			}
			c := l
			if r := l + 1; r < end && Worse(h[r], h[l]) {
				c = r
			}
			if !Worse(h[c], h[i]) {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	return h
}

// Top returns the worst item kept, the one a new item must beat once t is
// full. It panics when t is empty.
func (t *Heap) Top() Item { return t.items[0] }

// Len returns the number of items kept.
func (t *Heap) Len() int { return len(t.items) }

// Compare orders a before b when b is worse: a comparison function for
// slices.SortFunc that sorts best first.
func Compare(a, b Item) int {
	if Worse(a, b) {
		return 1
	}
	if Worse(b, a) {
		return -1
	}
	return 0
}

// OfferAll offers the items {ds[i], rows[i]}. Once t is full, a distance
// worse than the root's is dropped with one comparison and no push; ties
// still go through Offer, which orders them by id.
func (t *Heap) OfferAll(ds []float32, rows []int32) {
	rows = rows[:len(ds)]
	i := 0
	for ; i < len(ds) && len(t.items) < t.k; i++ {
		t.Offer(Item{ds[i], rows[i]})
	}
	if t.k == 0 {
		return
	}
	for ; i < len(ds); i++ {
		if ds[i] > t.items[0].D {
			continue
		}
		t.Offer(Item{ds[i], rows[i]})
	}
}
