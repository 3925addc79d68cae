package querycoord_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querycoord"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rgroup"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
	"github.com/strata-db/strata/internal/stacktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// coll is the test collection: two shards, an Int64 key "id", an Int64
// "grp" (id % 7) and a 2-dimensional "vec" ([id, 1]).
const coll = "two"

// cluster is a stack (coordinators, WAL, object storage and its own query
// node, the reference holding every vchannel) plus query nodes registered
// in a real membership, a query coordinator following them and a proxy
// reading through it.
type cluster struct {
	t     *testing.T
	s     *stacktest.Stack
	reg   *membership.Registry
	coord *querycoord.Coordinator
	px    *proxy.Proxy
	pool  *rpc.Pool
	store *placement.Store
	kv    metastore.KV // the placement and resource groups' store
	// stopCoord stops the running coordinator (nil when none runs).
	stopCoord func()
	// tune changes the coordinator's configuration (nil: the defaults).
	tune func(*querycoord.Config)

	mu    sync.Mutex
	local map[string]*querynode.Node // in-process nodes by address
	nodes map[int64]*qnode           // every node by membership ID
}

// placed is where the coordinator places the collection's replicas.
func (c *cluster) placed(collectionID int64) []plan.Replica {
	c.t.Helper()
	reps, err := c.coord.Replicas(context.Background(), collectionID)
	require.NoError(c.t, err)
	return reps
}

// qnode is one query node of the cluster.
type qnode struct {
	node   *querynode.Node
	member *membership.Member
	stop   func() // stops its RPC server, if any
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return newClusterWith(t, nil)
}

// newClusterWith is newCluster with the coordinator's configuration
// changed by tune.
func newClusterWith(t *testing.T, tune func(*querycoord.Config)) *cluster {
	t.Helper()
	s := stacktest.NewWith(t, stacktest.Options{PChannels: 2})
	logger := slog.New(slog.DiscardHandler)
	endpoint := enginetest.Etcd(t)
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	reg, err := membership.New(client, membership.Config{Root: "qc/", SessionTTL: 2 * time.Second}, logger)
	require.NoError(t, err)
	kv, err := embedded.Open(filepath.Join(t.TempDir(), "placement.db"), logger)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, kv.Close()) })
	pool, err := rpc.NewPool(rpc.ClientDefaults(), logger)
	require.NoError(t, err)
	c := &cluster{
		t: t, s: s, reg: reg, pool: pool, local: map[string]*querynode.Node{}, nodes: map[int64]*qnode{},
		store: placement.NewStore(kv), kv: kv, tune: tune,
	}
	t.Cleanup(func() {
		if c.stopCoord != nil {
			c.stopCoord()
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range c.nodes {
			n.kill(t)
		}
		require.NoError(t, pool.Close())
	})
	c.startCoordinator()
	return c
}

// startCoordinator starts a query coordinator over the cluster's nodes and
// placement store, and a proxy reading through it (c.coord, c.px); one
// already running stops first, as a coordinator that is taken over does.
func (c *cluster) startCoordinator() {
	t := c.t
	if c.stopCoord != nil {
		c.stopCoord()
	}
	logger := slog.New(slog.DiscardHandler)
	dial := func(n membership.Node) (querycoord.Node, error) { return c.dialAddr(n.Address) }
	cfg := querycoord.Defaults()
	cfg.HealInterval = 50 * time.Millisecond
	if c.tune != nil {
		c.tune(&cfg)
	}
	groups, err := rgroup.Open(context.Background(), c.kv)
	require.NoError(t, err)
	coord, err := querycoord.New(cfg, c.s.Root, c.store, groups, dial, logger)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.reg.Watch(ctx, membership.RoleQueryNode)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- coord.Run(ctx, w) }()
	c.stopCoord = func() {
		cancel()
		for range w.Events { // drain until the watch stops
		}
		require.NoError(t, <-done)
		c.stopCoord = nil
	}
	c.coord, c.px = coord, c.s.NewProxy(proxy.QueryNodeOf(coord))
	c.px.SetResourceGroups(coord)
}

// kill stops a node as a crash does: it stops serving, then its session
// ends (idempotent).
func (n *qnode) kill(t *testing.T) {
	require.NoError(t, n.node.Close())
	if n.stop != nil {
		n.stop()
		n.stop = nil
	}
	require.NoError(t, n.member.Close())
}

