package proxyrpc_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
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
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/auth"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	"github.com/strata-db/strata/internal/rpc/proxyrpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
	"github.com/strata-db/strata/internal/stacktest"
)

// network is in-process listeners by address, and a pool dialing them.
type network struct {
	mu   sync.Mutex
	lis  map[string]*bufconn.Listener
	pool *rpc.Pool
}

func newNetwork(t *testing.T, cfg rpc.ClientConfig) *network {
	t.Helper()
	n := &network{lis: map[string]*bufconn.Listener{}}
	pool, err := rpc.NewPool(cfg, slog.New(slog.DiscardHandler),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			n.mu.Lock()
			l := n.lis[addr]
			n.mu.Unlock()
			if l == nil {
				return nil, fmt.Errorf("no listener at %s", addr)
			}
			return l.DialContext(ctx)
		}))
	require.NoError(t, err)
	n.pool = pool
	t.Cleanup(func() { require.NoError(t, pool.Close()) })
	return n
}

// serve serves the services register adds at addr until the test ends
// or stop is called.
func (n *network) serve(t *testing.T, addr string, register func(*grpc.Server)) (stop func()) {
	t.Helper()
	l := bufconn.Listen(1 << 20)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	register(srv)
	n.mu.Lock()
	n.lis[addr] = l
	n.mu.Unlock()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			srv.Stop()
			require.NoError(t, <-served)
		})
	}
	t.Cleanup(stop)
	return stop
}

func (n *network) conn(t *testing.T, addr string) grpc.ClientConnInterface {
	t.Helper()
	c, err := n.pool.Conn(addr)
	require.NoError(t, err)
	return c
}

// remoteProxy is a proxy over the coordinator at addr, its cache.
type remoteProxy struct {
	*proxy.Proxy
	cache *proxyrpc.Catalog
}

// newRemoteProxy builds a proxy over the clients of the coordinator at
// coord and serves its ProxyService at addr.
func newRemoteProxy(t *testing.T, n *network, coord, addr string) remoteProxy {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	conn := n.conn(t, coord)
	cat := proxyrpc.NewCatalog(conn, logger)
	query, err := queryrpc.NewClient(coord, conn, queryrpc.Defaults(), logger)
	require.NoError(t, err)
	clock := coordrpc.NewClock(conn)
	px := proxy.New(proxy.Defaults(), proxy.CatalogOf(cat), proxy.DataCoordOf(proxyrpc.NewData(conn, logger)),
		proxy.QueryNode{Loader: query, Reader: query}, proxyrpc.NewDMLClient(conn),
		proxyrpc.NewIDs(clock.Allocate, 100), proxyrpc.NewTimestamps(clock.AllocateTimestamps), logger)
	px.SetImporter(proxyrpc.NewImportClient(conn, logger))
	n.serve(t, addr, func(srv *grpc.Server) {
		proxyv1.RegisterProxyServiceServer(srv, proxyrpc.NewProxyServer(cat, logger))
	})
	return remoteProxy{Proxy: px, cache: cat}
}

// cluster is a stack served as the coordinator, with two proxies.
type cluster struct {
	s    *stacktest.Stack
	a, b remoteProxy
	// stopCoord stops serving the coordinator's services.
	stopCoord func()
}

func newCluster(t *testing.T) cluster {
	t.Helper()
	s := stacktest.New(t)
	n := newNetwork(t, rpc.ClientDefaults())
	logger := slog.New(slog.DiscardHandler)
	notifier := proxyrpc.NewNotifier(proxyrpc.NotifierConfig{Bound: time.Second},
		func(context.Context) ([]string, error) { return []string{"proxy-a", "proxy-b", "proxy-dead"}, nil },
		func(addr string) (grpc.ClientConnInterface, error) { return n.pool.Conn(addr) }, logger)
	root := proxyrpc.Notifying(s.Root, notifier.Invalidate)
	stop := n.serve(t, "coord", func(srv *grpc.Server) {
		proxyv1.RegisterCatalogServiceServer(srv, proxyrpc.NewCatalogServer(root))
		proxyv1.RegisterDataServiceServer(srv, proxyrpc.NewDataServer(s.Data))
		proxyv1.RegisterDmlServiceServer(srv, proxyrpc.NewDMLServer(proxy.NewLocalDML(s.Writer(), s.Data), s.Root))
		querynodev1.RegisterQueryNodeServiceServer(srv, queryrpc.NewServer(s.QueryNode, s.QueryNode))
		coordv1.RegisterClockServiceServer(srv, coordrpc.NewClockServer(s.IDs, s.IDs, s.Writer()))
	})
	return cluster{s: s, a: newRemoteProxy(t, n, "coord", "proxy-a"), b: newRemoteProxy(t, n, "coord", "proxy-b"), stopCoord: stop}
}

