package queryrpc_test

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
	"github.com/strata-db/strata/internal/stacktest"
)

// remote is a stack whose query node also serves QueryNodeService, with a
// second proxy that reads through a client of that service.
type remote struct {
	s      *stacktest.Stack
	client *queryrpc.Client
	// local reads through the in-process query node, viaRPC through the
	// client; both share the stack's coordinators and WAL.
	local, viaRPC *proxy.Proxy
}

// newRemote serves the stack's query node on lis and connects to it at
// addr with extra dial options.
func newRemote(t *testing.T, lis net.Listener, addr string, extra ...grpc.DialOption) *remote {
	t.Helper()
	s := stacktest.New(t)
	logger := slog.New(slog.DiscardHandler)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), logger)
	require.NoError(t, err)
	querynodev1.RegisterQueryNodeServiceServer(srv, queryrpc.NewServer(s.QueryNode, s.QueryNode))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	pool, err := rpc.NewPool(rpc.ClientDefaults(), logger, extra...)
	require.NoError(t, err)
	// Cleanups run last first: the pool and server stop before the stack
	// (registered by stacktest.New) closes the query node.
	t.Cleanup(func() {
		require.NoError(t, pool.Close())
		srv.GracefulStop()
		require.NoError(t, <-served)
	})
	conn, err := pool.Conn(addr)
	require.NoError(t, err)
	client, err := queryrpc.NewClient(addr, conn, queryrpc.Defaults(), logger)
	require.NoError(t, err)
	return &remote{s: s, client: client, local: s.Proxy, viaRPC: s.NewProxy(proxy.QueryNodeOf(client))}
}

func bufconnRemote(t *testing.T) *remote {
	lis := bufconn.Listen(1 << 20)
	return newRemote(t, lis, "bufconn", grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return lis.DialContext(ctx)
	}))
}

func searchReq(t *testing.T, collection, filter string) *milvuspb.SearchRequest {
	return &milvuspb.SearchRequest{
		CollectionName: collection, Dsl: filter, DslType: commonpb.DslType_BoolExprV1,
		OutputFields: []string{"id", "vec"}, ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		SearchParams: stacktest.KV("anns_field", "vec", "topk", "5", "metric_type", "L2", "params", `{}`),
		SearchInput:  &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: stacktest.Placeholders(t, [2]float32{3, 1}, [2]float32{70, 1})},
	}
}

func queryReq(collection, filter string, output ...string) *milvuspb.QueryRequest {
	return &milvuspb.QueryRequest{
		CollectionName: collection, Expr: filter, OutputFields: output,
		ConsistencyLevel: commonpb.ConsistencyLevel_Strong, QueryParams: stacktest.KV("limit", "1000"),
	}
}

// sameSearch runs req on both proxies and requires the same answer; it
// returns it.
func (r *remote) sameSearch(t *testing.T, req *milvuspb.SearchRequest) *milvuspb.SearchResults {
	t.Helper()
	want, err := r.local.Search(context.Background(), req)
	require.NoError(t, err)
	got, err := r.viaRPC.Search(context.Background(), req)
	require.NoError(t, err)
	require.True(t, proto.Equal(want.GetStatus(), got.GetStatus()), "status: in process %v, through RPC %v", want.GetStatus(), got.GetStatus())
	require.True(t, proto.Equal(want.GetResults(), got.GetResults()), "results: in process %v\nthrough RPC %v", want.GetResults(), got.GetResults())
	return got
}

// sameQuery runs req on both proxies and requires the same answer.
func (r *remote) sameQuery(t *testing.T, req *milvuspb.QueryRequest) *milvuspb.QueryResults {
	t.Helper()
	want, err := r.local.Query(context.Background(), req)
	require.NoError(t, err)
	got, err := r.viaRPC.Query(context.Background(), req)
	require.NoError(t, err)
	require.True(t, proto.Equal(want.GetStatus(), got.GetStatus()), "status: in process %v, through RPC %v", want.GetStatus(), got.GetStatus())
	require.True(t, proto.Equal(&milvuspb.QueryResults{FieldsData: want.GetFieldsData(), OutputFields: want.GetOutputFields()},
		&milvuspb.QueryResults{FieldsData: got.GetFieldsData(), OutputFields: got.GetOutputFields()}),
		"fields: in process %v\nthrough RPC %v", want.GetFieldsData(), got.GetFieldsData())
	return got
}

// sameLoadState asks both proxies for the load state and requires state.
func (r *remote) sameLoadState(t *testing.T, state commonpb.LoadState) {
	t.Helper()
	for _, p := range []*proxy.Proxy{r.local, r.viaRPC} {
		resp, err := p.GetLoadState(context.Background(), &milvuspb.GetLoadStateRequest{CollectionName: stacktest.Collection})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		require.Equal(t, state, resp.GetState())
	}
}

// prepare writes 50 flushed rows and 30 growing ones, indexes "vec" (FLAT)
// and loads the collection through the remote query node.
func (r *remote) prepare(t *testing.T) {
	t.Helper()
	r.s.InsertRows(stacktest.Collection, 0, 50)
	r.s.Flush()
	r.s.InsertRows(stacktest.Collection, 50, 80)
	st, err := r.local.CreateIndex(context.Background(), &milvuspb.CreateIndexRequest{
		CollectionName: stacktest.Collection, FieldName: "vec", IndexName: "vec",
		ExtraParams: stacktest.KV("index_type", "FLAT", "metric_type", "L2"),
	})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	r.sameLoadState(t, commonpb.LoadState_LoadStateNotLoad)
	st, err = r.viaRPC.LoadCollection(context.Background(), &milvuspb.LoadCollectionRequest{CollectionName: stacktest.Collection})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	r.sameLoadState(t, commonpb.LoadState_LoadStateLoaded)
}