// dialedNode is a query node as the cluster reaches it: in process or a
// queryrpc.Client, both a coordinator's Node and a leader's worker.
type dialedNode interface {
	querycoord.Node
	querynode.SegmentReader
}

// dialAddr reaches a query node by its address: in process, or over
// queryrpc on the cluster's pool.
func (c *cluster) dialAddr(addr string) (dialedNode, error) {
	c.mu.Lock()
	qn, ok := c.local[addr]
	c.mu.Unlock()
	if ok {
		return qn, nil
	}
	conn, err := c.pool.Conn(addr)
	if err != nil {
		return nil, err
	}
	return queryrpc.NewClient(addr, conn, queryrpc.Defaults(), slog.New(slog.DiscardHandler))
}

// dialWorker reaches a query node by its address, as a shard leader
// reaches its workers.
func (c *cluster) dialWorker(_ int64, addr string) (querynode.SegmentReader, error) {
	return c.dialAddr(addr)
}

// addLocal registers an in-process query node.
func (c *cluster) addLocal() int64 {
	c.t.Helper()
	qn := c.s.NewQueryNode()
	qn.SetWorkerDialer(c.dialWorker)
	c.mu.Lock()
	addr := fmt.Sprintf("in-process-%d", len(c.local))
	c.local[addr] = qn
	c.mu.Unlock()
	return c.register(qn, addr, nil)
}

// addRemote registers a query node served over QueryNodeService on
// loopback TCP, which the coordinator reaches through queryrpc.Client.
func (c *cluster) addRemote() int64 {
	c.t.Helper()
	qn := c.s.NewQueryNode()
	qn.SetWorkerDialer(c.dialWorker)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(c.t, err)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), slog.New(slog.DiscardHandler))
	require.NoError(c.t, err)
	querynodev1.RegisterQueryNodeServiceServer(srv, queryrpc.NewServer(qn, qn))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	stop := func() {
		srv.Stop()
		if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			c.t.Errorf("serve: %v", err)
		}
	}
	return c.register(qn, lis.Addr().String(), stop)
}

func (c *cluster) register(qn *querynode.Node, addr string, stop func()) int64 {
	c.t.Helper()
	m, err := c.reg.Register(context.Background(), membership.RoleQueryNode, addr)
	require.NoError(c.t, err)
	c.mu.Lock()
	c.nodes[m.ID()] = &qnode{node: qn, member: m, stop: stop}
	c.mu.Unlock()
	// Live, and placed in a resource group (a load may use it then).
	require.Eventually(c.t, func() bool {
		groups, err := c.coord.ListResourceGroups(context.Background())
		require.NoError(c.t, err)
		for _, g := range groups {
			if info, err := c.coord.DescribeResourceGroup(context.Background(), g); err == nil && slices.Contains(info.Nodes, m.ID()) {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "the coordinator sees node %d in a resource group", m.ID())
	return m.ID()
}

// crash stops node id serving; its session lives on until kill.
func (c *cluster) crash(id int64) {
	c.t.Helper()
	c.mu.Lock()
	n := c.nodes[id]
	c.mu.Unlock()
	require.NoError(c.t, n.node.Close())
}

// kill kills node id.
func (c *cluster) kill(id int64) {
	c.t.Helper()
	c.mu.Lock()
	n := c.nodes[id]
	delete(c.nodes, id)
	c.mu.Unlock()
	n.kill(c.t)
}

func ok(t *testing.T, st *commonpb.Status, err error) {
	t.Helper()
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
}

// prepare creates coll with two shards: 120 flushed rows, 80 growing ones,
// a few deleted; a FLAT index; loaded on the reference node.
func (c *cluster) prepare() {
	t := c.t
	ctx := context.Background()
	schema, err := proto.Marshal(&schemapb.CollectionSchema{Name: coll, Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "grp", DataType: schemapb.DataType_Int64},
		{Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: stacktest.KV("dim", "2")},
	}})
	require.NoError(t, err)
	st, err := c.s.Proxy.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: coll, Schema: schema, ShardsNum: 2})
	ok(t, st, err)
	c.insert(0, 120)
	c.flush()
	c.insert(120, 200)
	del, err := c.s.Proxy.Delete(ctx, &milvuspb.DeleteRequest{CollectionName: coll, Expr: "id in [2, 4, 130]"})
	ok(t, del.GetStatus(), err)
	st, err = c.s.Proxy.CreateIndex(ctx, &milvuspb.CreateIndexRequest{
		CollectionName: coll, FieldName: "vec", IndexName: "vec", ExtraParams: stacktest.KV("index_type", "FLAT", "metric_type", "L2"),
	})
	ok(t, st, err)
	st, err = c.s.Proxy.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{CollectionName: coll})
	ok(t, st, err)
}

