package querynode_test

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/stacktest"
)

// TestShardsBeyondPChannels: on a stack of 2 pchannels a collection of 4
// shards is refused with Milvus's error and leaves nothing behind (it used
// to be recorded with 4 shards and 2 vchannels, and an insert panicked); a
// collection of 2 shards takes rows on both, flushes, answers searches,
// and does so again after a restart.
func TestShardsBeyondPChannels(t *testing.T) {
	s := stacktest.NewWith(t, stacktest.Options{PChannels: 2})
	ctx := context.Background()
	schema, err := proto.Marshal(&schemapb.CollectionSchema{Name: "four", Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: stacktest.KV("dim", "2")},
	}})
	require.NoError(t, err)
	st, err := s.Proxy.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "four", Schema: schema, ShardsNum: 4})
	require.NoError(t, err)
	require.NotZero(t, st.GetCode())
	require.Contains(t, st.GetReason(), "shard num (4) exceeds max configuration (2)")
	_, err = s.Root.Collection("", "four")
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err), "nothing recorded")

	col := s.CreateSharded("two", 2)
	require.Equal(t, 2, col.Shards)
	require.Len(t, col.VChannels, 2)
	require.NotEqual(t, col.PChannels[0], col.PChannels[1], "a pchannel per shard")
	s.InsertRows("two", 0, 100)
	ids, ts, err := s.Data.Flush(ctx, col.ID, col.VChannels)
	require.NoError(t, err)
	require.Len(t, ids, 2, "a segment per shard")
	s.RunDataNode(s.NewDataNode(), func() bool { return s.FlushState(ids, col.VChannels, ts) })

	check := func() {
		t.Helper()
		qn := s.QueryNode
		require.NoError(t, qn.Load(ctx, col.ID, nil, 1, nil))
		require.NoError(t, qn.WaitLoad(ctx, col.ID))
		res, err := qn.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: col.ID, Strong: true}, CountOnly: true})
		require.NoError(t, err)
		require.EqualValues(t, 100, res.Count)
		hits, err := qn.Search(ctx, &plan.Search{
			Read:    plan.Read{CollectionID: col.ID, Strong: true},
			FieldID: 101, Metric: "L2", Vectors: [][]float32{{7, 1}, {93, 1}}, TopK: 3,
		})
		require.NoError(t, err)
		require.EqualValues(t, 7, hits.Hits[0][0].PK)
		require.EqualValues(t, 93, hits.Hits[1][0].PK)
	}
	check()
	s.Reopen(func(string) {})
	check()
}
