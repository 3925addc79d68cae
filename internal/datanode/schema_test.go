package datanode

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
)

// TestChangeSchemaFillsBuffers: a schema change gives the rows a channel
// buffers from before it the added field as nulls, and a replayed change
// older than the channel's schema is ignored.
func TestChangeSchemaFillsBuffers(t *testing.T) {
	base := []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
		{FieldID: 1, Name: "Timestamp", DataType: schemapb.DataType_Int64},
	}
	old := &schemapb.CollectionSchema{Name: "c", Fields: base}
	added := proto.Clone(old).(*schemapb.CollectionSchema)
	added.Fields = append(added.Fields, &schemapb.FieldSchema{FieldID: 101, Name: "a", DataType: schemapb.DataType_Int64, Nullable: true})
	ints := func(v ...int64) column.Column { return &column.Ints{T: schemapb.DataType_Int64, Data: v} }
	c := &channel{
		coll: &catalog.Collection{CollectionInfo: catalog.CollectionInfo{ID: 7}, Schema: old},
		segs: map[int64]*segBuffer{5: {id: 5, rows: 2, cols: map[int64]column.Column{100: ints(1, 2), 0: ints(1, 2), 1: ints(3, 3)}}},
	}

	raw, err := proto.Marshal(added)
	require.NoError(t, err)
	require.NoError(t, c.changeSchema(raw))
	require.True(t, proto.Equal(added, c.coll.Schema))
	require.EqualValues(t, 7, c.coll.ID)
	got := c.segs[5].cols[101]
	require.Equal(t, 2, got.Len())
	require.Equal(t, []bool{false, false}, got.Validity())

	older, err := proto.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, c.changeSchema(older))
	require.True(t, proto.Equal(added, c.coll.Schema), "an older schema replayed after a restart is ignored")

	require.Error(t, c.changeSchema([]byte{0xff}))
}
