package storage

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

type arrowArray = arrow.Array

func nil2alloc() memory.Allocator { return memory.DefaultAllocator }

func mustArrowType(t *testing.T, dt schemapb.DataType, col column.Column) arrow.DataType {
	t.Helper()
	at, err := arrowType(dt, col)
	require.NoError(t, err)
	return at
}

func arrowSchema(name string, dt arrow.DataType, nullable bool) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: name, Type: dt, Nullable: nullable}}, nil)
}
