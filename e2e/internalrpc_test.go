package e2e

import (
	"log/slog"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
)

// TestInternalQueryNodeService: a standalone server with internalAddr set
// serves its query node over internal RPC. A client in another role (what
// a proxy process uses) loads and releases the server's collections and
// reads them, and the Milvus API sees the same query node.
func TestInternalQueryNodeService(t *testing.T) {
	standaloneOnly(t, "the standalone's own query node on its internal RPC (TestClusterProcesses covers the cluster's)")
	s := startServer(t, t.TempDir(), func(c *app.Config) { c.InternalAddr = "127.0.0.1:0" })
	require.NotEmpty(t, s.internal)
	ctx := ctxT(t)
	c := s.client(t)
	const coll = "internal_rpc"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	ids := make([]int64, 20)
	vecs := make([][]float32, 20)
	for i := range ids {
		ids[i], vecs[i] = int64(i), []float32{float32(i), 1}
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).WithFloatVectorColumn("vec", 2, vecs))
	require.NoError(t, err)
	indexVectors(ctx, t, c, coll, entity.L2)
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)

	logger := slog.New(slog.DiscardHandler)
	pool, err := rpc.NewPool(rpc.ClientDefaults(), logger)
	require.NoError(t, err)
	defer func() { require.NoError(t, pool.Close()) }()
	conn, err := pool.Conn(s.internal)
	require.NoError(t, err)
	qn, err := queryrpc.NewClient(s.internal, conn, queryrpc.Defaults(), logger)
	require.NoError(t, err)

	require.NoError(t, qn.Load(ctx, desc.ID, nil, 0, nil))
	loaded, _, err := qn.Loaded(ctx, desc.ID)
	require.NoError(t, err)
	require.True(t, loaded)
	st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
	require.NoError(t, err)
	require.Equal(t, entity.LoadStateLoaded, st.State, "the API serves the node the RPC loaded")

	count, err := qn.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: desc.ID, Strong: true}, CountOnly: true})
	require.NoError(t, err)
	require.Equal(t, int64(20), count.Count)
	res, err := qn.Search(ctx, &plan.Search{
		Read: plan.Read{CollectionID: desc.ID, Strong: true, Filter: "id >= 10"}, FieldID: 101, Metric: plan.MetricL2,
		Vectors: [][]float32{{3, 1}}, TopK: 2,
	})
	require.NoError(t, err)
	require.Equal(t, []plan.Hit{{PK: int64(10), Score: 49}, {PK: int64(11), Score: 64}}, res.Hits[0])

	_, err = qn.Search(ctx, &plan.Search{
		Read: plan.Read{CollectionID: desc.ID, Filter: "id >"}, FieldID: 101,
		Metric: plan.MetricL2, Vectors: [][]float32{{3, 1}}, TopK: 2,
	})
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err), "%v", err)

	qn.Release(desc.ID)
	st, err = c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
	require.NoError(t, err)
	require.Equal(t, entity.LoadStateNotLoad, st.State)
	_, err = qn.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: desc.ID}, CountOnly: true})
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "%v", err)
}