func schemaBytes(t *testing.T, name string) []byte {
	t.Helper()
	b, err := proto.Marshal(&schemapb.CollectionSchema{Name: name, Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
	}})
	require.NoError(t, err)
	return b
}

func requireOK(t *testing.T, st *commonpb.Status, err error) {
	t.Helper()
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
}

func describe(ctx context.Context, p remoteProxy, name string) *milvuspb.DescribeCollectionResponse {
	resp, _ := p.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: name})
	return resp
}

// DDL through one proxy is seen by the other at once: its cached
// collection is dropped before the DDL returns.
func TestDDLSeenAcrossProxies(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()

	st, err := c.a.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "movies", Schema: schemaBytes(t, "movies")})
	requireOK(t, st, err)
	d := describe(ctx, c.b, "movies")
	requireOK(t, d.GetStatus(), nil)
	first := d.GetCollectionID()
	cached, _ := c.b.cache.Cached()
	require.Positive(t, cached, "B resolves from its cache")

	// Drop through A: B answers "collection not found" at once.
	st, err = c.a.DropCollection(ctx, &milvuspb.DropCollectionRequest{CollectionName: "movies"})
	requireOK(t, st, err)
	require.Equal(t, errcode.CollectionNotFound, describe(ctx, c.b, "movies").GetStatus().GetCode())

	// Recreated through A: B sees the new collection, not the old one.
	st, err = c.a.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "movies", Schema: schemaBytes(t, "movies")})
	requireOK(t, st, err)
	d = describe(ctx, c.b, "movies")
	requireOK(t, d.GetStatus(), nil)
	require.NotEqual(t, first, d.GetCollectionID())

	// An alias moved through A is followed by B.
	st, err = c.a.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "films", Schema: schemaBytes(t, "films")})
	requireOK(t, st, err)
	st, err = c.a.CreateAlias(ctx, &milvuspb.CreateAliasRequest{Alias: "current", CollectionName: "movies"})
	requireOK(t, st, err)
	require.Equal(t, "movies", describe(ctx, c.b, "current").GetCollectionName())
	st, err = c.a.AlterAlias(ctx, &milvuspb.AlterAliasRequest{Alias: "current", CollectionName: "films"})
	requireOK(t, st, err)
	require.Equal(t, "films", describe(ctx, c.b, "current").GetCollectionName())
}

// Conflicting DDL through two proxies at once ends in one serial order:
// the root coordinator's queue orders them.
func TestConcurrentDDLOneOrder(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	for round := range 5 {
		name := fmt.Sprintf("race_%d", round)
		// Two creates of one name: one collection, both proxies see it.
		var wg sync.WaitGroup
		schema := schemaBytes(t, name)
		errs := make([]error, 2)
		for i, p := range []remoteProxy{c.a, c.b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = p.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: name, Schema: schema})
			}()
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		da, db := describe(ctx, c.a, name), describe(ctx, c.b, name)
		requireOK(t, da.GetStatus(), nil)
		require.Equal(t, da.GetCollectionID(), db.GetCollectionID())
		other := name + "_other"
		st, err := c.b.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: other, Schema: schemaBytes(t, other)})
		requireOK(t, st, err)

		// One alias created for two collections at once: exactly one
		// create wins, and both proxies resolve the alias to its target.
		codes := make([]int32, 2)
		targets := []string{name, other}
		for i, p := range []remoteProxy{c.a, c.b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := p.CreateAlias(ctx, &milvuspb.CreateAliasRequest{Alias: name + "_alias", CollectionName: targets[i]})
				codes[i], errs[i] = st.GetCode(), err
			}()
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		require.ElementsMatch(t, []bool{true, false}, []bool{codes[0] == 0, codes[1] == 0}, "codes %v", codes)
		winner := targets[0]
		if codes[1] == 0 {
			winner = targets[1]
		}
		for _, p := range []remoteProxy{c.a, c.b} {
			require.Equal(t, winner, describe(ctx, p, name+"_alias").GetCollectionName())
		}
	}
}

