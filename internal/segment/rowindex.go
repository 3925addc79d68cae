package segment

// rowIndex maps the primary keys of appended rows to the rows holding them.
// Most keys are appended once, so a key's first row is kept inline in one
// map (about 20 bytes a key) and only keys appended again (an upsert, or a
// duplicate insert) get a list of their later rows. A map of slices costs
// about 4× as much per key: a 24-byte slice header in the map plus a small
// heap allocation for every key.
type rowIndex[K comparable] struct {
	first map[K]int32
	more  map[K][]int32 // rows after the first, in append order
}

// add records that row r holds key k; rows of one key are added in order.
func (x *rowIndex[K]) add(k K, r int32) {
	if x.first == nil {
		x.first = map[K]int32{}
	}
	if _, ok := x.first[k]; !ok {
		x.first[k] = r
		return
	}
	if x.more == nil {
		x.more = map[K][]int32{}
	}
	x.more[k] = append(x.more[k], r)
}

// rows returns the first row holding k and the later ones, in append
// order; ok is false when no row holds k.
func (x *rowIndex[K]) rows(k K) (first int32, more []int32, ok bool) {
	first, ok = x.first[k]
	if !ok {
		return 0, nil, false
	}
	return first, x.more[k], true
}