// insert writes rows [from, to) of coll: id, grp = id % 7, vec = [id, 1].
func (c *cluster) insert(from, to int64) {
	t := c.t
	ctx := context.Background()
	var ids, grps []int64
	var vecs []float32
	for k := from; k < to; k++ {
		ids, grps = append(ids, k), append(grps, k%7)
		vecs = append(vecs, float32(k), 1)
	}
	resp, err := c.s.Proxy.Insert(ctx, &milvuspb.InsertRequest{CollectionName: coll, NumRows: uint32(to - from), FieldsData: []*schemapb.FieldData{
		{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: ids}},
		}}},
		{FieldName: "grp", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: grps}},
		}}},
		{FieldName: "vec", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: vecs}},
		}}},
	}})
	ok(t, resp.GetStatus(), err)
}

// flush flushes coll's growing segments and runs a data node until they
// are flushed.
func (c *cluster) flush() {
	t := c.t
	col, err := c.s.Root.Collection("", coll)
	require.NoError(t, err)
	require.Len(t, col.VChannels, 2)
	ids, ts, err := c.s.Data.Flush(context.Background(), col.ID, col.VChannels)
	require.NoError(t, err)
	c.s.RunDataNode(c.s.NewDataNode(), func() bool { return c.s.FlushState(ids, col.VChannels, ts) })
}

// load loads coll through the coordinator with replicas replicas.
func (c *cluster) load(replicas int32) *commonpb.Status {
	st, err := c.px.LoadCollection(context.Background(), &milvuspb.LoadCollectionRequest{CollectionName: coll, ReplicaNumber: replicas})
	require.NoError(c.t, err)
	return st
}

func (c *cluster) release() {
	st, err := c.px.ReleaseCollection(context.Background(), &milvuspb.ReleaseCollectionRequest{CollectionName: coll})
	ok(c.t, st, err)
}

// searches are the searches every placement must answer as one node
// holding everything does.
func searches(t *testing.T) map[string]*milvuspb.SearchRequest {
	req := func(filter string, params ...string) *milvuspb.SearchRequest {
		return &milvuspb.SearchRequest{
			CollectionName: coll, Dsl: filter, DslType: commonpb.DslType_BoolExprV1,
			OutputFields: []string{"id", "grp", "vec"}, ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
			SearchParams: stacktest.KV(append([]string{"anns_field", "vec", "metric_type", "L2"}, params...)...),
			SearchInput: &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: stacktest.Placeholders(t,
				[2]float32{3, 1}, [2]float32{70.4, 1}, [2]float32{150.6, 1}, [2]float32{199, 1})},
		}
	}
	return map[string]*milvuspb.SearchRequest{
		"top-k":          req("", "topk", "10", "params", `{}`),
		"offset":         req("", "topk", "6", "offset", "5", "params", `{}`),
		"filter":         req("grp == 3 or id > 180", "topk", "8", "params", `{}`),
		"range":          req("", "topk", "50", "params", `{"radius": 40.0, "range_filter": 3.0}`),
		"group-by":       req("", "topk", "4", "group_by_field", "grp", "params", `{}`),
		"group-size":     req("", "topk", "3", "group_by_field", "grp", "group_size", "3", "params", `{}`),
		"group-strict":   req("id < 30 or id > 190", "topk", "5", "group_by_field", "grp", "group_size", "4", "strict_group_size", "true", "params", `{}`),
		"iterator-first": req("", "topk", "7", "iterator", "true", "search_iter_v2", "true", "search_iter_batch_size", "7", "search_iter_id", "it", "params", `{}`),
		"iterator-next": req("", "topk", "7", "iterator", "true", "search_iter_v2", "true", "search_iter_batch_size", "7", "search_iter_id", "it",
			"search_iter_last_bound", "30", "params", `{}`),
		"group-by-range": req("id < 150", "topk", "3", "group_by_field", "grp", "params", `{"radius": 100.0}`),
	}
}