// TestProxyThroughRemoteQueryNode: a proxy whose reads go through the RPC
// client answers every read exactly as the proxy wired to the query node
// in process: results, and the Milvus codes and messages of failures.
func TestProxyThroughRemoteQueryNode(t *testing.T) {
	r := bufconnRemote(t)
	r.prepare(t)
	ctx := context.Background()

	res := r.sameSearch(t, searchReq(t, stacktest.Collection, ""))
	require.Zero(t, res.GetStatus().GetCode(), res.GetStatus().GetReason())
	require.Equal(t, []int64{5, 5}, res.GetResults().GetTopks())
	require.Equal(t, []int64{3, 2, 4}, res.GetResults().GetIds().GetIntId().GetData()[:3], "nearest to (3,1) first, sealed rows")
	require.Equal(t, int64(70), res.GetResults().GetIds().GetIntId().GetData()[5], "nearest to (70,1): a growing row")
	filtered := r.sameSearch(t, searchReq(t, stacktest.Collection, "id >= 60 and id < 75"))
	require.Equal(t, []int64{5, 5}, filtered.GetResults().GetTopks())

	q := r.sameQuery(t, queryReq(stacktest.Collection, "id in [3, 60, 1000]", "id", "vec"))
	require.Zero(t, q.GetStatus().GetCode(), q.GetStatus().GetReason())
	require.Equal(t, []int64{3, 60}, q.GetFieldsData()[0].GetScalars().GetLongData().GetData(), "get by primary key")
	count := r.sameQuery(t, queryReq(stacktest.Collection, "", "count(*)"))
	require.Equal(t, []int64{80}, count.GetFieldsData()[0].GetScalars().GetLongData().GetData())

	// Failures carry the query node's code and message across the hop.
	bad := r.sameSearch(t, searchReq(t, stacktest.Collection, "id >"))
	require.Equal(t, errcode.IllegalArgument, bad.GetStatus().GetCode())
	badQ := r.sameQuery(t, queryReq(stacktest.Collection, "nope > 1", "id"))
	require.NotZero(t, badQ.GetStatus().GetCode())
	missing := r.sameSearch(t, searchReq(t, "no_such_collection", ""))
	require.Equal(t, errcode.CollectionNotFound, missing.GetStatus().GetCode())

	// The node's own errors, as the proxy's Reader sees them.
	for _, read := range []plan.Read{{CollectionID: 424242}, {CollectionID: r.s.CollectionID, Filter: "id >"}} {
		sreq := &plan.Search{Read: read, FieldID: 101, Metric: plan.MetricL2, Vectors: [][]float32{{1, 1}}, TopK: 3}
		_, want := r.s.QueryNode.Search(ctx, sreq)
		_, got := r.client.Search(ctx, sreq)
		require.Error(t, want)
		require.Equal(t, errcode.CodeOf(want), errcode.CodeOf(got))
		require.Equal(t, want.Error(), got.Error())
		_, want = r.s.QueryNode.Query(ctx, &plan.Query{Read: read})
		_, got = r.client.Query(ctx, &plan.Query{Read: read})
		require.Equal(t, errcode.CodeOf(want), errcode.CodeOf(got))
		require.Equal(t, want.Error(), got.Error())
	}
	local, err := r.s.QueryNode.Segments(ctx, r.s.CollectionID)
	require.NoError(t, err)
	remote, err := r.client.Segments(ctx, r.s.CollectionID)
	require.NoError(t, err)
	require.Equal(t, local, remote)
	require.NotEmpty(t, remote)

	// Release through the remote node: both proxies see it, and reads fail
	// alike.
	st, err := r.viaRPC.ReleaseCollection(ctx, &milvuspb.ReleaseCollectionRequest{CollectionName: stacktest.Collection})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	r.sameLoadState(t, commonpb.LoadState_LoadStateNotLoad)
	notLoaded := r.sameSearch(t, searchReq(t, stacktest.Collection, ""))
	require.Equal(t, errcode.CollectionNotLoaded, notLoaded.GetStatus().GetCode())
	failure, err := r.client.LoadFailure(ctx, r.s.CollectionID)
	require.NoError(t, err)
	require.NoError(t, failure)
}

// TestProxyThroughRemoteQueryNodeTCP is the same wiring over a real TCP
// connection on loopback.
func TestProxyThroughRemoteQueryNodeTCP(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := newRemote(t, lis, lis.Addr().String())
	r.prepare(t)
	res := r.sameSearch(t, searchReq(t, stacktest.Collection, "id < 40"))
	require.Zero(t, res.GetStatus().GetCode(), res.GetStatus().GetReason())
	require.Len(t, res.GetResults().GetIds().GetIntId().GetData(), 10)
	q := r.sameQuery(t, queryReq(stacktest.Collection, "id >= 75", "id"))
	require.Equal(t, []int64{75, 76, 77, 78, 79}, q.GetFieldsData()[0].GetScalars().GetLongData().GetData())
	for i := range 5 {
		id := strconv.Itoa(i * 20)
		g := r.sameQuery(t, queryReq(stacktest.Collection, "id == "+id, "vec"))
		require.Len(t, g.GetFieldsData(), 2, "vec and the primary key")
	}
}
