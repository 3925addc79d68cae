package coordrpc_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
)

// placements answers the shard leaders it holds, and "collection not
// loaded" for any other collection.
type placements map[int64]plan.ShardLeaders

func (p placements) ShardLeaders(_ context.Context, id int64) (plan.ShardLeaders, error) {
	sl, ok := p[id]
	if !ok {
		return plan.ShardLeaders{}, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%d]", id)
	}
	return sl, nil
}

// serveLeaders serves QueryCoordService over src on an in-memory listener
// and returns a client of it; stop stops the server (idempotent).
func serveLeaders(t *testing.T, src coordv1.QueryCoordServiceServer) (leaders *coordrpc.QueryCoord, stop func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	logger := slog.New(slog.DiscardHandler)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), logger)
	require.NoError(t, err)
	coordv1.RegisterQueryCoordServiceServer(srv, src)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	cfg := rpc.ClientDefaults()
	cfg.Timeout = 2 * time.Second
	pool, err := rpc.NewPool(cfg, logger,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	require.NoError(t, err)
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			srv.Stop()
			require.NoError(t, <-served)
		}
	}
	t.Cleanup(func() {
		require.NoError(t, pool.Close())
		stop()
	})
	conn, err := pool.Conn("bufconn")
	require.NoError(t, err)
	return coordrpc.NewQueryCoord(conn), stop
}

// TestShardLeadersSurviveTheWire: a collection's shard leaders come back
// as the coordinator gave them (every field; the addresses of the leader
// nodes); a collection not loaded is code 101; a coordinator that is gone
// is a retriable error, never an empty placement.
func TestShardLeadersSurviveTheWire(t *testing.T) {
	want := plan.ShardLeaders{
		CollectionID: 7, Name: "docs", PKField: 100, Version: 42, TTL: 90 * time.Second,
		Replicas: []plan.Replica{
			{
				ID: 1, Nodes: []int64{3, 5}, Serving: true,
				Leaders:   map[string]int64{"by-dml_0_7v0": 3, "by-dml_1_7v1": 5},
				Addresses: map[int64]string{3: "10.0.0.3:19531", 5: "10.0.0.5:19531"},
			},
			{
				ID: 2, Nodes: []int64{4}, Serving: false,
				Leaders:   map[string]int64{"by-dml_0_7v0": 4, "by-dml_1_7v1": 4},
				Addresses: map[int64]string{},
			},
		},
	}
	client, stop := serveLeaders(t, coordrpc.NewQueryCoordServer(placements{7: want}))
	ctx := context.Background()
	got, err := client.ShardLeaders(ctx, 7)
	require.NoError(t, err)
	require.Equal(t, want, got)

	_, err = client.ShardLeaders(ctx, 8)
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "collection not loaded[collection=8]")

	stop()
	_, err = client.ShardLeaders(ctx, 7)
	require.Equal(t, rpc.CodeServiceUnavailable, errcode.CodeOf(err), "%v", err)
	require.True(t, errcode.Status(err).GetRetriable() || rpc.RetriableCode(errcode.CodeOf(err)))
}

// rawLeaders answers GetShardLeaders with a fixed message.
type rawLeaders struct {
	coordv1.UnimplementedQueryCoordServiceServer
	resp *coordv1.GetShardLeadersResponse
}

func (r rawLeaders) GetShardLeaders(context.Context, *coordv1.GetShardLeadersRequest) (*coordv1.GetShardLeadersResponse, error) {
	return r.resp, nil
}

// TestMalformedShardLeaders: a response the client cannot read as one
// placement is an error, never a placement.
func TestMalformedShardLeaders(t *testing.T) {
	leader := func(ch string, node int64, addr string) *coordv1.ShardLeader {
		return &coordv1.ShardLeader{Vchannel: ch, NodeId: node, Address: addr}
	}
	for name, tc := range map[string]struct {
		resp *coordv1.GetShardLeadersResponse
		want string
	}{
		"negative ttl": {&coordv1.GetShardLeadersResponse{CollectionId: 1, TtlMs: -1}, "negative ttl_ms"},
		"vchannel twice": {&coordv1.GetShardLeadersResponse{CollectionId: 1, Replicas: []*coordv1.ShardReplica{
			{ReplicaId: 1, Leaders: []*coordv1.ShardLeader{leader("v0", 1, "a:1"), leader("v0", 2, "b:1")}},
		}}, `names vchannel "v0" twice`},
		"two addresses": {&coordv1.GetShardLeadersResponse{CollectionId: 1, Replicas: []*coordv1.ShardReplica{
			{ReplicaId: 1, Leaders: []*coordv1.ShardLeader{leader("v0", 1, "a:1"), leader("v1", 1, "b:1")}},
		}}, "node 1 has two addresses"},
	} {
		t.Run(name, func(t *testing.T) {
			client, _ := serveLeaders(t, rawLeaders{resp: tc.resp})
			_, err := client.ShardLeaders(context.Background(), 1)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
