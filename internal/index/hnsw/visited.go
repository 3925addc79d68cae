package hnsw

// visitedSet marks nodes seen during one search. Instead of clearing its
// array for every search it bumps a generation counter and treats a node as
// visited when its mark equals the current generation; the array is cleared
// only when the 16-bit counter wraps, once every 65535 searches.
type visitedSet struct {
	marks []uint16
	gen   uint16
}

// reset prepares the set for a new search over n nodes.
func (v *visitedSet) reset(n int) {
	if len(v.marks) < n {
		v.marks = make([]uint16, n+n/4)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
}
