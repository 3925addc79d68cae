package querycoord_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querycoord"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
)

// serveLeaders serves the coordinator's shard leaders over
// QueryCoordService on loopback TCP and returns a client of it, as a
// proxy process reaches the coordinator; stop stops the server (as the
// coordinator process dying does; idempotent, and at cleanup).
func (c *cluster) serveLeaders() (src *coordrpc.QueryCoord, stop func()) {
	t := c.t
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	coordv1.RegisterQueryCoordServiceServer(srv, coordrpc.NewQueryCoordServer(c.coord))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	var once atomic.Bool
	stop = func() {
		if once.CompareAndSwap(false, true) {
			srv.Stop()
			if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				t.Errorf("serve: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	conn, err := c.pool.Conn(lis.Addr().String())
	require.NoError(t, err)
	return coordrpc.NewQueryCoord(conn), stop
}

// newRouter returns a router over src that reaches the query nodes as the
// coordinator does (queryrpc over the pool, or in process), and a proxy
// that reads through it (and loads through the coordinator).
func (c *cluster) newRouter(src querycoord.LeaderSource, cfg querycoord.RouterConfig) (*querycoord.Router, *proxy.Proxy) {
	c.t.Helper()
	logger := slog.New(slog.DiscardHandler)
	dial := func(_ int64, addr string) (querycoord.Reader, error) { return c.dialAddr(addr) }
	r, err := querycoord.NewRouter(cfg, src, dial, logger)
	require.NoError(c.t, err)
	c.t.Cleanup(func() { require.NoError(c.t, r.Close()) })
	return r, c.s.NewProxy(proxy.QueryNode{Loader: c.coord, Reader: r})
}

// stopServing stops a remote node's RPC server: it cannot be reached, but
// its session lives on until kill.
func (c *cluster) stopServing(id int64) {
	c.t.Helper()
	c.mu.Lock()
	n := c.nodes[id]
	c.mu.Unlock()
	require.NotNil(c.t, n.stop, "node %d is served over RPC", id)
	n.stop()
	n.stop = nil
}

// collectionID is coll's ID.
func (c *cluster) collectionID() int64 {
	c.t.Helper()
	col, err := c.s.Root.Collection("", coll)
	require.NoError(c.t, err)
	return col.ID
}

// TestRouterReadsAsTheCoordinator: a router fed by GetShardLeaders over
// gRPC answers every search and query (top-k, offset, filters, range,
// group-by, iterators, limit/offset, count(*)) as one node holding every
// shard does, on one replica of two leaders and on two replicas; a
// collection that is not loaded is code 101.
func TestRouterReadsAsTheCoordinator(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	remote := c.addRemote()
	local := c.addLocal()
	ok(t, c.load(1), nil)
	id := c.collectionID()
	leaders := c.placed(id)[0].Leaders
	require.ElementsMatch(t, []int64{remote, local}, []int64{leaders[c.vchannel(0)], leaders[c.vchannel(1)]}, "one shard per node")

	src, _ := c.serveLeaders()
	sl, err := src.ShardLeaders(context.Background(), id)
	require.NoError(t, err)
	direct, err := c.coord.ShardLeaders(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, direct, sl, "the wire keeps the shard leaders")
	require.Len(t, sl.Replicas, 1)
	require.True(t, sl.Replicas[0].Serving)
	require.NotZero(t, sl.PKField)

	router, rpx := c.newRouter(src, querycoord.RouterDefaults())
	c.sameAs(rpx)

	// Two replicas, one node each: round-robin, each answers alone.
	c.release()
	router.Invalidate(id)
	ok(t, c.load(2), nil)
	c.sameAs(rpx)
	c.sameAs(rpx)

	// Released: the router says so with Milvus's code.
	c.release()
	_, err = router.Search(context.Background(), &plan.Search{Read: plan.Read{CollectionID: id}, TopK: 1})
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "%v", err)
	_, err = c.coord.ShardLeaders(context.Background(), id)
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "%v", err)
}

// vchannel returns coll's i-th vchannel.
func (c *cluster) vchannel(i int) string {
	col, err := c.s.Root.Collection("", coll)
	require.NoError(c.t, err)
	return col.VChannels[i]
}

// TestRouterFailsOverWhenANodeDies: two replicas on two nodes; one node
// stops answering (its server stopped, its session alive): every read
// through the router still answers exactly, from the other replica, as
// after its session ends and a new node is healed into its replica. With
// one replica whose leader died, reads recover once the coordinator moved
// the shard: the router fetches the new leaders.
func TestRouterFailsOverWhenANodeDies(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	a, b := c.addRemote(), c.addRemote()
	ok(t, c.load(2), nil)
	reps := c.placed(c.collectionID())
	require.ElementsMatch(t, []int64{a, b}, []int64{reps[0].Nodes[0], reps[1].Nodes[0]})
	src, _ := c.serveLeaders()
	cfg := querycoord.RouterDefaults()
	cfg.RefreshInterval = 100 * time.Millisecond
	router, rpx := c.newRouter(src, cfg)
	c.sameAs(rpx)

	c.stopServing(a)
	for range 3 {
		c.sameAs(rpx)
	}
	c.kill(a)
	require.Eventually(t, func() bool {
		sl, err := c.coord.ShardLeaders(context.Background(), c.collectionID())
		require.NoError(t, err)
		return sl.Replicas[0].Serving != sl.Replicas[1].Serving
	}, 30*time.Second, 10*time.Millisecond, "the coordinator takes the dead node's replica out of service")
	c.sameAs(rpx)
	d := c.addRemote()
	require.Eventually(t, func() bool {
		sl, err := c.coord.ShardLeaders(context.Background(), c.collectionID())
		require.NoError(t, err)
		return sl.Replicas[0].Serving && sl.Replicas[1].Serving
	}, 30*time.Second, 10*time.Millisecond, "node %d is healed into the replica", d)
	c.sameAs(rpx)
	c.sameAs(rpx)

	// One replica over two leaders and an idle node: a leader dies, the
	// coordinator moves its shard to the idle node, the router follows.
	c.release()
	router.Invalidate(c.collectionID())
	ok(t, c.load(1), nil)
	c.sameAs(rpx)
	leaders := c.placed(c.collectionID())[0].Leaders
	dead := leaders[c.vchannel(0)]
	c.stopServing(dead)
	c.kill(dead)
	search := searches(t)["top-k"]
	want, err := c.s.Proxy.Search(context.Background(), search)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := rpx.Search(context.Background(), search)
		require.NoError(t, err)
		if code := got.GetStatus().GetCode(); code != 0 {
			require.Equal(t, errcode.ChannelNotAvailable, code, "until the shard moved: retriable 503, %s", got.GetStatus().GetReason())
			return false
		}
		require.True(t, proto.Equal(want.GetResults(), got.GetResults()))
		return true
	}, 30*time.Second, 20*time.Millisecond)
	c.sameAs(rpx)
}

