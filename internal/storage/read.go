package storage

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// ObjectGetter reads objects by key.
type ObjectGetter interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// FieldLogs locates one field's insert binlogs of a segment, in row order.
type FieldLogs struct {
	Root                      string
	Collection, Partition, ID int64
	LogIDs                    []int64
	// Rows is the segment's row count. A fillable field (column.Fillable)
	// whose binlogs hold fewer rows, one added to the schema after (some
	// of) the segment was written, reads as column.Fill's rows first, then
	// its binlogs; 0 turns that off.
	Rows int64
}

// ReadField reads a field's insert binlogs and concatenates them into one
// column (rows in log order). It fails when the field has no binlogs,
// unless the field was added after the segment was written (FieldLogs.Rows).
func ReadField(ctx context.Context, get ObjectGetter, loc FieldLogs, f *schemapb.FieldSchema) (column.Column, error) {
	id := f.GetFieldID()
	parts := make([]column.Column, 0, len(loc.LogIDs))
	if err := ReadFieldParts(ctx, get, loc, f, func(c column.Column) error {
		parts = append(parts, c)
		return nil
	}); err != nil {
		return nil, err
	}
	// A field added after some of the segment's syncs has binlogs only for
	// the later ones: the earlier rows, always the first, read as Fill's.
	got := 0
	for _, p := range parts {
		got += p.Len()
	}
	if int64(got) < loc.Rows && column.Fillable(f) {
		fill, err := column.Fill(f, int(loc.Rows)-got)
		if err != nil {
			return nil, fmt.Errorf("storage: segment %d field %d: %w", loc.ID, id, err)
		}
		parts = append([]column.Column{fill}, parts...)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("storage: segment %d has no binlogs for field %d", loc.ID, id)
	}
	// One allocation at the final size: loaded columns live as long as the
	// segment, so spare capacity from growing them would be kept for good.
	return column.Concat(parts), nil
}

// ReadFieldParts reads a field's insert binlogs one at a time and gives
// each one's column to fn, in row order, so that a caller copying the rows
// elsewhere holds one binlog's rows at a time. It neither fills the rows
// of a field added after the segment was written (FieldLogs.Rows) nor
// fails when there are no binlogs: fn is then not called.
func ReadFieldParts(ctx context.Context, get ObjectGetter, loc FieldLogs, f *schemapb.FieldSchema, fn func(column.Column) error) error {
	id := f.GetFieldID()
	for _, logID := range loc.LogIDs {
		key := InsertLogKey(loc.Root, loc.Collection, loc.Partition, loc.ID, id, logID)
		data, err := get.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("storage: read segment %d field %d: %w", loc.ID, id, err)
		}
		bl, err := DecodeBinlog(data, WithElementType(f.GetElementType()))
		if err != nil {
			return fmt.Errorf("storage: decode %s: %w", key, err)
		}
		if err := fn(bl.Column()); err != nil {
			return err
		}
	}
	return nil
}
