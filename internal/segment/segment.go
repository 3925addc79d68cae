// Package segment holds the query node's in-memory segments: columnar rows
// with their insert timestamps, a primary-key index, and per-row delete
// timestamps, giving MVCC visibility.
//
// Visibility at read timestamp T: a row is visible iff its insert timestamp
// is ≤ T and it has no delete with insert_ts < delete_ts ≤ T. Deletes are
// strictly after the insert they remove, so an upsert (a delete and an
// insert of the same key at one timestamp) keeps the new row. Each row keeps
// only the smallest such delete timestamp, which is all visibility needs.
// Readers ask for visibility with View.VisibleAt, which does no work per row
// in the common case (no row newer than the read, none expiring): nil
// without deletes, else a live-row mask the segment maintains as deletes
// apply (visibility.go). Masks derived from it, a filter's for one, can be
// cached per sealed segment by View.CachedMask until its Version changes.
//
// A growing segment is appended to while it is read; a sealed segment is
// loaded once. Both are the same type; readers use Read, which holds a read
// lock for the duration of the callback.
//
// The primary-key index maps keys to rows for deletes. Rows given to Load
// (a sealed segment's) are indexed by a permutation sorted by key, 4 bytes
// a row, searched by bisection; rows appended later (a growing segment's)
// go into a hash map, which costs an order of magnitude more per row but
// takes inserts one by one.
//
// # Vectors held once
//
// A sealed segment whose vector index stores the raw vectors (HNSW under
// L2 or IP: index.RawVectors) does not keep a decoded copy of its own: the
// query node gives Load, or later ShareColumn, a column whose data is the
// index's stored vectors, bit for bit what the binlogs hold. Every reader
// (output fields, exact and range search, iterators, group-by) reads the
// column as before; only the memory is the index's. MemoryBytes counts
// the columns the segment owns, not shared ones.
//
// # Rows outside the Go heap
//
// A segment made by NewGrowing keeps the fixed-width columns and the
// timestamps of the rows appended to it in offheap regions, filled in
// place; MoveOffHeap copies a loaded segment's there at their exact size.
// The regions are unmapped when the segment is freed (refs.go), so
// appending, like reading, requires a hold. See offheap.go.
package segment

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/offheap"
)

// Info identifies a segment.
type Info struct {
	ID           int64
	CollectionID int64
	PartitionID  int64
	VChannel     string
	// Level is the segment's compaction level (catalog.SegmentLevel
	// numbering: 1 = L1, 2 = L2).
	Level int
	// ClusterField, ClusterLo and ClusterHi give the clustering-key range of
	// an L2 segment (ClusterLo nil = unknown): reads whose filter excludes
	// the range skip the segment.
	ClusterField         int64
	ClusterLo, ClusterHi any
}

// Segment is a set of rows of one collection partition.
type Segment struct {
	Info
	pkField int64

	mu     sync.RWMutex
	fields []*schemapb.FieldSchema
	cols   map[int64]column.Column
	tss    []uint64
	delTs  []uint64
	// maxTs is the largest insert timestamp, deleted the number of rows
	// with a delete mark: together they tell when every row is visible.
	maxTs   uint64
	minTs   uint64 // the smallest insert timestamp (TTL: no row expires before it)
	deleted int
	vis     visibility // the maintained live-row mask (see visibility.go)
	// sorted lists the rows Load adopted (0 … len(sorted)-1) in key order.
	sorted []int32
	// intIdx and strIdx index the rows appended after Load (empty until then).
	intIdx rowIndex[int64, intHasher]
	strIdx rowIndex[string, strHasher]

	indexes map[int64]any // field ID → an index attached by the query node
	// shared marks the columns whose data another structure owns (an
	// attached index's stored vectors, see ShareColumn).
	shared map[int64]bool
	memo   memo // state readers derive from the rows (see Memo)

	// refs counts the holders, onFree is run when the last one goes and
	// freed is set then (refs.go).
	refs   atomic.Int64
	freeMu sync.Mutex
	onFree []func() error
	freed  bool
	// regions back the columns and timestamps of a segment made by
	// NewGrowing (offheap.go); unmapped when it is freed.
	regions       []*offheap.Region
	regionsOnFree bool // closeRegions is registered with OnFree
}

// SetIndex attaches an index over a field's rows (the query node decides
// what it is); readers see it from their next Read on.
func (s *Segment) SetIndex(fieldID int64, idx any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.indexes == nil {
		s.indexes = map[int64]any{}
	}
	s.indexes[fieldID] = idx
}

