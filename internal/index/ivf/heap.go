package ivf

// item is a candidate: an internal distance (smaller is better) and a row
// or list number.
type item struct {
	d  float32
	id int32
}

// worse reports whether a ranks after b: a larger distance, or an equal
// distance and a larger id.
func worse(a, b item) bool {
	return a.d > b.d || (a.d == b.d && a.id > b.id)
}

// topK keeps the k best items offered to it in a binary max-heap whose root
// is the worst item kept.
type topK struct {
	k     int
	items []item
}

// reset empties t and sets its capacity bound to k.
func (t *topK) reset(k int) {
	t.k = k
	t.items = t.items[:0]
}

// full reports whether t holds k items.
func (t *topK) full() bool { return len(t.items) >= t.k }

// offer adds it if t holds fewer than k items or it beats the worst one.
func (t *topK) offer(it item) {
	h := t.items
	if len(h) < t.k {
		h = append(h, it)
		// Sift up.
		i := len(h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.items = h
		return
	}
	if t.k == 0 || !worse(h[0], it) {
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
		if r := l + 1; r < n && worse(h[r], h[l]) {
			c = r
		}
		if !worse(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// sorted orders the kept items best first, in place, and returns them. The
// heap is no longer valid afterwards; call reset before reusing it.
func (t *topK) sorted() []item {
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
			if r := l + 1; r < end && worse(h[r], h[l]) {
				c = r
			}
			if !worse(h[c], h[i]) {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	return h
}

// offerAll offers the items {ds[i], rows[i]}. Once t is full, a score
// worse than the root's is dropped with one comparison and no push; ties
// still go through offer, which orders them by id.
func (t *topK) offerAll(ds []float32, rows []int32) {
	rows = rows[:len(ds)]
	i := 0
	for ; i < len(ds) && len(t.items) < t.k; i++ {
		t.offer(item{ds[i], rows[i]})
	}
	if t.k == 0 {
		return
	}
	for ; i < len(ds); i++ {
		if ds[i] > t.items[0].d {
			continue
		}
		t.offer(item{ds[i], rows[i]})
	}
}
