package segment

import (
	"errors"
	"fmt"

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
	if len(s.regions) > 0 {
		if err := s.OnFree(s.closeRegions); err != nil {
			return nil, errors.Join(err, s.closeRegions())
		}
	}
	return s, nil
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
	if err != nil {
		_ = r.Close()
		return nil
	}
	s.regions = append(s.regions, r)
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
