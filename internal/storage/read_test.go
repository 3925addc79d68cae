package storage

import (
	"context"
	"fmt"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

type mapObjects map[string][]byte

func (m mapObjects) Get(_ context.Context, key string) ([]byte, error) {
	b, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("no object %s", key)
	}
	return b, nil
}

// TestReadFieldAddedLater: a nullable field added after a segment's first
// sync has binlogs for the later syncs only; its earlier rows read as null
// (or the field's default) before the binlogs' rows, and a field with no
// binlogs at all reads as Rows nulls. Without Rows it stays an error.
func TestReadFieldAddedLater(t *testing.T) {
	ctx := context.Background()
	f := fieldOf(105, schemapb.DataType_Int64, func(f *schemapb.FieldSchema) { f.Nullable = true })
	data, err := EncodeInsertLog(testDesc(), f, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{7, 8}})
	require.NoError(t, err)
	objs := mapObjects{InsertLogKey("r", 1, 2, 3, 105, 9): data}
	loc := FieldLogs{Root: "r", Collection: 1, Partition: 2, ID: 3, LogIDs: []int64{9}, Rows: 5}

	c, err := ReadField(ctx, objs, loc, f)
	require.NoError(t, err)
	ints := c.(*column.Ints)
	require.Equal(t, []int64{0, 0, 0, 7, 8}, ints.Data)
	require.Equal(t, []bool{false, false, false, true, true}, ints.Validity())

	loc.LogIDs = nil
	c, err = ReadField(ctx, objs, loc, f)
	require.NoError(t, err)
	require.Equal(t, 5, c.Len())
	require.Equal(t, []bool{false, false, false, false, false}, c.Validity())

	withDefault := fieldOf(106, schemapb.DataType_VarChar, func(f *schemapb.FieldSchema) {
		f.Nullable = true
		f.DefaultValue = &schemapb.ValueField{Data: &schemapb.ValueField_StringData{StringData: "x"}}
	})
	c, err = ReadField(ctx, objs, loc, withDefault)
	require.NoError(t, err)
	require.Equal(t, []string{"x", "x", "x", "x", "x"}, c.(*column.Strings).Data)

	loc.Rows = 0
	_, err = ReadField(ctx, objs, loc, f)
	require.ErrorContains(t, err, "has no binlogs for field 105")
	// A field that is neither nullable nor has a default is never filled.
	loc.Rows = 5
	_, err = ReadField(ctx, objs, loc, fieldOf(107, schemapb.DataType_Int64))
	require.ErrorContains(t, err, "has no binlogs for field 107")
}
