package segment

import (
	"hash/maphash"
	"math/bits"
)

// rowIndex maps the primary keys of appended rows to the rows holding them.
// It is an open-addressing hash table with linear probing that stores row
// numbers, not keys: a key is read back from the segment's key column
// (keys[row]), which every call passes in. A slot is 5 bytes (a row number
// and one byte of the key's hash, which settles most mismatches without
// reading the column), and the table doubles when it is 3/4 full, so a
// key costs 6.7–13 bytes; a Go map of int64 to int32 costs about 20 and
// holds a copy of every key. Rows are never removed from a growing segment,
// so the table needs no tombstones.
//
// Most keys are appended once and their slot holds their row. A key
// appended again (an upsert, or a duplicate insert) moves to a list of all
// its rows in append order, and its slot refers to that list.
type rowIndex[K comparable, H keyHasher[K]] struct {
	// slots holds, for each slot, 0 when empty, row+1 for a key held by one
	// row, or -(i+1) for a key whose rows are multi[i].
	slots []int32
	tags  []uint8   // a byte of each occupied slot's hash (bits 32–39)
	used  int       // occupied slots
	shift uint      // 64 − log2(len(slots))
	multi [][]int32 // rows of the keys appended more than once, in append order
}

// keyHasher hashes keys of type K for rowIndex.
type keyHasher[K comparable] interface {
	hash(k K) uint64
}

// intHasher hashes int64 keys by Fibonacci hashing: the product's high bits
// index the table, so keys differing only in their high bits (the churn's
// keys are n%4<<40 + n/4) still spread.
type intHasher struct{}

func (intHasher) hash(k int64) uint64 { return uint64(k) * 0x9E3779B97F4A7C15 }

// strSeed seeds the hash of string keys, per process.
var strSeed = maphash.MakeSeed()

// strHasher hashes string keys with hash/maphash.
type strHasher struct{}

func (strHasher) hash(k string) uint64 { return maphash.String(strSeed, k) }

// rowIndexMinSlots is the table size of the first key.
const rowIndexMinSlots = 64

// add records that row r holds key k, where keys[r] == k and keys holds
// every row added before; rows of one key are added in order.
func (x *rowIndex[K, H]) add(k K, r int32, keys []K) {
	if (x.used+1)*4 > len(x.slots)*3 {
		x.grow(keys)
	}
	i, tag, found := x.find(k, keys)
	switch s := x.slots[i]; {
	case !found:
		x.slots[i], x.tags[i] = r+1, tag
		x.used++
	case s > 0:
		x.multi = append(x.multi, []int32{s - 1, r})
		x.slots[i] = -int32(len(x.multi))
	default:
		x.multi[-s-1] = append(x.multi[-s-1], r)
	}
}

// find returns the slot holding k (found) or else the empty slot where k
// belongs, and the tag of k's hash; the table must have slots.
func (x *rowIndex[K, H]) find(k K, keys []K) (i int, tag uint8, found bool) {
	var h H
	hv := h.hash(k)
	mask := len(x.slots) - 1
	tag = uint8(hv >> 32)
	for i = int(hv >> x.shift); ; i = (i + 1) & mask {
		s := x.slots[i]
		switch {
		case s == 0:
			return i, tag, false
		case x.tags[i] != tag:
		case s > 0:
			if keys[s-1] == k {
				return i, tag, true
			}
		default:
			if keys[x.multi[-s-1][0]] == k {
				return i, tag, true
			}
		}
	}
}

// grow doubles the table (or makes the first one) and places every
// occupied slot again.
func (x *rowIndex[K, H]) grow(keys []K) {
	old, oldTags := x.slots, x.tags
	n := max(2*len(old), rowIndexMinSlots)
	x.slots, x.tags = make([]int32, n), make([]uint8, n)
	x.shift = uint(64 - bits.TrailingZeros(uint(n)))
	mask := n - 1
	var h H
	for j, s := range old {
		if s == 0 {
			continue
		}
		var k K
		if s > 0 {
			k = keys[s-1]
		} else {
			k = keys[x.multi[-s-1][0]]
		}
		i := int(h.hash(k) >> x.shift)
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i], x.tags[i] = s, oldTags[j]
	}
}

// rows returns the first row holding k and the later ones, in append
// order; ok is false when no row holds k. keys is the key column the rows
// were added from (it may have grown since).
func (x *rowIndex[K, H]) rows(k K, keys []K) (first int32, more []int32, ok bool) {
	if x.used == 0 {
		return 0, nil, false
	}
	i, _, found := x.find(k, keys)
	switch s := x.slots[i]; {
	case !found:
		return 0, nil, false
	case s > 0:
		return s - 1, nil, true
	default:
		m := x.multi[-s-1]
		return m[0], m[1:], true
	}
}
