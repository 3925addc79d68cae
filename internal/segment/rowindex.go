package segment

import (
	"hash/maphash"
	"math/bits"
	"slices"
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
// Most keys are appended once and their slot holds their row. The rows of
// a key appended again (an upsert, or a duplicate insert) are chained in a
// flat slice of links, newest first, 8 bytes a row, and its slot refers to
// the newest link.
type rowIndex[K comparable, H keyHasher[K]] struct {
	// slots holds, for each slot, 0 when empty, row+1 for a key held by one
	// row, or -(j+1) for a key whose newest row is link j.
	slots []int32
	tags  []uint8 // a byte of each occupied slot's hash (bits 32–39)
	used  int     // occupied slots
	shift uint    // 64 − log2(len(slots))
	// links holds link j as links[2j], a row, and links[2j+1], the link of
	// the key's row before it plus 1 (0 after its first row).
	links []int32
}

// keyHasher hashes keys of type K for rowIndex.
type keyHasher[K comparable] interface {
	hash(k K) uint64
}

// intHasher hashes int64 keys: the key, mixed with a per-process seed, goes
// through MurmurHash3's 64-bit finalizer, which spreads keys that differ
// only in a few bits (the churn's keys are n%4<<40 + n/4), and the seed
// keeps a client from choosing keys that collide in linear probing.
type intHasher struct{}

func (intHasher) hash(k int64) uint64 {
	h := uint64(k) ^ intSeed
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// strSeed and intSeed seed the hashes of keys, per process.
var (
	strSeed = maphash.MakeSeed()
	intSeed = maphash.String(strSeed, "rowIndex")
)

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
	if !found {
		x.slots[i], x.tags[i] = r+1, tag
		x.used++
		return
	}
	prev := x.slots[i] // the link before r, as -(j+1)
	if prev > 0 {
		x.links = append(x.links, prev-1, 0)
		prev = -int32(len(x.links) / 2)
	}
	x.links = append(x.links, r, -prev)
	x.slots[i] = -int32(len(x.links) / 2)
}

// row returns a slot's row: its only row, or its newest one.
func (x *rowIndex[K, H]) row(s int32) int32 {
	if s > 0 {
		return s - 1
	}
	return x.links[2*(-s-1)]
}

// find returns the slot holding k (found) or else the empty slot where k
// belongs, and the tag of k's hash; the table must have slots.
func (x *rowIndex[K, H]) find(k K, keys []K) (i int, tag uint8, found bool) {
	var h H
	hv := h.hash(k)
	mask := len(x.slots) - 1
	tag = uint8(hv >> 32)
	for i = int(hv >> x.shift); ; i = (i + 1) & mask {
		switch s := x.slots[i]; {
		case s == 0:
			return i, tag, false
		case x.tags[i] == tag && keys[x.row(s)] == k:
			return i, tag, true
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
		i := int(h.hash(keys[x.row(s)]) >> x.shift)
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i], x.tags[i] = s, oldTags[j]
	}
}

// rows appends to buf the rows holding k, in append order, and returns
// it; keys is the key column the rows were added from (it may have grown
// since).
func (x *rowIndex[K, H]) rows(k K, keys []K, buf []int32) []int32 {
	if x.used == 0 {
		return buf
	}
	i, _, found := x.find(k, keys)
	if !found {
		return buf
	}
	s := x.slots[i]
	if s > 0 {
		return append(buf, s-1)
	}
	from := len(buf)
	for j := -s - 1; ; {
		buf = append(buf, x.links[2*j])
		next := x.links[2*j+1]
		if next == 0 {
			break
		}
		j = next - 1
	}
	slices.Reverse(buf[from:])
	return buf
}