// queries are the queries every placement must answer as one node does.
func queries() map[string]*milvuspb.QueryRequest {
	req := func(filter string, params []*commonpb.KeyValuePair, output ...string) *milvuspb.QueryRequest {
		return &milvuspb.QueryRequest{
			CollectionName: coll, Expr: filter, OutputFields: output,
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong, QueryParams: params,
		}
	}
	return map[string]*milvuspb.QueryRequest{
		"limit-offset": req("id >= 10", stacktest.KV("limit", "15", "offset", "7"), "id", "grp", "vec"),
		"filter-all":   req("grp == 2", nil, "grp"),
		"by-key":       req("id in [1, 2, 3, 119, 120, 121, 130, 199]", nil, "vec"),
		"count":        req("", nil, "count(*)"),
		"count-filter": req("grp in [1, 5] and id > 50", nil, "count(*)"),
		"offset-only":  req("id > 150", stacktest.KV("offset", "30"), "id"),
	}
}

// same runs every search and query through the coordinator and through
// the reference node and requires identical answers.
func (c *cluster) same() {
	c.t.Helper()
	c.sameAs(c.px)
}

// sameAs runs every search and query through px and through the
// reference node and requires identical answers.
func (c *cluster) sameAs(px *proxy.Proxy) {
	t := c.t
	t.Helper()
	ctx := context.Background()
	for name, req := range searches(t) {
		want, err := c.s.Proxy.Search(ctx, req)
		require.NoError(t, err)
		require.Zero(t, want.GetStatus().GetCode(), "%s: %s", name, want.GetStatus().GetReason())
		require.NotEmpty(t, want.GetResults().GetIds().GetIntId().GetData(), name)
		got, err := px.Search(ctx, req)
		require.NoError(t, err)
		require.Zero(t, got.GetStatus().GetCode(), "%s: %s", name, got.GetStatus().GetReason())
		require.True(t, proto.Equal(want.GetResults(), got.GetResults()), "%s:\none node   %v\ncoordinator %v", name, want.GetResults(), got.GetResults())
	}
	for name, req := range queries() {
		want, err := c.s.Proxy.Query(ctx, req)
		require.NoError(t, err)
		require.Zero(t, want.GetStatus().GetCode(), "%s: %s", name, want.GetStatus().GetReason())
		got, err := px.Query(ctx, req)
		require.NoError(t, err)
		require.Zero(t, got.GetStatus().GetCode(), "%s: %s", name, got.GetStatus().GetReason())
		require.True(t, proto.Equal(&milvuspb.QueryResults{FieldsData: want.GetFieldsData(), OutputFields: want.GetOutputFields()},
			&milvuspb.QueryResults{FieldsData: got.GetFieldsData(), OutputFields: got.GetOutputFields()}),
			"%s:\none node   %v\ncoordinator %v", name, want.GetFieldsData(), got.GetFieldsData())
	}
}

// replicas returns the coordinator's replicas of coll as GetReplicas
// reports them.
func (c *cluster) replicas() []*milvuspb.ReplicaInfo {
	resp, err := c.px.GetReplicas(context.Background(), &milvuspb.GetReplicasRequest{CollectionName: coll})
	ok(c.t, resp.GetStatus(), err)
	return resp.GetReplicas()
}

