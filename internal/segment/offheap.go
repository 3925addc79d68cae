package segment

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/offheap"
)

// Growing rows off the Go heap. A segment made by NewGrowing keeps the
// rows Append adds to its fixed-width columns (integers, floats, booleans,
// fixed-width vectors), and the insert and delete timestamps, in
// offheap.Regions: address space reserved once per column and committed
// page by page as rows arrive. Appending fills the reservation in place,
// so a growing column is never copied and holds no slack beyond a page,
// and none of it counts towards the Go collector's heap goal (with GOGC
// 100 the heap may reach twice its live size before a collection, which
// is what made a growing row cost several times its bytes in RSS).
//
// The columns stay ordinary column types over contiguous slices, so every
// reader (filters, search kernels, output fields) reads them as before.
// Variable-width columns (strings, JSON, arrays, sparse vectors), null
// masks and the primary-key map stay on the Go heap. A column that
// outgrows its reservation moves to the Go heap by the usual append copy;
// its region stays mapped, unused, until the segment is freed.
//
// The regions are unmapped when the segment is freed: after its owner and
// every reader that Acquired it have Released it (refs.go). Appending
// requires a hold as reading does.

// NewGrowing returns an empty segment, like New, whose appended rows are
// kept off the Go heap in regions of reserve bytes per column (see above).
// A column whose region cannot be reserved (the kernel refused the
// mapping) stays on the Go heap. reserve ≤ 0 keeps every column there.
func NewGrowing(info Info, schema *schemapb.CollectionSchema, reserve int) (*Segment, error) {
	s, err := New(info, schema)
	if err != nil || reserve <= 0 {
		return s, err
	}
	for _, f := range s.fields {
		s.reserveColumn(s.cols[f.GetFieldID()], reserve)
	}
	s.tss = reserveSlice[uint64](s, reserve)
	s.delTs = reserveSlice[uint64](s, reserve)
	return s, nil
}

// OwnRegion makes the segment own r, which backs one of its columns (the
// query node reads loaded fields into regions): it is unmapped when the
// segment is freed, and its pages are given back when ShareColumn
// replaces the column. It fails with ErrFreed, r left to the caller, on a
// freed segment.
func (s *Segment) OwnRegion(r *offheap.Region) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addRegion(r)
}

// addRegion adds a region to those unmapped when the segment is freed
// (registering that, once). The caller holds s.mu or has the segment to
// itself.
func (s *Segment) addRegion(r *offheap.Region) error {
	s.freeMu.Lock()
	freed := s.freed
	s.freeMu.Unlock()
	if freed {
		return fmt.Errorf("segment %d: %w", s.ID, ErrFreed)
	}
	if !s.regionsOnFree {
		if err := s.OnFree(s.closeRegions); err != nil {
			return err
		}
		s.regionsOnFree = true
	}
	s.regions = append(s.regions, r)
	return nil
}

// discardRegionOf gives back the pages of the region holding a replaced
// column's data, if the segment owns one: the mapping stays until the
// segment is freed, so a reader still holding the old column reads zeros
// rather than faulting.
func (s *Segment) discardRegionOf(c column.Column) error {
	var err error
	for _, r := range s.regions {
		switch c := c.(type) {
		case *column.FloatVectors:
			if offheap.Holds(r, c.Data) {
				err = r.Discard()
			}
		case *column.ByteVectors:
			if offheap.Holds(r, c.Data) {
				err = r.Discard()
			}
		}
	}
	return err
}

// reserveColumn gives an empty fixed-width column a region as its backing
// array; other columns are left as they are.
func (s *Segment) reserveColumn(c column.Column, reserve int) {
	switch c := c.(type) {
	case *column.Ints:
		c.Data = reserveSlice[int64](s, reserve)
	case *column.Floats:
		c.Data = reserveSlice[float64](s, reserve)
	case *column.Bools:
		c.Data = reserveSlice[bool](s, reserve)
	case *column.FloatVectors:
		c.Data = reserveSlice[float32](s, reserve)
	case *column.ByteVectors:
		c.Data = reserveSlice[byte](s, reserve)
	}
}

// reserveSlice reserves a region for the segment and returns an empty
// slice over it, or nil (a Go heap slice to be) when it cannot.
func reserveSlice[T offheap.Plain](s *Segment, reserve int) []T {
	r, err := offheap.Reserve(reserve)
	if err != nil {
		return nil
	}
	out, err := offheap.Slice[T](r)
	if err == nil {
		err = s.addRegion(r)
	}
	if err != nil {
		_ = r.Close()
		return nil
	}
	return out
}

// closeRegions unmaps the segment's regions (run once it is freed).
func (s *Segment) closeRegions() error {
	var errs []error
	for _, r := range s.regions {
		errs = append(errs, r.Close())
	}
	s.regions = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("segment %d: %w", s.ID, err)
	}
	return nil
}

// MoveOffHeap copies a loaded (sealed) segment's rows into regions of
// their exact size, taking them out of the Go collector's heap goal: the
// fixed-width columns the segment owns (not shared ones, not those of
// fields in keep, whose data lives elsewhere already, such as a mapped
// column file), the insert timestamps, the key permutation and the delete
// marks (only the rows marked are written, so a region's pages are
// committed where deletes land). The heap copies become garbage. Whatever
// cannot be reserved stays on the heap. The segment must be held; readers
// see the move under the write lock, and the regions are unmapped when
// the segment is freed.
func (s *Segment) MoveOffHeap(keep map[int64]bool) error {
	if s.refs.Load() <= 0 {
		return fmt.Errorf("segment %d: move off heap: %w", s.ID, ErrFreed)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, c := range s.cols {
		if s.shared[id] || keep[id] {
			continue
		}
		switch c := c.(type) {
		case *column.Ints:
			c.Data = moveSlice(s, c.Data)
		case *column.Floats:
			c.Data = moveSlice(s, c.Data)
		case *column.Bools:
			c.Data = moveSlice(s, c.Data)
		case *column.FloatVectors:
			c.Data = moveSlice(s, c.Data)
		case *column.ByteVectors:
			c.Data = moveSlice(s, c.Data)
		}
	}
	s.tss = moveSlice(s, s.tss)
	s.sorted = moveSlice(s, s.sorted)
	if len(s.delTs) > 0 {
		if r, err := offheap.Reserve(8 * len(s.delTs)); err == nil {
			d, err := offheap.Slice[uint64](r)
			if err == nil {
				err = s.addRegion(r)
			}
			if err != nil {
				_ = r.Close()
			} else {
				d = d[:len(s.delTs)]
				for i, v := range s.delTs {
					if v != 0 {
						d[i] = v
					}
				}
				s.delTs = d
			}
		}
	}
	return nil
}

// moveSlice copies data into a region of its exact size and returns the
// copy, or data itself when it is empty or no region can be reserved.
func moveSlice[T offheap.Plain](s *Segment, data []T) []T {
	if len(data) == 0 {
		return data
	}
	var zero T
	r, err := offheap.Reserve(len(data) * int(unsafe.Sizeof(zero)))
	if err != nil {
		return data
	}
	out, err := offheap.Slice[T](r)
	if err == nil {
		err = s.addRegion(r)
	}
	if err != nil {
		_ = r.Close()
		return data
	}
	return append(out, data...)
}
