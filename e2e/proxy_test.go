package e2e

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/rgroup"
)

// TestClusterProxies runs two proxy processes (`strata run proxy`) beside
// the coordinator, a data node and a query node on real engines. DDL
// through one proxy is seen through the other at once; inserts and
// searches run through both; one proxy is killed -9 mid-load: the clients
// of the other see no failure, and every acknowledged row is there exactly
// once (a batch in flight on the killed proxy may or may not have landed).
func TestClusterProxies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and five processes")
	}
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.config(t, map[string]any{
		"cluster": map[string]any{"membership": map[string]any{"sessionTTL": "3s"}},
	})
	coord := startRole(t, bin, "coordinator", cfg, false)
	startRole(t, bin, "datanode", cfg, false)
	startRole(t, bin, "querynode", cfg, false)
	pa := startRole(t, bin, "proxy", cfg, false)
	pb := startRole(t, bin, "proxy", cfg, false)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ca, cb, cc := pa.client(t), pb.client(t), coord.client(t)
	const coll = crashColl // countRange's

	// DDL through A, seen through B (and the coordinator) at once.
	createTwoShards(ctx, t, ca, coll)
	has, err := cb.HasCollection(ctx, milvusclient.NewHasCollectionOption(coll))
	require.NoError(t, err)
	require.True(t, has, "a collection created through proxy A is seen through proxy B")
	require.NoError(t, cb.CreateAlias(ctx, milvusclient.NewCreateAliasOption(coll, "movies_now")))
	_, err = ca.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("movies_now"))
	require.NoError(t, err, "an alias created through B resolves through A")
	require.NoError(t, cc.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("scratch", moviesSchema("scratch"))))
	_, err = cb.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("scratch"))
	require.NoError(t, err)
	require.NoError(t, ca.DropCollection(ctx, milvusclient.NewDropCollectionOption("scratch")))
	_, err = cb.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("scratch"))
	require.ErrorContains(t, err, "can't find collection", "a collection dropped through A is gone through B")

	var (
		mu       sync.Mutex
		live     = map[int64]bool{}
		inFlight = map[int64]bool{} // rows of writes whose answer was lost
	)
	record := func(ms []movie, acked bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			if acked {
				live[m.id] = true
			} else {
				inFlight[m.id] = true
			}
		}
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for i, c := range []*milvusclient.Client{ca, cb} {
		batch := genMovies(i*1000, 1000, rng)
		_, err := c.Insert(ctx, insertOption(coll, batch))
		require.NoError(t, err)
		record(batch, true)
	}
	lt, err := cb.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	for _, c := range []*milvusclient.Client{ca, cb} {
		n, err := countStrong(ctx, c, coll)
		require.NoError(t, err)
		require.EqualValues(t, 2000, n)
	}

	// Ingest streams through both proxies and searches through B.
	var (
		stop               atomic.Bool
		wg                 sync.WaitGroup
		acksA, acksB       atomic.Int64
		failsB, readFailsB atomic.Int64
		searchesB          atomic.Int64
		firstErrMu         sync.Mutex
		firstErrB          error
	)
	noteB := func(err error) {
		firstErrMu.Lock()
		defer firstErrMu.Unlock()
		if firstErrB == nil {
			firstErrB = err
		}
	}
	stream := func(c *milvusclient.Client, base int, acks, fails *atomic.Int64, strict bool) {
		defer wg.Done()
		r := rand.New(rand.NewPCG(uint64(base), 23))
		for next := base; !stop.Load(); next += 50 {
			batch := genMovies(next, 50, r)
			ictx, icancel := context.WithTimeout(ctx, 20*time.Second)
			_, err := c.Insert(ictx, insertOption(coll, batch))
			icancel()
			if err != nil {
				record(batch, false)
				if fails != nil {
					fails.Add(1)
				}
				if strict {
					noteB(err)
				}
				continue
			}
			record(batch, true)
			acks.Add(1)
			time.Sleep(10 * time.Millisecond)
		}
	}
	wg.Add(3)
	go stream(ca, 100000, &acksA, nil, false)
	go stream(cb, 500000, &acksB, &failsB, true)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(24, 25))
		for !stop.Load() {
			qv := genMovies(900000, 1, r)[0].vec
			_, err := cb.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector(qv)}))
			searchesB.Add(1)
			if err != nil {
				readFailsB.Add(1)
				noteB(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	require.Eventually(t, func() bool { return acksA.Load() >= 10 && acksB.Load() >= 10 }, 60*time.Second, 20*time.Millisecond,
		"the ingest streams stalled")

	// Proxy A dies mid-load.
	pa.kill(t)
	base := acksB.Load()
	require.Eventually(t, func() bool { return acksB.Load() >= base+20 }, 60*time.Second, 20*time.Millisecond,
		"proxy B's stream stalled after proxy A died")
	stop.Store(true)
	wg.Wait()
	firstErrMu.Lock()
	require.NoError(t, errors.Join(firstErrB), "a client of proxy B failed while proxy A died")
	firstErrMu.Unlock()
	require.Zero(t, failsB.Load())
	require.Zero(t, readFailsB.Load())
	t.Logf("proxy A killed: proxy B served %d inserts and %d searches without a failure", acksB.Load(), searchesB.Load())

	// Every acknowledged row is there exactly once.
	mu.Lock()
	acked, unknown := len(live), 0
	for id := range inFlight {
		if !live[id] {
			unknown++
		}
	}
	mu.Unlock()
	n, err := countStrong(ctx, cb, coll)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(acked), "acknowledged rows lost")
	require.LessOrEqual(t, n, int64(acked+unknown), "rows stored that no write sent")
	cnt, distinct, err := countRange(ctx, cb, 0, 1<<40)
	require.NoError(t, err)
	require.EqualValues(t, distinct, cnt, "duplicated rows")
	t.Logf("acknowledged rows: %d, in flight when A died: %d, stored: %d", acked, unknown, n)
}