// TestRouterReadsThroughARebalance: two shards led by one node; a node
// joins and a shard moves to it while reads run through a router that
// cached the old leaders: no read fails and every answer (searches,
// count(*)) is exact, so no shard was answered twice or not at all.
func TestRouterReadsThroughARebalance(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	c.addLocal()
	ok(t, c.load(1), nil)
	src, _ := c.serveLeaders()
	_, rpx := c.newRouter(src, querycoord.RouterDefaults())
	c.sameAs(rpx)
	id := c.collectionID()
	before := c.placed(id)[0].Leaders

	reads := c.startReads(rpx)
	reads.more(3)
	c.addRemote()
	reads.until(func() bool {
		l := c.placed(id)[0].Leaders
		return l[c.vchannel(0)] != l[c.vchannel(1)]
	}, "a shard moves to the joining node")
	// The old leader drops the shard it handed off, under the router's
	// cached placement.
	reads.more(5)
	n := reads.end()
	require.NotEqual(t, before, c.placed(id)[0].Leaders)
	t.Logf("%d reads through the router before, during and after the move, all exact", n)
	c.sameAs(rpx)
}

// TestRouterWithoutTheCoordinator: with the coordinator gone, a router
// whose cache is warm reads on (its refreshes fail and keep the cached
// leaders); a cold router fails fast with Milvus's retriable code 2, and
// so does one whose coordinator accepts connections but never answers.
func TestRouterWithoutTheCoordinator(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	c.addRemote()
	c.addLocal()
	ok(t, c.load(1), nil)
	src, stop := c.serveLeaders()
	cfg := querycoord.RouterDefaults()
	cfg.RefreshInterval = 10 * time.Millisecond
	cfg.FetchTimeout = time.Second
	_, rpx := c.newRouter(src, cfg)
	c.sameAs(rpx)

	stop()
	time.Sleep(20 * time.Millisecond) // every entry is due for a refresh
	c.sameAs(rpx)
	c.sameAs(rpx)

	id := c.collectionID()
	req := &plan.Search{Read: plan.Read{CollectionID: id}, TopK: 1}
	cold, _ := c.newRouter(src, cfg)
	start := time.Now()
	_, err := cold.Search(context.Background(), req)
	require.Error(t, err)
	require.Equal(t, rpc.CodeServiceUnavailable, errcode.CodeOf(err), "%v", err)
	require.True(t, rpc.RetriableCode(errcode.CodeOf(err)))
	require.Less(t, time.Since(start), 5*time.Second)
	resp, err := func() (*milvuspb.SearchResults, error) {
		_, px := c.newRouter(src, cfg)
		return px.Search(context.Background(), searches(t)["top-k"])
	}()
	require.NoError(t, err)
	require.Equal(t, rpc.CodeServiceUnavailable, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())

	// A coordinator that accepts connections and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, silent.Close()) })
	conn, err := c.pool.Conn(silent.Addr().String())
	require.NoError(t, err)
	mute, _ := c.newRouter(coordrpc.NewQueryCoord(conn), cfg)
	start = time.Now()
	_, err = mute.Search(context.Background(), req)
	require.Equal(t, rpc.CodeServiceUnavailable, errcode.CodeOf(err), "%v", err)
	require.Less(t, time.Since(start), cfg.FetchTimeout+2*time.Second)
}