// ShareColumn replaces the column of a field by c, a column of the same
// type and rows whose data another structure owns (the stored vectors of
// the field's index), so that the segment holds that data once. c must
// equal the column it replaces row for row (the caller checks); it is
// never modified, and MemoryBytes no longer counts it. A replaced vector
// column in a region the segment owns gives its pages back.
func (s *Segment) ShareColumn(fieldID int64, c column.Column) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.cols[fieldID]
	switch {
	case !ok:
		return fmt.Errorf("segment %d: no field %d to share", s.ID, fieldID)
	case fmt.Sprintf("%T", old) != fmt.Sprintf("%T", c):
		return fmt.Errorf("segment %d: field %d is a %T, the shared column a %T", s.ID, fieldID, old, c)
	case c.Len() != len(s.tss):
		return fmt.Errorf("segment %d: shared column of field %d has %d rows, the segment %d", s.ID, fieldID, c.Len(), len(s.tss))
	}
	if err := s.discardRegionOf(old); err != nil {
		return fmt.Errorf("segment %d: field %d: %w", s.ID, fieldID, err)
	}
	s.cols[fieldID] = c
	if s.shared == nil {
		s.shared = map[int64]bool{}
	}
	s.shared[fieldID] = true
	return nil
}

// SharesColumn reports whether a field's column is shared (ShareColumn).
func (s *Segment) SharesColumn(fieldID int64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.shared[fieldID]
}

// MemoryBytes estimates the memory the segment's rows hold: the columns it
// owns (MemorySize; shared ones excluded), the insert and delete
// timestamps and the primary-key permutation. Attached indexes and the
// primary-key hash maps of appended rows are not counted.
func (s *Segment) MemoryBytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var b int64
	for id, c := range s.cols {
		if !s.shared[id] {
			b += int64(c.MemorySize())
		}
	}
	return b + 8*int64(len(s.tss)+len(s.delTs)) + 4*int64(len(s.sorted))
}

// HasIndex reports whether an index is attached to a field.
func (s *Segment) HasIndex(fieldID int64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.indexes[fieldID]
	return ok
}

// New returns an empty segment for the schema's fields (system fields
// excluded), held by the caller (see Holders in refs.go).
func New(info Info, schema *schemapb.CollectionSchema) (*Segment, error) {
	s := &Segment{Info: info, cols: map[int64]column.Column{}, pkField: -1}
	s.refs.Store(1)
	for _, f := range schema.GetFields() {
		if f.GetFieldID() < 100 {
			continue
		}
		c, err := column.New(f)
		if err != nil {
			return nil, err
		}
		s.fields = append(s.fields, f)
		s.cols[f.GetFieldID()] = c
		if f.GetIsPrimaryKey() {
			s.pkField = f.GetFieldID()
		}
	}
	if s.pkField < 0 {
		return nil, fmt.Errorf("segment: schema has no primary key")
	}
	return s, nil
}

// PKField is the primary key field ID.
func (s *Segment) PKField() int64 { return s.pkField }