// Rows written through both proxies are appended once each, at
// timestamps the coordinator issued, and read back through either.
func TestWritesThroughProxies(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	st, err := c.a.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "w", Schema: schemaBytes(t, "w")})
	requireOK(t, st, err)
	var last uint64
	for i, p := range []remoteProxy{c.a, c.b, c.a, c.b} {
		from := int64(i * 10)
		resp, err := p.Insert(ctx, insertRows("w", from, from+10))
		requireOK(t, resp.GetStatus(), err)
		require.EqualValues(t, 10, resp.GetInsertCnt())
		require.Greater(t, resp.GetTimestamp(), last, "timestamps grow across proxies")
		last = resp.GetTimestamp()
	}
	st, err = c.a.CreateIndex(ctx, &milvuspb.CreateIndexRequest{CollectionName: "w", FieldName: "vec", ExtraParams: []*commonpb.KeyValuePair{
		{Key: "index_type", Value: "FLAT"}, {Key: "metric_type", Value: "L2"},
	}})
	requireOK(t, st, err)
	st, err = c.b.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{CollectionName: "w"})
	requireOK(t, st, err)
	for _, p := range []remoteProxy{c.a, c.b} {
		require.Eventually(t, func() bool {
			r, _ := p.GetLoadState(ctx, &milvuspb.GetLoadStateRequest{CollectionName: "w"})
			return r.GetState() == commonpb.LoadState_LoadStateLoaded
		}, 30*time.Second, 20*time.Millisecond)
		q, err := p.Query(ctx, &milvuspb.QueryRequest{
			CollectionName: "w", OutputFields: []string{"count(*)"},
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong, UseDefaultConsistency: false,
		})
		requireOK(t, q.GetStatus(), err)
		require.Equal(t, []int64{40}, q.GetFieldsData()[0].GetScalars().GetLongData().GetData())
	}
}

func insertRows(coll string, from, to int64) *milvuspb.InsertRequest {
	var ids []int64
	var vecs []float32
	for k := from; k < to; k++ {
		ids = append(ids, k)
		vecs = append(vecs, float32(k), 1)
	}
	return &milvuspb.InsertRequest{CollectionName: coll, NumRows: uint32(to - from), FieldsData: []*schemapb.FieldData{
		{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: ids}},
		}}},
		{FieldName: "vec", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: vecs}},
		}}},
	}}
}

