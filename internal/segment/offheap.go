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
// fixed-width vectors), and the insert and delete timestamps, in an
// offheap.Region: address space reserved once, a slot per column for the
// same number of rows, committed page by page as rows arrive. Appending fills a
// slot in place, so a growing column is never copied and holds no slack
// beyond a page, and none of it counts towards the Go collector's heap
// goal (with GOGC 100 the heap may reach twice its live size before a
// collection, which is what made a growing row cost several times its
// bytes in RSS).
//
// The columns stay ordinary column types over contiguous slices, so every
// reader (filters, search kernels, output fields) reads them as before.
// Variable-width columns (strings, JSON, arrays, sparse vectors), null
// masks and the primary-key map stay on the Go heap. A column that
// outgrows its slot moves to the Go heap by the usual append copy; the
// slot stays mapped, unused, until the segment is freed.
//
// The regions are unmapped when the segment is freed: after its owner and
// every reader that Acquired it have Released it (refs.go). Appending
// requires a hold as reading does.

// NewGrowing returns an empty segment, like New, whose appended rows are
// kept off the Go heap (see above) in one region of about reserve bytes
// (one mapping): each column's slot holds the same number of rows, reserve
// divided by the bytes of a row's fixed-width values and timestamps,
// rounded up to whole pages. When the region cannot be reserved (the
// kernel refused the mapping) the rows stay on the Go heap; reserve ≤ 0
// keeps them there too.
func NewGrowing(info Info, schema *schemapb.CollectionSchema, reserve int) (*Segment, error) {
	s, err := New(info, schema)
	if err != nil || reserve <= 0 {
		return s, err
	}
	var fixed []column.Column
	rowBytes := 16 // insert and delete timestamps
	for _, f := range s.fields {
		c := s.cols[f.GetFieldID()]
		if w := fixedWidth(c); w > 0 {
			fixed = append(fixed, c)
			rowBytes += w
		}
	}
	rows := max(reserve/rowBytes, 1)
	total := 2 * pageBytes(8*rows)
	for _, c := range fixed {
		total += pageBytes(rows * fixedWidth(c))
	}
	r, err := offheap.Reserve(total)
	if err != nil {
		return s, nil // no region (the error says why): the rows stay on the heap
	}
	if err := s.addRegion(r); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	off := 0
	next := func(width int) (int, int) {
		size := pageBytes(rows * width)
		off += size
		return off - size, size
	}
	for _, c := range fixed {
		o, n := next(fixedWidth(c))
		switch c := c.(type) {
		case *column.Ints:
			c.Data, err = offheap.SliceAt[int64](r, o, n)
		case *column.Floats:
			c.Data, err = offheap.SliceAt[float64](r, o, n)
		case *column.Bools:
			c.Data, err = offheap.SliceAt[bool](r, o, n)
		case *column.FloatVectors:
			c.Data, err = offheap.SliceAt[float32](r, o, n)
		case *column.ByteVectors:
			c.Data, err = offheap.SliceAt[byte](r, o, n)
		}
		if err != nil {
			return nil, errors.Join(err, s.Release())
		}
	}
	o, n := next(8)
	if s.tss, err = offheap.SliceAt[uint64](r, o, n); err != nil {
		return nil, errors.Join(err, s.Release())
	}
	o, n = next(8)
	if s.delTs, err = offheap.SliceAt[uint64](r, o, n); err != nil {
		return nil, errors.Join(err, s.Release())
	}
	return s, nil
}

// fixedWidth is the bytes a row takes in a fixed-width column kept off the
// heap, 0 for the other columns.
func fixedWidth(c column.Column) int {
	switch c := c.(type) {
	case *column.Ints, *column.Floats:
		return 8 // Ints and Floats hold int64 and float64 values
	case *column.Bools:
		return 1
	case *column.FloatVectors:
		return 4 * c.Dim
	case *column.ByteVectors:
		return c.Width
	}
	return 0
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
	var errs []error
	for _, r := range s.regions {
		switch c := c.(type) {
		case *column.FloatVectors:
			errs = append(errs, offheap.Discard(r, c.Data))
		case *column.ByteVectors:
			errs = append(errs, offheap.Discard(r, c.Data))
		}
	}
	return errors.Join(errs...)
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

// MoveOffHeap copies a loaded (sealed) segment's rows into one region,
// taking them out of the Go collector's heap goal: the fixed-width columns
// the segment owns (not shared ones, not those of fields in keep, whose
// data lives elsewhere already, such as a mapped column file or a region
// the segment owns), the insert timestamps, the key permutation and the
// delete marks (only the rows marked are written, so their pages are
// committed where deletes land). Each gets whole pages of the region, at
// its exact size rounded up to a page. The heap copies become garbage.
// When the region cannot be reserved everything stays on the heap. The
// segment must be held; readers see the move under the write lock, and
// the region is unmapped when the segment is freed.
func (s *Segment) MoveOffHeap(keep map[int64]bool) error {
	if s.refs.Load() <= 0 {
		return fmt.Errorf("segment %d: move off heap: %w", s.ID, ErrFreed)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var moves []move
	for id, c := range s.cols {
		if s.shared[id] || keep[id] {
			continue
		}
		switch c := c.(type) {
		case *column.Ints:
			moves = append(moves, planMove(&c.Data))
		case *column.Floats:
			moves = append(moves, planMove(&c.Data))
		case *column.Bools:
			moves = append(moves, planMove(&c.Data))
		case *column.FloatVectors:
			moves = append(moves, planMove(&c.Data))
		case *column.ByteVectors:
			moves = append(moves, planMove(&c.Data))
		}
	}
	moves = append(moves, planMove(&s.tss), planMove(&s.sorted), planMarks(&s.delTs))
	total := 0
	for _, m := range moves {
		total += m.size
	}
	if total == 0 {
		return nil
	}
	r, err := offheap.Reserve(total)
	if err != nil {
		return nil // no region (the error says why): the rows stay on the heap
	}
	if err := s.addRegion(r); err != nil {
		return errors.Join(err, r.Close())
	}
	off := 0
	for _, m := range moves {
		if m.size == 0 {
			continue
		}
		if err := m.place(r, off); err != nil {
			return err // the slices placed so far are in the region, the rest on the heap: all valid
		}
		off += m.size
	}
	return nil
}

// move is one slice MoveOffHeap copies: its size in the region (whole
// pages; 0 for an empty slice) and how it goes there.
type move struct {
	size  int
	place func(r *offheap.Region, off int) error
}

// pageBytes rounds n up to whole pages.
func pageBytes(n int) int {
	page := offheap.PageSize()
	return (n + page - 1) / page * page
}

// planMove plans copying *p into the region.
func planMove[T offheap.Plain](p *[]T) move {
	var zero T
	size := pageBytes(len(*p) * int(unsafe.Sizeof(zero)))
	return move{size: size, place: func(r *offheap.Region, off int) error {
		out, err := offheap.SliceAt[T](r, off, size)
		if err != nil {
			return err
		}
		*p = append(out, *p...)
		return nil
	}}
}

// planMarks plans moving the delete marks: only the non-zero ones are
// written, the region's pages being zero.
func planMarks(p *[]uint64) move {
	size := pageBytes(8 * len(*p))
	return move{size: size, place: func(r *offheap.Region, off int) error {
		out, err := offheap.SliceAt[uint64](r, off, size)
		if err != nil {
			return err
		}
		out = out[:len(*p)]
		for i, v := range *p {
			if v != 0 {
				out[i] = v
			}
		}
		*p = out
		return nil
	}}
}