// TestClusterProxiesRBAC runs authorization on a coordinator and two
// proxies: users, roles and grants changed through one proxy are made by
// the coordinator (which owns them; the proxy checks the caller) and
// every proxy and the coordinator enforce them once the call returns (the
// coordinator tells each proxy to reload before it answers).
func TestClusterProxiesRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and three processes")
	}
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.config(t, map[string]any{
		"cluster":  map[string]any{"membership": map[string]any{"sessionTTL": "3s"}},
		"security": map[string]any{"authorizationEnabled": true},
	})
	coord := startRole(t, bin, "coordinator", cfg, false)
	pa := startRole(t, bin, "proxy", cfg, false)
	pb := startRole(t, bin, "proxy", cfg, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	login := func(p *roleProc, user, pw string) (*milvusclient.Client, error) {
		c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: p.addr, Username: user, Password: pw})
		if err == nil {
			t.Cleanup(func() { _ = c.Close(context.Background()) })
		}
		return c, err
	}
	root, err := login(coord, "root", "Milvus")
	require.NoError(t, err)
	rootA, err := login(pa, "root", "Milvus")
	require.NoError(t, err)
	rootB, err := login(pb, "root", "Milvus")
	require.NoError(t, err)
	_, err = login(pb, "root", "wrong")
	require.ErrorContains(t, err, "auth check failure")

	// Created and granted through proxy A: alice logs in and is
	// authorised through proxy B and the coordinator at once.
	require.NoError(t, rootA.CreateUser(ctx, milvusclient.NewCreateUserOption("alice", "alice-pw")))
	require.ErrorContains(t, rootA.CreateUser(ctx, milvusclient.NewCreateUserOption("alice", "alice-pw")), "user already exists",
		"the coordinator's refusal crosses the hop")
	require.NoError(t, root.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("c1", moviesSchema("c1"))))
	alice := map[string]*milvusclient.Client{}
	for name, p := range map[string]*roleProc{"proxy A": pa, "proxy B": pb, "coordinator": coord} {
		c, err := login(p, "alice", "alice-pw")
		require.NoError(t, err, "a user created through proxy A logs in through %s", name)
		_, err = c.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
		require.ErrorContains(t, err, "permission deny", name)
		alice[name] = c
	}
	// The proxy checks the caller: alice may not create users.
	require.ErrorContains(t, alice["proxy A"].CreateUser(ctx, milvusclient.NewCreateUserOption("mallory", "mallory-pw")),
		"permission deny")
	require.NoError(t, rootA.CreateRole(ctx, milvusclient.NewCreateRoleOption("analyst")))
	require.NoError(t, rootA.GrantRole(ctx, milvusclient.NewGrantRoleOption("alice", "analyst")))
	require.NoError(t, rootA.GrantPrivilege(ctx, milvusclient.NewGrantPrivilegeOption("analyst", "Collection", "GetStatistics", "c1")))
	for name, c := range alice {
		_, err = c.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
		require.NoError(t, err, "a grant made through proxy A holds through %s at once", name)
	}

	// Dropped through proxy B: refused everywhere right after the call.
	require.NoError(t, rootB.DropUser(ctx, milvusclient.NewDropUserOption("alice")))
	for name, p := range map[string]*roleProc{"proxy A": pa, "proxy B": pb, "coordinator": coord} {
		_, err = login(p, "alice", "alice-pw")
		require.ErrorContains(t, err, "auth check failure", "a dropped user no longer logs in through %s", name)
	}
	for name, c := range alice {
		_, err = c.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
		require.Error(t, err, "a dropped user's open client is refused through %s", name)
	}
	users, err := rootA.ListUsers(ctx, milvusclient.NewListUserOption())
	require.NoError(t, err)
	require.NotContains(t, users, "alice")
}