// A proxy whose coordinator cannot be reached fails fast with the
// retriable code 2 (service unavailable), never hangs and never answers
// as if the catalog were empty.
func TestCoordinatorUnreachableFailsFast(t *testing.T) {
	cfg := rpc.ClientDefaults()
	n := newNetwork(t, cfg)
	p := newRemoteProxy(t, n, "gone", "proxy-a")
	ctx := context.Background()
	start := time.Now()
	d := describe(ctx, p, "movies")
	require.Equal(t, rpc.CodeServiceUnavailable, d.GetStatus().GetCode(), d.GetStatus().GetReason())
	require.True(t, d.GetStatus().GetRetriable())
	resp, err := p.Insert(ctx, insertRows("movies", 0, 1))
	require.NoError(t, err)
	require.Equal(t, rpc.CodeServiceUnavailable, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	ts, err := p.AllocTimestamp(ctx, &milvuspb.AllocTimestampRequest{})
	require.NoError(t, err)
	require.Equal(t, rpc.CodeServiceUnavailable, ts.GetStatus().GetCode())
	require.Less(t, time.Since(start), 10*time.Second)
}

// The proxy's status calls whose role methods once answered empty when the
// coordinator could not be reached (Collections, Databases, AliasesOf,
// RowCount, FlushState, IndexProgress, CompactionState, import jobs,
// Replicas, and the Loader's Loaded, Loading, LoadProgress, LoadFailure and
// Segments) fail with the retriable code 2 once it stops, though the proxy
// still has the collection cached: none answers as if there were nothing,
// and none reads as "not loaded" or 0 %.
func TestCoordinatorStoppedStatusCallsFail(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	st, err := c.a.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "w", Schema: schemaBytes(t, "w")})
	requireOK(t, st, err)
	resp, err := c.a.Insert(ctx, insertRows("w", 0, 10))
	requireOK(t, resp.GetStatus(), err)
	st, err = c.a.CreateIndex(ctx, &milvuspb.CreateIndexRequest{CollectionName: "w", FieldName: "vec", ExtraParams: []*commonpb.KeyValuePair{
		{Key: "index_type", Value: "FLAT"}, {Key: "metric_type", Value: "L2"},
	}})
	requireOK(t, st, err)
	compaction, err := c.a.ManualCompaction(ctx, &milvuspb.ManualCompactionRequest{CollectionName: "w"})
	requireOK(t, compaction.GetStatus(), err)
	flush, err := c.a.Flush(ctx, &milvuspb.FlushRequest{CollectionNames: []string{"w"}})
	requireOK(t, flush.GetStatus(), err)
	st, err = c.a.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{CollectionName: "w"})
	requireOK(t, st, err)

	calls := map[string]func() (*commonpb.Status, error){
		"get_load_state": func() (*commonpb.Status, error) {
			r, err := c.a.GetLoadState(ctx, &milvuspb.GetLoadStateRequest{CollectionName: "w"})
			require.NotEqual(t, commonpb.LoadState_LoadStateNotLoad, r.GetState(), "never read as not loaded")
			return r.GetStatus(), err
		},
		"get_loading_progress": func() (*commonpb.Status, error) { // as LoadCollection's wait asks
			r, err := c.a.GetLoadingProgress(ctx, &milvuspb.GetLoadingProgressRequest{CollectionName: "w"})
			if r.GetStatus().GetCode() != 0 {
				require.Zero(t, r.GetProgress())
			}
			return r.GetStatus(), err
		},
		"get_query_segment_info": func() (*commonpb.Status, error) {
			r, err := c.a.GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{CollectionName: "w"})
			return r.GetStatus(), err
		},
		"show_collections_in_memory": func() (*commonpb.Status, error) {
			r, err := c.a.ShowCollections(ctx, &milvuspb.ShowCollectionsRequest{
				Type: milvuspb.ShowType_InMemory, CollectionNames: []string{"w"},
			})
			return r.GetStatus(), err
		},
		"show_partitions": func() (*commonpb.Status, error) { // their in-memory percentages
			r, err := c.a.ShowPartitions(ctx, &milvuspb.ShowPartitionsRequest{CollectionName: "w"})
			return r.GetStatus(), err
		},
		"load_collection": func() (*commonpb.Status, error) {
			return c.a.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{CollectionName: "w"})
		},
		"show_collections": func() (*commonpb.Status, error) {
			r, err := c.a.ShowCollections(ctx, &milvuspb.ShowCollectionsRequest{})
			return r.GetStatus(), err
		},
		"describe_collection": func() (*commonpb.Status, error) { // its aliases
			r, err := c.a.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: "w"})
			return r.GetStatus(), err
		},
		"list_databases": func() (*commonpb.Status, error) {
			r, err := c.a.ListDatabases(ctx, &milvuspb.ListDatabasesRequest{})
			return r.GetStatus(), err
		},
		"get_collection_statistics": func() (*commonpb.Status, error) {
			r, err := c.a.GetCollectionStatistics(ctx, &milvuspb.GetCollectionStatisticsRequest{CollectionName: "w"})
			return r.GetStatus(), err
		},
		"get_partition_statistics": func() (*commonpb.Status, error) {
			r, err := c.a.GetPartitionStatistics(ctx, &milvuspb.GetPartitionStatisticsRequest{CollectionName: "w", PartitionName: "_default"})
			return r.GetStatus(), err
		},
		"get_flush_state": func() (*commonpb.Status, error) {
			r, err := c.a.GetFlushState(ctx, &milvuspb.GetFlushStateRequest{CollectionName: "w", FlushTs: flush.GetCollFlushTs()["w"]})
			return r.GetStatus(), err
		},
		"get_flush_all_state": func() (*commonpb.Status, error) {
			r, err := c.a.GetFlushAllState(ctx, &milvuspb.GetFlushAllStateRequest{FlushAllTs: 1})
			return r.GetStatus(), err
		},
		"describe_index": func() (*commonpb.Status, error) {
			r, err := c.a.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{CollectionName: "w"})
			return r.GetStatus(), err
		},
		"get_compaction_state": func() (*commonpb.Status, error) {
			r, err := c.a.GetCompactionState(ctx, &milvuspb.GetCompactionStateRequest{CompactionID: compaction.GetCompactionID()})
			return r.GetStatus(), err
		},
		"get_compaction_plans": func() (*commonpb.Status, error) {
			r, err := c.a.GetCompactionStateWithPlans(ctx, &milvuspb.GetCompactionPlansRequest{CompactionID: compaction.GetCompactionID()})
			return r.GetStatus(), err
		},
		"get_replicas": func() (*commonpb.Status, error) {
			r, err := c.a.GetReplicas(ctx, &milvuspb.GetReplicasRequest{CollectionName: "w"})
			return r.GetStatus(), err
		},
		"import_job": func() (*commonpb.Status, error) {
			_, err := c.a.ImportJob(ctx, "", 1)
			return errcode.Status(err), nil
		},
		"import_jobs": func() (*commonpb.Status, error) {
			_, err := c.a.ImportJobs(ctx, "", "")
			return errcode.Status(err), nil
		},
	}
	// Up: the calls answer (import jobs: the coordinator here serves no
	// ImportService, so those fail either way and are checked below only).
	for name, call := range calls {
		if name == "import_job" || name == "import_jobs" || name == "get_replicas" {
			continue
		}
		st, err := call()
		requireOK(t, st, err)
	}
	c.stopCoord()
	for name, call := range calls {
		st, err := call()
		require.NoError(t, err, name)
		require.Equal(t, rpc.CodeServiceUnavailable, st.GetCode(), "%s: %s", name, st.GetReason())
		require.True(t, st.GetRetriable(), name)
	}
}

