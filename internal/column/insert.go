package column

import (
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// InsertColumns decodes the user columns (field ID ≥ 100) of an insert
// message of n rows for schema, keyed by field ID. It is the one rule for
// what an insert message must hold: every user field of the schema, each in
// a wire type that fits the field (FromFieldData), each with exactly n rows;
// a fillable field (nullable or with a default, see Fillable) it lacks, as
// a message written before AddCollectionField added the field lacks it,
// reads as Fill's rows.
// The consumers (data node, query node) apply an insert message only through
// it, and the proxy runs it on every message it builds before the append, so
// a message that was acknowledged can always be applied.
func InsertColumns(schema *schemapb.CollectionSchema, fds []*schemapb.FieldData, n int) (map[int64]Column, error) {
	byID := make(map[int64]*schemapb.FieldData, len(fds))
	for _, fd := range fds {
		if byID[fd.GetFieldId()] != nil {
			return nil, fmt.Errorf("column: insert holds field %d (%q) twice", fd.GetFieldId(), fd.GetFieldName())
		}
		byID[fd.GetFieldId()] = fd
	}
	cols := make(map[int64]Column, len(byID))
	for _, f := range schema.GetFields() {
		if f.GetFieldID() < 100 {
			continue
		}
		fd, ok := byID[f.GetFieldID()]
		if !ok && Fillable(f) {
			// A message written before the field was added to the schema.
			c, err := Fill(f, n)
			if err != nil {
				return nil, err
			}
			cols[f.GetFieldID()] = c
			continue
		}
		if !ok {
			return nil, fmt.Errorf("column: insert lacks field %q", f.GetName())
		}
		c, err := FromFieldData(f, fd)
		if err != nil {
			return nil, err
		}
		if c.Len() != n {
			return nil, fmt.Errorf("column: field %q has %d rows, want %d", f.GetName(), c.Len(), n)
		}
		cols[f.GetFieldID()] = c
	}
	return cols, nil
}

// GroupKey returns row i's group-by value as a comparable key: the value of
// an Ints, Strings or Bools column, nil for a null row (or another type).
func GroupKey(c Column, i int) any {
	if c == nil || c.IsNull(i) {
		return nil
	}
	if b, ok := c.(*Bools); ok {
		return b.Data[i]
	}
	return KeyAt(c, i)
}

// KeyAt returns row i of a primary-key column (Int64 or VarChar) as a
// comparable value (int64 or string), nil for any other column.
func KeyAt(c Column, i int) any {
	switch c := c.(type) {
	case *Ints:
		return c.Data[i]
	case *Strings:
		return c.Data[i]
	}
	return nil
}
