package querynode

import (
	"context"
	"errors"
	"unsafe"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/offheap"
	"github.com/strata-db/strata/internal/storage"
)

// errNotPlain stops copying binlog parts into a region: a part has nulls,
// another shape, or more rows than the segment.
var errNotPlain = errors.New("querynode: binlog part does not fit the region")

// loadFieldOffHeap reads a user field of fixed width without nulls
// (integers, floats, booleans, fixed-width vectors) from its binlogs into
// a region of exactly the segment's rows, one binlog at a time, so that
// the load holds one binlog's rows on the heap rather than the whole
// column twice (its parts, then their concatenation). ok is false, with
// nothing reserved, for any other field and when the binlogs do not hold
// exactly the segment's rows (a field added after the segment was
// written): the caller reads it into the heap. The caller gives the
// region to the segment (segment.OwnRegion).
func (d *delegator) loadFieldOffHeap(ctx context.Context, info catalog.SegmentInfo, f *schemapb.FieldSchema) (c column.Column, r *offheap.Region, ok bool, err error) {
	rows := int(info.FieldLogRows())
	if f.GetFieldID() < 100 || f.GetNullable() || rows <= 0 {
		return nil, nil, false, nil
	}
	want, err := column.New(f)
	if err != nil {
		return nil, nil, false, nil // the heap path reports it
	}
	loc := storage.FieldLogs{
		Root:       d.node.cfg.RootPath,
		Collection: info.CollectionID, Partition: info.PartitionID, ID: info.ID, LogIDs: info.LogIDs(f.GetFieldID()),
	}
	parts := func(fn func(column.Column) error) error {
		return storage.ReadFieldParts(ctx, d.node.objects, loc, f, fn)
	}
	switch w := want.(type) {
	case *column.Ints:
		w.Data, r, ok, err = readInto(parts, rows, 1, func(p column.Column) ([]int64, bool) {
			q, is := p.(*column.Ints)
			return dataOf(q, is, func() []int64 { return q.Data })
		})
	case *column.Floats:
		w.Data, r, ok, err = readInto(parts, rows, 1, func(p column.Column) ([]float64, bool) {
			q, is := p.(*column.Floats)
			return dataOf(q, is, func() []float64 { return q.Data })
		})
	case *column.Bools:
		w.Data, r, ok, err = readInto(parts, rows, 1, func(p column.Column) ([]bool, bool) {
			q, is := p.(*column.Bools)
			return dataOf(q, is, func() []bool { return q.Data })
		})
	case *column.FloatVectors:
		w.Data, r, ok, err = readInto(parts, rows, w.Dim, func(p column.Column) ([]float32, bool) {
			q, is := p.(*column.FloatVectors)
			return dataOf(q, is && q.Dim == w.Dim, func() []float32 { return q.Data })
		})
	case *column.ByteVectors:
		w.Data, r, ok, err = readInto(parts, rows, w.Width, func(p column.Column) ([]byte, bool) {
			q, is := p.(*column.ByteVectors)
			return dataOf(q, is && q.Width == w.Width, func() []byte { return q.Data })
		})
	default:
		return nil, nil, false, nil
	}
	if !ok || err != nil {
		return nil, nil, false, err
	}
	return want, r, true, nil
}

// dataOf returns a part's values when it is of the wanted type and shape
// (is) and has no nulls.
func dataOf[T any](c column.Column, is bool, data func() []T) ([]T, bool) {
	if !is || c.Validity() != nil {
		return nil, false
	}
	return data(), true
}

// readInto copies the parts' values (per values a row) into a region of
// rows rows. ok is false, and the region closed, when a part does not fit
// or the parts do not hold exactly rows rows.
func readInto[T offheap.Plain](parts func(func(column.Column) error) error, rows, per int, data func(column.Column) ([]T, bool)) ([]T, *offheap.Region, bool, error) {
	var zero T
	r, err := offheap.Reserve(rows * per * int(unsafe.Sizeof(zero)))
	if err != nil {
		return nil, nil, false, nil // no region: the heap path loads the field
	}
	dst, err := offheap.Slice[T](r)
	if err == nil {
		dst = dst[: 0 : rows*per] // exactly the rows: a longer part does not fit
		err = parts(func(p column.Column) error {
			v, ok := data(p)
			if !ok || len(v) > cap(dst)-len(dst) {
				return errNotPlain
			}
			dst = append(dst, v...)
			return nil
		})
	}
	if err != nil || len(dst) != rows*per {
		_ = r.Close()
		if errors.Is(err, errNotPlain) || err == nil {
			return nil, nil, false, nil
		}
		return nil, nil, false, err
	}
	return dst, r, true, nil
}