// RBAC changes through a proxy are made by the coordinator's store, with
// the caller resolved on the proxy (the grantor) and the coordinator's
// Milvus codes carried back.
func TestRBACChangesThroughProxy(t *testing.T) {
	n := newNetwork(t, rpc.ClientDefaults())
	logger := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	open := func() *auth.Store {
		kv, err := embedded.Open(filepath.Join(t.TempDir(), "meta.db"), logger)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, kv.Close()) })
		st, err := auth.Open(ctx, kv, auth.Defaults(), logger)
		require.NoError(t, err)
		return st
	}
	coord, local := open(), open()
	n.serve(t, "rbac", func(srv *grpc.Server) { proxyv1.RegisterRBACServiceServer(srv, proxyrpc.NewRBACServer(coord)) })
	px := newCluster(t).a.Proxy // its catalog resolves aliases in grants
	px.SetAuth(auth.NewGuard(local, true))
	px.SetRBACWriter(proxyrpc.NewRBAC(n.conn(t, "rbac")))
	pw := base64.StdEncoding.EncodeToString([]byte("alice-pw"))
	asRoot := auth.WithUser(ctx, auth.RootUser)

	st, err := px.CreateCredential(asRoot, &milvuspb.CreateCredentialRequest{Username: "alice", Password: pw})
	requireOK(t, st, err)
	require.True(t, coord.UserExists("alice"), "made on the coordinator")
	require.False(t, local.UserExists("alice"), "not on the proxy's own store (it reloads when told)")
	st, err = px.CreateCredential(asRoot, &milvuspb.CreateCredentialRequest{Username: "alice", Password: pw})
	require.NoError(t, err)
	require.Equal(t, auth.CodeLegacy, st.GetCode(), "the coordinator's code crosses the hop")
	require.Contains(t, st.GetReason(), "user already exists")

	st, err = px.CreateRole(asRoot, &milvuspb.CreateRoleRequest{Entity: &milvuspb.RoleEntity{Name: "analyst"}})
	requireOK(t, st, err)
	st, err = px.OperateUserRole(asRoot, &milvuspb.OperateUserRoleRequest{Username: "alice", RoleName: "analyst"})
	requireOK(t, st, err)
	require.Equal(t, []string{"analyst"}, coord.UserRoles("alice"))
	st, err = px.OperatePrivilegeV2(asRoot, &milvuspb.OperatePrivilegeV2Request{
		Role: &milvuspb.RoleEntity{Name: "analyst"}, Grantor: &milvuspb.GrantorEntity{Privilege: &milvuspb.PrivilegeEntity{Name: "Query"}},
		Type: milvuspb.OperatePrivilegeType_Grant, DbName: "default", CollectionName: "c1",
	})
	requireOK(t, st, err)
	require.Equal(t, []auth.Grant{{
		Role: "analyst", ObjectType: auth.ObjectCollection, ObjectName: "c1", DB: "default", Privilege: "Query", Grantor: auth.RootUser,
	}}, coord.Grants("analyst", "", "", ""))
	st, err = px.CreatePrivilegeGroup(asRoot, &milvuspb.CreatePrivilegeGroupRequest{GroupName: "readers"})
	requireOK(t, st, err)
	st, err = px.OperatePrivilegeGroup(asRoot, &milvuspb.OperatePrivilegeGroupRequest{
		GroupName: "readers", Privileges: []*milvuspb.PrivilegeEntity{{Name: "Query"}, {Name: "Search"}},
		Type: milvuspb.OperatePrivilegeGroupType_AddPrivilegesToGroup,
	})
	requireOK(t, st, err)
	st, err = px.UpdateCredential(asRoot, &milvuspb.UpdateCredentialRequest{
		Username: "alice", OldPassword: base64.StdEncoding.EncodeToString([]byte("wrong-pw")), NewPassword: pw,
	})
	require.NoError(t, err)
	require.Equal(t, auth.CodeNotAuthenticated, st.GetCode(), st.GetReason())

	// A backup of the coordinator (read through a proxy whose store is
	// the coordinator's) restored through the proxy into a fresh
	// coordinator store comes back whole, root aside.
	px.SetAuth(auth.NewGuard(coord, true))
	backup, err := px.BackupRBAC(asRoot, &milvuspb.BackupRBACMetaRequest{})
	requireOK(t, backup.GetStatus(), err)
	meta := backup.GetRBACMeta()
	meta.Users = slices.DeleteFunc(meta.Users, func(u *milvuspb.UserInfo) bool { return u.GetUser() == auth.RootUser })
	snap := coord.Backup()
	fresh := open()
	n.serve(t, "rbac2", func(srv *grpc.Server) { proxyv1.RegisterRBACServiceServer(srv, proxyrpc.NewRBACServer(fresh)) })
	px.SetRBACWriter(proxyrpc.NewRBAC(n.conn(t, "rbac2")))
	withoutRoot := func(s auth.Snapshot) auth.Snapshot {
		s.Users = slices.DeleteFunc(s.Users, func(u auth.SnapshotUser) bool { return u.Name == auth.RootUser })
		return s
	}
	snap = withoutRoot(snap) // the fresh store has its own root
	st, err = px.RestoreRBAC(asRoot, &milvuspb.RestoreRBACMetaRequest{RBACMeta: meta})
	requireOK(t, st, err)
	require.Equal(t, snap, withoutRoot(fresh.Backup()))
	require.Len(t, snap.Groups, 1)

	st, err = px.DropRole(asRoot, &milvuspb.DropRoleRequest{RoleName: "analyst"})
	require.NoError(t, err)
	require.NotZero(t, st.GetCode(), "a role with grants is not dropped without force")
	st, err = px.DeleteCredential(asRoot, &milvuspb.DeleteCredentialRequest{Username: "alice"})
	requireOK(t, st, err)
	require.False(t, fresh.UserExists("alice"))
}
