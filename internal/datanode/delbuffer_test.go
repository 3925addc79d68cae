package datanode

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/wal"
)

// TestBufferDeleteKeepsTimestampRuns: the delete buffer keeps a timestamp a
// message (merging messages of one time tick), and gives back each key's.
func TestBufferDeleteKeepsTimestampRuns(t *testing.T) {
	c := &channel{coll: &catalog.Collection{Schema: &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
	}}}}
	del := func(tick uint64, keys ...int64) {
		c.bufferDelete(&msgpb.DeleteRequest{Int64PrimaryKeys: keys}, wal.Entry{Message: wal.Message{TimeTick: tick}})
	}
	del(10, 1, 2, 3)
	del(10, 4)
	del(12) // no keys: nothing buffered
	del(15, 5, 6)
	require.Equal(t, []tsRun{{ts: 10, n: 4}, {ts: 15, n: 2}}, c.dels.runs)
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6}, c.dels.pks.(*column.Ints).Data)
	require.Equal(t, []uint64{10, 10, 10, 10, 15, 15}, c.dels.timestamps())
	require.Equal(t, int64(6*16), c.dels.bytes, "a key and a timestamp a row, as the delta log holds them")
}
