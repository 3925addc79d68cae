package segment

import "sync"

// memo holds values derived from a segment's rows, built on first use and
// kept for the segment's lifetime (a filter's text index, for one). It has
// its own lock, so readers may fill it while holding the segment's read
// lock.
type memo struct {
	mu   sync.Mutex
	vals map[any]any
}

// get returns the value under key, calling build once to create it.
func (m *memo) get(key any, build func() any) any {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.vals[key]; ok {
		return v
	}
	if m.vals == nil {
		m.vals = map[any]any{}
	}
	v := build()
	m.vals[key] = v
	return v
}

// Memo implements expr.MemoBatch: the value the segment keeps under key,
// built by build on first use. Values must only depend on rows, which a
// segment never rewrites (it only gains rows at the end), so a value that
// covers a prefix of the rows stays valid and can be extended.
func (v *View) Memo(key any, build func() any) any { return v.s.memo.get(key, build) }