// TestCoordinatorPlacesReadsAndHeals: two shards led by two nodes (one
// reached over queryrpc) answer every search and query as one node
// holding both does; when a leader dies its shard moves to the third node
// and reads are exact again; two replicas on two nodes read alike; more
// replicas than nodes fail with Milvus's error.
func TestCoordinatorPlacesReadsAndHeals(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	remote := c.addRemote()
	a, b := c.addLocal(), c.addLocal()

	// The standalone's one query node is one replica on node 1.
	one, err := c.s.Proxy.GetReplicas(context.Background(), &milvuspb.GetReplicasRequest{CollectionName: coll})
	ok(t, one.GetStatus(), err)
	require.Len(t, one.GetReplicas(), 1)
	require.Equal(t, []int64{1}, one.GetReplicas()[0].GetNodeIds())
	require.Len(t, one.GetReplicas()[0].GetShardReplicas(), 2)
	// Not loaded through the coordinator yet.
	notYet, err := c.px.GetReplicas(context.Background(), &milvuspb.GetReplicasRequest{CollectionName: coll})
	require.NoError(t, err)
	require.Equal(t, errcode.CollectionNotLoaded, notYet.GetStatus().GetCode())

	ok(t, c.load(1), nil)
	reps := c.replicas()
	require.Len(t, reps, 1)
	require.Equal(t, []int64{remote, a, b}, reps[0].GetNodeIds())
	leaders := map[int64]bool{}
	for _, sh := range reps[0].GetShardReplicas() {
		leaders[sh.GetLeaderID()] = true
		require.NotEmpty(t, sh.GetLeaderAddr())
	}
	require.Equal(t, map[int64]bool{remote: true, a: true}, leaders, "each shard on its own node, the least loaded first")
	c.same()

	// GetQuerySegmentInfo names the nodes that serve each segment.
	segs, err := c.px.GetQuerySegmentInfo(context.Background(), &milvuspb.GetQuerySegmentInfoRequest{CollectionName: coll})
	ok(t, segs.GetStatus(), err)
	require.NotEmpty(t, segs.GetInfos())
	seen := map[int64]bool{}
	for _, s := range segs.GetInfos() {
		require.Len(t, s.GetNodeIds(), 1)
		seen[s.GetNodeID()] = true
	}
	require.Equal(t, leaders, seen)

	// A shard leader crashes: until its session ends, reads of its only
	// replica fail with Milvus's retriable "channel not available".
	c.crash(a)
	resp, err := c.px.Search(context.Background(), searches(t)["top-k"])
	require.NoError(t, err)
	require.Equal(t, errcode.ChannelNotAvailable, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	// Its session ends: its shard moves to the idle node.
	c.kill(a)
	require.Eventually(t, func() bool {
		reps := c.replicas()
		for _, sh := range reps[0].GetShardReplicas() {
			if sh.GetLeaderID() == a {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond)
	reps = c.replicas()
	require.Equal(t, []int64{remote, b}, reps[0].GetNodeIds())
	leaders = map[int64]bool{}
	for _, sh := range reps[0].GetShardReplicas() {
		leaders[sh.GetLeaderID()] = true
	}
	require.Equal(t, map[int64]bool{remote: true, b: true}, leaders)
	require.Eventually(t, func() bool {
		resp, err := c.px.Search(context.Background(), searches(t)["top-k"])
		return err == nil && resp.GetStatus().GetCode() == 0
	}, 30*time.Second, 20*time.Millisecond)
	c.same()

	// Two replicas, one node each: each answers every read alone.
	c.release()
	ok(t, c.load(2), nil)
	reps = c.replicas()
	require.Len(t, reps, 2)
	require.ElementsMatch(t, []int64{remote, b}, []int64{reps[0].GetNodeIds()[0], reps[1].GetNodeIds()[0]})
	for _, r := range reps {
		require.Len(t, r.GetShardReplicas(), 2)
	}
	c.same()
	c.same() // round-robin: the other replica
	// Loaded again with one replica, then with two: the replica number
	// follows the load, as in Milvus 2.6 (TestLoadAgainChangesTheReplicaNumber).
	ok(t, c.load(1), nil)
	require.Len(t, c.replicas(), 1)
	c.same()
	ok(t, c.load(2), nil)
	require.Len(t, c.replicas(), 2)
	c.same()
	c.same()
	// One replica's node crashes: every read goes to the other one.
	c.crash(b)
	c.same()
	c.same()

	// More replicas than nodes.
	c.release()
	st := c.load(3)
	require.Equal(t, int32(304), st.GetCode())
	require.Equal(t, "failed to spawn replica for collection: resource group node not enough[rg=__default_resource_group][currentNodeNum=2][expectedNodeNum=3]",
		st.GetReason())
	search, err := c.px.Search(context.Background(), searches(t)["top-k"])
	require.NoError(t, err)
	require.Equal(t, errcode.CollectionNotLoaded, search.GetStatus().GetCode())
}

// TestReleaseOnePartitionOfAWholeLoad: releasing one partition of a
// collection loaded whole leaves the others loaded. The proxy names every
// partition (a Load of them all), then releases the one; the coordinator
// used to keep the load as "all partitions", so none was left loaded and
// the proxy released the whole collection.
func TestReleaseOnePartitionOfAWholeLoad(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	c.addLocal()
	ctx := context.Background()
	st, err := c.s.Proxy.CreatePartition(ctx, &milvuspb.CreatePartitionRequest{CollectionName: coll, PartitionName: "p1"})
	ok(t, st, err)
	ok(t, c.load(1), nil)
	st, err = c.px.ReleasePartitions(ctx, &milvuspb.ReleasePartitionsRequest{CollectionName: coll, PartitionNames: []string{"_default"}})
	ok(t, st, err)
	state := func(parts ...string) commonpb.LoadState {
		t.Helper()
		resp, err := c.px.GetLoadState(ctx, &milvuspb.GetLoadStateRequest{CollectionName: coll, PartitionNames: parts})
		ok(t, resp.GetStatus(), err)
		return resp.GetState()
	}
	require.Equal(t, commonpb.LoadState_LoadStateLoaded, state())
	require.Equal(t, commonpb.LoadState_LoadStateLoaded, state("p1"))
	require.Equal(t, commonpb.LoadState_LoadStateNotLoad, state("_default"))
}

// TestTakeOverServesWithTheReplicasLeft: a coordinator that takes over
// (or restarts) reloads a loaded collection on its stored replicas: a
// replica whose only node died meanwhile is out of service and the other
// serves at once; a node that joins is healed into it.
func TestTakeOverServesWithTheReplicasLeft(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	a, b := c.addLocal(), c.addLocal()
	ok(t, c.load(2), nil)
	c.same()

	// The coordinator goes; so does b, before the successor reloads.
	c.stopCoord()
	c.kill(b)
	c.startCoordinator()
	col, err := c.s.Root.Collection("", coll)
	require.NoError(t, err)
	require.NoError(t, c.coord.Load(context.Background(), col.ID, nil, 0, nil), "a reload serves with the replicas left")
	reps := c.placed(col.ID)
	require.Len(t, reps, 2)
	var nodes [][]int64
	for _, r := range reps {
		nodes = append(nodes, slices.Clip(append([]int64{}, r.Nodes...)))
	}
	require.ElementsMatch(t, [][]int64{{a}, {}}, nodes, "one replica on the live node, one waiting for a node")
	c.same()
	c.same() // both reads go to the serving replica

	// A new node joins: the waiting replica gets it and serves again.
	d := c.addLocal()
	require.Eventually(t, func() bool {
		for _, r := range c.placed(col.ID) {
			if slices.Equal(r.Nodes, []int64{d}) && len(r.Leaders) == 2 {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the waiting replica is healed onto the new node")
	require.Eventually(t, func() bool {
		pct, err := c.coord.LoadProgress(context.Background(), col.ID)
		return err == nil && pct == 100
	}, 30*time.Second, 20*time.Millisecond)
	c.same()
	c.same()
}

// TestReadsCarryTheTTLCutoff: the coordinator resolves a collection's TTL
// cut-off and sends it with each read, so a remote query node need not ask
// the root coordinator back; the answers stay those of one node holding
// everything, with and without a TTL, and the node applies the cut-off it
// was sent.
func TestReadsCarryTheTTLCutoff(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	c.addRemote()
	ok(t, c.load(1), nil)
	c.same()
	ctx := context.Background()

	col, err := c.s.Root.Collection("", coll)
	require.NoError(t, err)
	search := &plan.Search{
		Read: plan.Read{CollectionID: col.ID, Strong: true}, FieldID: col.Field("vec").GetFieldID(), Metric: "L2",
		Vectors: [][]float32{{3, 1}}, TopK: 5,
	}
	res, err := c.coord.Search(ctx, search)
	require.NoError(t, err)
	require.Len(t, res.Hits[0], 5, "no TTL: every row is visible")
	require.False(t, search.HasExpireBefore, "the caller's request is not changed")
	// A cut-off the caller resolved is the one the node applies: one past
	// every row's insert timestamp hides them all.
	hideAll := *search
	hideAll.ExpireBefore, hideAll.HasExpireBefore = math.MaxUint64, true
	res, err = c.coord.Search(ctx, &hideAll)
	require.NoError(t, err)
	require.Empty(t, res.Hits[0], "the carried cut-off is applied")

	// A TTL that expired every row: both paths see none, alike.
	st, err := c.s.Proxy.AlterCollection(ctx, &milvuspb.AlterCollectionRequest{
		CollectionName: coll, Properties: stacktest.KV("collection.ttl.seconds", "1"),
	})
	ok(t, st, err)
	time.Sleep(1100 * time.Millisecond)
	for name, req := range searches(t) {
		want, err := c.s.Proxy.Search(ctx, req)
		require.NoError(t, err)
		require.Zero(t, want.GetStatus().GetCode(), "%s: %s", name, want.GetStatus().GetReason())
		require.Empty(t, want.GetResults().GetIds().GetIntId().GetData(), name)
		got, err := c.px.Search(ctx, req)
		require.NoError(t, err)
		require.True(t, proto.Equal(want.GetResults(), got.GetResults()), "%s:\none node   %v\ncoordinator %v", name, want.GetResults(), got.GetResults())
	}
	for name, req := range queries() {
		want, err := c.s.Proxy.Query(ctx, req)
		require.NoError(t, err)
		got, err := c.px.Query(ctx, req)
		require.NoError(t, err)
		require.True(t, proto.Equal(&milvuspb.QueryResults{FieldsData: want.GetFieldsData()}, &milvuspb.QueryResults{FieldsData: got.GetFieldsData()}),
			"%s:\none node   %v\ncoordinator %v", name, want.GetFieldsData(), got.GetFieldsData())
	}
}

// TestRebalanceOntoAJoiningNode: two shards led by one node; a node joins
// (reached over queryrpc) and one shard moves to it, handed off while
// searches and queries run: every read before, during and after the move
// answers as one node holding both shards does. An explicit Rebalance of
// the balanced placement moves nothing.
func TestRebalanceOntoAJoiningNode(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	a := c.addLocal()
	ok(t, c.load(1), nil)
	col, err := c.s.Root.Collection("", coll)
	require.NoError(t, err)
	leaders := func() map[string]int64 { return c.placed(col.ID)[0].Leaders }
	require.Equal(t, map[string]int64{col.VChannels[0]: a, col.VChannels[1]: a}, leaders())
	c.same()

	ctx := context.Background()
	reads := c.startReads(c.px)
	reads.more(3)
	b := c.addRemote()
	reads.until(func() bool {
		l := leaders()
		return l[col.VChannels[0]] != l[col.VChannels[1]]
	}, "a shard moves to the joining node")
	reads.more(3)
	t.Logf("%d reads before, during and after the move, all exact", reads.end())

	reps := c.placed(col.ID)
	require.Len(t, reps, 1)
	require.Equal(t, []int64{a, b}, reps[0].Nodes, "the free node joined the replica")
	moved, kept := slices.Min(col.VChannels), slices.Max(col.VChannels) // the lowest name moves
	require.Equal(t, map[string]int64{moved: b, kept: a}, reps[0].Leaders)
	// Saved once reads switched (Rebalance's step 2).
	require.Eventually(t, func() bool {
		stored, err := c.store.Replicas(ctx, col.ID)
		require.NoError(t, err)
		return maps.Equal(reps[0].Leaders, stored[0].Leaders)
	}, 30*time.Second, 10*time.Millisecond, "the move is saved")
	// The old leader dropped the shard it handed off; the new one holds it only.
	c.mu.Lock()
	qa, qb := c.nodes[a].node, c.nodes[b].node
	c.mu.Unlock()
	require.Eventually(t, func() bool { return slices.Equal(qa.VChannels(col.ID), []string{kept}) }, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{moved}, qb.VChannels(col.ID))
	c.same()

	// Balanced: an explicit rebalance moves nothing.
	require.NoError(t, c.coord.Rebalance(ctx))
	require.Equal(t, reps, c.placed(col.ID))
	c.same()
}