// fixedLeaders is a coordinator that answers one placement.
type fixedLeaders plan.ShardLeaders

func (f fixedLeaders) ShardLeaders(context.Context, int64) (plan.ShardLeaders, error) {
	return plan.ShardLeaders(f), nil
}

// TestRouterWithoutReplicas: shard leaders with no replica, or whose
// leaders have no address (their node left), fail a read with the
// retriable 503, never an empty answer.
func TestRouterWithoutReplicas(t *testing.T) {
	dial := func(id int64, addr string) (querycoord.Reader, error) {
		return nil, fmt.Errorf("node %d at %s: no such node here", id, addr)
	}
	for name, sl := range map[string]plan.ShardLeaders{
		"no replica": {CollectionID: 1, Name: "c", PKField: 100, Version: 1},
		"no address": {CollectionID: 1, Name: "c", PKField: 100, Version: 1, Replicas: []plan.Replica{
			{ID: 1, Nodes: []int64{4}, Serving: true, Leaders: map[string]int64{"v0": 4}},
		}},
		"not dialed": {CollectionID: 1, Name: "c", PKField: 100, Version: 1, Replicas: []plan.Replica{
			{ID: 1, Nodes: []int64{4}, Serving: true, Leaders: map[string]int64{"v0": 4}, Addresses: map[int64]string{4: "nowhere:1"}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := querycoord.NewRouter(querycoord.RouterDefaults(), fixedLeaders(sl), dial, nil)
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			_, err = r.Search(context.Background(), &plan.Search{Read: plan.Read{CollectionID: 1}, TopK: 1})
			require.Equal(t, errcode.ChannelNotAvailable, errcode.CodeOf(err), "%v", err)
			_, err = r.Query(context.Background(), &plan.Query{Read: plan.Read{CollectionID: 1}, CountOnly: true})
			require.Equal(t, errcode.ChannelNotAvailable, errcode.CodeOf(err), "%v", err)
		})
	}
	_, err := querycoord.NewRouter(querycoord.RouterConfig{}, fixedLeaders{}, dial, nil)
	require.ErrorContains(t, err, "refreshInterval")
	_, err = querycoord.NewRouter(querycoord.RouterDefaults(), nil, dial, nil)
	require.Error(t, err)
}
