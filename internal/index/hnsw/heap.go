package hnsw

// item is a node together with its distance to the query. Distances are
// internal: smaller is always better (negated inner product for IP/COSINE).
type item struct {
	d  float32
	id uint32
}

// before orders items by distance, then by id, so that ties resolve the
// same way everywhere (the smaller row wins).
func before(a, b item) bool {
	return a.d < b.d || (a.d == b.d && a.id < b.id)
}

// minHeap is a binary min-heap of items (the closest on top), kept in a
// plain slice to avoid container/heap's interface boxing.
type minHeap []item

func (h *minHeap) push(it item) {
	s := append(*h, it)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(it, s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = it
	*h = s
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	if n > 0 {
		siftDownMin(s, last)
	}
	*h = s
	return top
}

// siftDownMin places it at the root of s and restores the heap property.
func siftDownMin(s []item, it item) {
	n := len(s)
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && before(s[r], s[c]) {
			c = r
		}
		if !before(s[c], it) {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = it
}

// maxHeap is a binary max-heap of items (the farthest on top); it holds
// the current best results so that the worst is evicted in O(log n).
type maxHeap []item

func (h *maxHeap) push(it item) {
	s := append(*h, it)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(s[p], it) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = it
	*h = s
}

func (h *maxHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	if n > 0 {
		siftDownMax(s, last)
	}
	*h = s
	return top
}

// replaceTop replaces the farthest item with it, which is cheaper than a
// pop followed by a push.
func (h maxHeap) replaceTop(it item) { siftDownMax(h, it) }

// siftDownMax places it at the root of s and restores the heap property.
func siftDownMax(s []item, it item) {
	n := len(s)
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && before(s[c], s[r]) {
			c = r
		}
		if !before(it, s[c]) {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = it
}