// Append adds rows. cols must hold one column per user field (keyed by field
// ID) with len(tss) rows each. The caller holds the segment (its owner's
// hold or one Acquired): a freed segment refuses rows with ErrFreed.
func (s *Segment) Append(cols map[int64]column.Column, tss []uint64) error {
	if s.refs.Load() <= 0 {
		return fmt.Errorf("segment %d: append: %w", s.ID, ErrFreed)
	}
	n := len(tss)
	for id := range s.cols {
		c, ok := cols[id]
		if !ok {
			return fmt.Errorf("segment %d: field %d missing in append", s.ID, id)
		}
		if c.Len() != n {
			return fmt.Errorf("segment %d: field %d has %d rows, want %d", s.ID, id, c.Len(), n)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	base := len(s.tss)
	for id, dst := range s.cols {
		column.AppendAll(dst, cols[id])
	}
	s.tss = append(s.tss, tss...)
	if d := len(s.delTs); d+n <= cap(s.delTs) {
		// delTs only grows, so its spare capacity was never written and is
		// zero (a region's pages, or what append allocated past the
		// length); extending it writes nothing, and a region's pages are
		// committed only when a delete marks a row on them.
		s.delTs = s.delTs[:d+n]
	} else {
		s.delTs = append(s.delTs, make([]uint64, n)...)
	}
	if base == 0 && n > 0 {
		s.minTs = tss[0]
	}
	for _, t := range tss {
		s.maxTs = max(s.maxTs, t)
		s.minTs = min(s.minTs, t)
	}
	s.vis.appended(n)
	switch pk := s.cols[s.pkField].(type) {
	case *column.Ints:
		for i := base; i < base+n; i++ {
			s.intIdx.add(pk.Data[i], int32(i), pk.Data)
		}
	case *column.Strings:
		for i := base; i < base+n; i++ {
			s.strIdx.add(pk.Data[i], int32(i), pk.Data)
		}
	}
	return nil
}

// Load fills an empty segment with rows, taking ownership of the columns
// (no copy): the caller must not use them afterwards. Sealed segments are
// built this way from their binlogs.
func (s *Segment) Load(cols map[int64]column.Column, tss []uint64) error {
	s.mu.Lock()
	empty := len(s.tss) == 0
	s.mu.Unlock()
	if !empty {
		return s.Append(cols, tss)
	}
	n := len(tss)
	for id, dst := range s.cols {
		c, ok := cols[id]
		if !ok {
			return fmt.Errorf("segment %d: field %d missing in load", s.ID, id)
		}
		if c.Len() != n {
			return fmt.Errorf("segment %d: field %d has %d rows, want %d", s.ID, id, c.Len(), n)
		}
		if fmt.Sprintf("%T", c) != fmt.Sprintf("%T", dst) {
			return fmt.Errorf("segment %d: field %d is a %T, want %T", s.ID, id, c, dst)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.cols {
		s.cols[id] = cols[id]
	}
	s.tss = tss
	s.delTs = make([]uint64, n)
	s.maxTs, s.deleted = 0, 0
	if n > 0 {
		s.minTs = tss[0]
	}
	for _, t := range tss {
		s.maxTs = max(s.maxTs, t)
		s.minTs = min(s.minTs, t)
	}
	s.vis = visibility{version: s.vis.version + 1}
	s.sorted = make([]int32, n)
	for i := range s.sorted {
		s.sorted[i] = int32(i)
	}
	switch pk := s.cols[s.pkField].(type) {
	case *column.Ints:
		slices.SortFunc(s.sorted, func(a, b int32) int { return cmp.Or(cmp.Compare(pk.Data[a], pk.Data[b]), cmp.Compare(a, b)) })
	case *column.Strings:
		slices.SortFunc(s.sorted, func(a, b int32) int { return cmp.Or(cmp.Compare(pk.Data[a], pk.Data[b]), cmp.Compare(a, b)) })
	}
	return nil
}

// sortedRows returns the loaded rows holding key v (a run of s.sorted).
func sortedRows[T cmp.Ordered](sorted []int32, data []T, v T) []int32 {
	lo, _ := slices.BinarySearchFunc(sorted, v, func(r int32, v T) int { return cmp.Compare(data[r], v) })
	hi := lo
	for hi < len(sorted) && data[sorted[hi]] == v {
		hi++
	}
	return sorted[lo:hi]
}

// Delete applies deletes of the given keys (a column.Ints or column.Strings)
// at timestamps tss and returns how many rows gained an earlier delete mark.
func (s *Segment) Delete(pks column.Column, tss []uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	markRow := func(r int32, ts uint64) {
		if s.tss[r] < ts && (s.delTs[r] == 0 || s.delTs[r] > ts) {
			first := s.delTs[r] == 0
			if first {
				s.deleted++
			}
			s.delTs[r] = ts
			s.vis.marked(r, ts, first, len(s.tss))
			n++
		}
	}
	mark := func(rows []int32, ts uint64) {
		for _, r := range rows {
			markRow(r, ts)
		}
	}
	var rows []int32 // the appended rows of a key
	switch pk := pks.(type) {
	case *column.Ints:
		own, ok := s.cols[s.pkField].(*column.Ints)
		if !ok {
			return 0
		}
		for i, v := range pk.Data {
			if len(s.sorted) > 0 {
				mark(sortedRows(s.sorted, own.Data, v), tss[i])
			}
			rows = s.intIdx.rows(v, own.Data, rows[:0])
			mark(rows, tss[i])
		}
	case *column.Strings:
		own, ok := s.cols[s.pkField].(*column.Strings)
		if !ok {
			return 0
		}
		for i, v := range pk.Data {
			if len(s.sorted) > 0 {
				mark(sortedRows(s.sorted, own.Data, v), tss[i])
			}
			rows = s.strIdx.rows(v, own.Data, rows[:0])
			mark(rows, tss[i])
		}
	}
	return n
}

// Len is the number of rows (visible or not).
func (s *Segment) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tss)
}

// Read calls fn with a consistent view of the segment, under a read lock.
// The view must not be used after fn returns.
func (s *Segment) Read(fn func(v *View) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn(&View{s: s, n: len(s.tss)})
}

// View is a read-only view of a segment's rows.
type View struct {
	s *Segment
	n int
}

// Len implements expr.Batch.
func (v *View) Len() int { return v.n }

// Column implements expr.Batch: the column of a field, or nil if unknown.
func (v *View) Column(fieldID int64) column.Column { return v.s.cols[fieldID] }

// Fields lists the user fields of the segment.
func (v *View) Fields() []*schemapb.FieldSchema { return v.s.fields }

// Timestamp returns row i's insert timestamp.
func (v *View) Timestamp(i int) uint64 { return v.s.tss[i] }

// AllVisible reports whether every row of the view is visible at read
// timestamp ts (none inserted after it, none deleted), which lets a reader
// skip Visible's per-row mask.
func (v *View) AllVisible(ts uint64) bool { return v.s.maxTs <= ts && v.s.deleted == 0 }

// Visible returns one flag per row: visible at read timestamp ts.
func (v *View) Visible(ts uint64) []bool {
	out := make([]bool, v.n)
	tss, del := v.s.tss[:v.n], v.s.delTs[:v.n]
	for i := range out {
		out[i] = tss[i] <= ts && (del[i] == 0 || del[i] > ts)
	}
	return out
}

// Index returns the index attached to a field, or nil.
func (v *View) Index(fieldID int64) any { return v.s.indexes[fieldID] }

// Segment returns the underlying segment's identity.
func (v *View) Segment() Info { return v.s.Info }