// TestClusterProxiesResourceGroupsAndReplicas drives resource groups
// through a proxy process with the Go SDK, against a coordinator, a data
// node and two query nodes: groups created, configured, described,
// listed and dropped, a node and a replica transferred through the proxy
// are what the coordinator reports, and describe_replica and
// GetQuerySegmentInfo through the proxy report the coordinator's placement.
func TestClusterProxiesResourceGroupsAndReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and five processes")
	}
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.clusterConfig(t, 3*time.Second)
	coord := startRole(t, bin, "coordinator", cfg, false)
	startRole(t, bin, "datanode", cfg, false)
	startRole(t, bin, "querynode", cfg, false)
	startRole(t, bin, "querynode", cfg, false)
	px := startRole(t, bin, "proxy", cfg, false)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp, cc := px.client(t), coord.client(t)
	describe := func(c *milvusclient.Client, name string) *entity.ResourceGroup {
		t.Helper()
		rg, err := c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption(name))
		require.NoError(t, err)
		return rg
	}
	// Both sides describe a group alike.
	same := func(name string) *entity.ResourceGroup {
		t.Helper()
		fromProxy, fromCoord := describe(cp, name), describe(cc, name)
		require.Equal(t, fromCoord, fromProxy, "group %s through the proxy and the coordinator", name)
		return fromProxy
	}
	require.Eventually(t, func() bool { return describe(cp, rgroup.Default).NumAvailableNode == 2 }, 60*time.Second, 50*time.Millisecond,
		"both query nodes join the default group")

	require.NoError(t, cp.CreateResourceGroup(ctx, milvusclient.NewCreateResourceGroupOption("rg1")))
	require.NoError(t, cp.UpdateResourceGroup(ctx, milvusclient.NewUpdateResourceGroupOption("rg1", &entity.ResourceGroupConfig{
		Requests: entity.ResourceGroupLimit{NodeNum: 1}, Limits: entity.ResourceGroupLimit{NodeNum: 1},
	})))
	require.Eventually(t, func() bool { return describe(cc, "rg1").NumAvailableNode == 1 }, 30*time.Second, 50*time.Millisecond,
		"a group configured through the proxy takes a node")
	rg1 := same("rg1")
	require.Len(t, rg1.Nodes, 1)
	rg1Node := rg1.Nodes[0].NodeID
	def := same(rgroup.Default)
	require.Len(t, def.Nodes, 1)
	defNode := def.Nodes[0].NodeID
	groups, err := cp.ListResourceGroups(ctx, milvusclient.NewListResourceGroupsOption())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{rgroup.Default, "rg1"}, groups)
	require.ErrorContains(t, cp.DropResourceGroup(ctx, milvusclient.NewDropResourceGroupOption(rgroup.Default)),
		"default resource group is not deletable", "the coordinator's refusal crosses the hop")
	_, err = cp.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption("nope"))
	require.ErrorContains(t, err, "resource group not found[rg=nope]")

	// A collection loaded into rg1 through the proxy: its replica, shard
	// leaders and segments are reported alike through both.
	const coll = "placed"
	createTwoShards(ctx, t, cp, coll)
	_, err = cp.Insert(ctx, insertOption(coll, genMovies(0, 500, rand.New(rand.NewPCG(41, 42)))))
	require.NoError(t, err)
	ft, err := cp.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	lt, err := cp.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll).WithResourceGroup("rg1"))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	// bothReplicas returns the replicas through the proxy and through the
	// coordinator, read one after the other.
	bothReplicas := func() (fromProxy, fromCoord []*entity.ReplicaInfo) {
		t.Helper()
		fromProxy, err := cp.DescribeReplica(ctx, milvusclient.NewDescribeReplicaOption(coll))
		require.NoError(t, err)
		fromCoord, err = cc.DescribeReplica(ctx, milvusclient.NewDescribeReplicaOption(coll))
		require.NoError(t, err)
		return fromProxy, fromCoord
	}
	replicas := func() []*entity.ReplicaInfo {
		t.Helper()
		fromProxy, fromCoord := bothReplicas()
		require.Equal(t, fromCoord, fromProxy, "replicas through the proxy and the coordinator")
		return fromProxy
	}
	reps := replicas()
	require.Len(t, reps, 1)
	require.Equal(t, "rg1", reps[0].ResourceGroupName)
	require.Equal(t, []int64{rg1Node}, reps[0].Nodes)
	require.Len(t, reps[0].Shards, 2)
	for _, sh := range reps[0].Shards {
		require.Equal(t, rg1Node, sh.ShardLeader)
	}
	rawP, rawC := rawMilvus(t, px.addr), rawMilvus(t, coord.addr)
	segs := func(raw milvuspb.MilvusServiceClient) []*milvuspb.QuerySegmentInfo {
		t.Helper()
		resp, err := raw.GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{CollectionName: coll})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		out := resp.GetInfos()
		slices.SortFunc(out, func(a, b *milvuspb.QuerySegmentInfo) int { return cmp.Compare(a.GetSegmentID(), b.GetSegmentID()) })
		return out
	}
	fromProxy, fromCoord := segs(rawP), segs(rawC)
	require.NotEmpty(t, fromProxy)
	require.Len(t, fromProxy, len(fromCoord))
	for i := range fromProxy {
		require.True(t, proto.Equal(fromCoord[i], fromProxy[i]), "segment %d: proxy %v, coordinator %v", i, fromProxy[i], fromCoord[i])
		require.Equal(t, []int64{rg1Node}, fromProxy[i].GetNodeIds(), "served by rg1's node")
	}

	// The replica moves to the default group through the proxy, then
	// rg1's node; rg1, empty, is dropped through the proxy.
	require.NoError(t, cp.TransferReplica(ctx, milvusclient.NewTransferReplicaOption(coll, "rg1", rgroup.Default, 1)))
	require.Eventually(t, func() bool {
		// While the replica moves the two reads may see it before and
		// after a step: they must agree once it has moved.
		r, c := bothReplicas()
		return len(r) == 1 && r[0].ResourceGroupName == rgroup.Default && slices.Equal(r[0].Nodes, []int64{defNode}) &&
			reflect.DeepEqual(r, c)
	}, 60*time.Second, 100*time.Millisecond, "the replica moves onto the default group's node")
	replicas()
	st, err := rawP.TransferNode(ctx, &milvuspb.TransferNodeRequest{SourceResourceGroup: "rg1", TargetResourceGroup: rgroup.Default, NumNode: 1})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	require.Eventually(t, func() bool { return describe(cc, rgroup.Default).NumAvailableNode == 2 }, 30*time.Second, 50*time.Millisecond,
		"a node transferred through the proxy moves")
	same(rgroup.Default)
	require.NoError(t, cp.DropResourceGroup(ctx, milvusclient.NewDropResourceGroupOption("rg1")))
	groups, err = cc.ListResourceGroups(ctx, milvusclient.NewListResourceGroupsOption())
	require.NoError(t, err)
	require.Equal(t, []string{rgroup.Default}, groups)
	n, err := countStrong(ctx, cp, coll)
	require.NoError(t, err)
	require.EqualValues(t, 500, n)
}

// rawMilvus is a plain gRPC client of the Milvus API at addr, for calls
// the Go SDK does not make (GetQuerySegmentInfo, TransferNode).
func rawMilvus(t *testing.T, addr string) milvuspb.MilvusServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return milvuspb.NewMilvusServiceClient(conn)
}
