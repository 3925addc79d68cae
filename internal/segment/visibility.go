package segment

import (
	"slices"
	"sync"
)

// visibility is a segment's maintained live-row mask: the rows without a
// delete mark, which is what Visible computes for a read timestamp no
// earlier than every insert and delete applied (the common case: a strong
// or bounded read of a sealed segment). Deletes update it as they apply, so
// such a read does no work per row. It lives under the segment's lock.
type visibility struct {
	// live[i] is false once row i has a delete mark; nil while no row has
	// one (every row is live), len(tss) entries otherwise.
	live []bool
	// marks lists the rows with a delete mark, each once: a read at a
	// timestamp before some marks revives just those rows.
	marks []int32
	// maxDel is the largest delete timestamp ever marked (an upper bound of
	// every delTs).
	maxDel uint64
	// version changes whenever rows are added or a delete mark is set, so
	// that masks derived from the rows can be cached (see CachedMask).
	version uint64
	cache   maskCache
}

// appended records n new rows (live, with no delete mark).
func (v *visibility) appended(n int) {
	if v.live != nil {
		v.live = append(v.live, make([]bool, n)...)
		fillTrue(v.live[len(v.live)-n:])
	}
	v.version++
}

// marked records that row r got delete mark ts (first: it had none), in a
// segment of n rows.
func (v *visibility) marked(r int32, ts uint64, first bool, n int) {
	if v.live == nil {
		v.live = make([]bool, n)
		fillTrue(v.live)
	}
	v.live[r] = false
	if first {
		v.marks = append(v.marks, r)
	}
	v.maxDel = max(v.maxDel, ts)
	v.version++
}

func fillTrue(m []bool) {
	if len(m) == 0 {
		return
	}
	m[0] = true
	for i := 1; i < len(m); i *= 2 {
		copy(m[i:], m[:i])
	}
}

// Settled reports whether visibility at read timestamp ts, with rows
// inserted before expire expired (0 = no TTL), is the segment's latest
// state: no insert or delete newer than ts and no row expired. VisibleAt
// then returns the maintained mask, and anything derived from it alone may
// be cached (CachedMask).
func (v *View) Settled(ts, expire uint64) bool {
	s := v.s
	return ts >= s.maxTs && ts >= s.vis.maxDel && !v.expiring(expire)
}

// expiring reports whether some row was inserted before expire.
func (v *View) expiring(expire uint64) bool { return expire > 0 && v.n > 0 && v.s.minTs < expire }

// VisibleAt returns the rows visible at read timestamp ts that have not
// expired (inserted before expire; 0 = no TTL), and how many they are. A
// nil mask allows every row; a non-nil mask has Len() entries and must not
// be modified, as it may be the segment's own (valid until the Read
// callback returns). When count is 0 no row is visible.
//
// It does no work per row when no row is newer than ts and none expires:
// the mask is then nil (no deletes) or the maintained live-row mask, or a
// copy of it with the rows deleted after ts revived (MVCC for just those).
// Otherwise it computes Visible's per-row mask.
func (v *View) VisibleAt(ts, expire uint64) (mask []bool, count int) {
	s, n := v.s, v.n
	if n == 0 {
		return nil, 0
	}
	if expire > 0 && expire > s.maxTs {
		return make([]bool, n), 0 // every row has expired
	}
	if ts >= s.maxTs && !v.expiring(expire) {
		switch {
		case s.deleted == 0:
			return nil, n
		case ts >= s.vis.maxDel:
			return s.vis.live[:n], n - s.deleted
		}
		m := slices.Clone(s.vis.live[:n])
		count = n - s.deleted
		for _, r := range s.vis.marks {
			if s.delTs[r] > ts {
				m[r] = true
				count++
			}
		}
		return m, count
	}
	m := v.Visible(ts)
	for i, ok := range m {
		if ok && expire > 0 && s.tss[i] < expire {
			m[i] = false
			ok = false
		}
		if ok {
			count++
		}
	}
	return m, count
}

// Version identifies the state of the segment's rows and delete marks: it
// changes whenever either does.
func (v *View) Version() uint64 { return v.s.vis.version }

// maskCacheSize bounds the masks a segment caches (one per distinct filter
// in use), each one byte a row.
const maskCacheSize = 8

// maskCache keeps row masks derived from a segment's rows and delete marks,
// for the segment's current version. It has its own lock, so readers fill it
// while holding the segment's read lock.
type maskCache struct {
	mu      sync.Mutex
	tick    uint64
	entries map[any]*maskEntry
}

type maskEntry struct {
	version uint64
	used    uint64
	mask    []bool
	count   int
}

// CachedMask returns the mask cached under key for the segment's current
// Version, calling build on a miss. Masks are cached only for a sealed
// segment (one whose rows were all given to Load): a growing segment's
// version changes with every insert, so build is then simply called. The
// caller must only cache what depends on the rows and delete marks alone
// (see Settled) and must not modify the mask returned. An error from build
// is returned and nothing is cached.
func (v *View) CachedMask(key any, build func() ([]bool, int, error)) ([]bool, int, error) {
	s := v.s
	if len(s.sorted) == 0 || len(s.sorted) != v.n {
		return build()
	}
	c, version := &s.vis.cache, s.vis.version
	c.mu.Lock()
	c.tick++
	if e, ok := c.entries[key]; ok && e.version == version {
		e.used = c.tick
		c.mu.Unlock()
		return e.mask, e.count, nil
	}
	c.mu.Unlock()
	mask, count, err := build() // outside the lock: other filters' reads go on
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[any]*maskEntry{}
	}
	if _, ok := c.entries[key]; !ok && len(c.entries) >= maskCacheSize {
		var lru any
		oldest := ^uint64(0)
		for k, e := range c.entries {
			if e.version != version {
				lru = k
				break
			}
			if e.used < oldest {
				lru, oldest = k, e.used
			}
		}
		delete(c.entries, lru)
	}
	c.entries[key] = &maskEntry{version: version, used: c.tick, mask: mask, count: count}
	return mask, count, nil
}
