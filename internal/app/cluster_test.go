package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/errcode"

	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/membership"
)

// running is a standalone server started by startClustered.
type running struct {
	srv    *Server
	cancel context.CancelFunc
	done   chan error
}

// startClustered starts a standalone server on the etcd meta store at
// endpoint (cluster membership on, the other engines embedded) without
// waiting for it to lead.
func startClustered(t *testing.T, endpoint string) *running {
	t.Helper()
	cfg := Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Addr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Console = false
	cfg.Engines.Meta.Type, cfg.Engines.Meta.Etcd.Endpoints, cfg.Engines.Meta.Etcd.Root = EngineEtcd, []string{endpoint}, "strata/"
	cfg.Cluster.Membership.SessionTTL = 2 * time.Second
	srv, err := Listen(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	return r
}

// detail reads /healthz/detail; ok is false while the server does not
// answer ready.
func (r *running) detail(t *testing.T) (healthDetail, bool) {
	t.Helper()
	resp, err := http.Get("http://" + r.srv.MetricsAddr() + "/healthz/detail")
	if err != nil {
		return healthDetail{}, false
	}
	defer resp.Body.Close()
	var d healthDetail
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&d))
	return d, d.Ready
}

// awaitReady waits until r serves and returns its health detail.
func (r *running) awaitReady(t *testing.T) healthDetail {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if d, ok := r.detail(t); ok {
			return d
		}
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("server stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("server not ready in 30 s")
	return healthDetail{}
}

// TestStandaloneOnEtcdJoinsAndFailsOver: a standalone on etcd registers
// its session and leads the coordinator election (its node ID and term in
// /healthz/detail); a second one waits as a standby (its /healthz answers
// 503 "standby", its detail names the leader) without serving. When
// the leader's session is lost (its lease revoked behind its back), it
// steps down (Run returns ErrSteppedDown) and the standby leads and serves
// with a new node ID and a larger term.
func TestStandaloneOnEtcdJoinsAndFailsOver(t *testing.T) {
	endpoint := enginetest.Etcd(t)
	a := startClustered(t, endpoint)
	da := a.awaitReady(t)
	require.NotNil(t, da.Cluster)
	require.Positive(t, da.Cluster.NodeID)
	require.Equal(t, RoleStandalone, da.Cluster.Role)
	require.True(t, da.Cluster.Coordinator)
	require.Positive(t, da.Cluster.Term)

	b := startClustered(t, endpoint)
	var standby healthDetail
	require.Eventually(t, func() bool {
		var ok bool
		standby, ok = b.detail(t)
		require.False(t, ok, "the standby does not serve while A leads")
		return standby.Status == "standby"
	}, 30*time.Second, 20*time.Millisecond)
	require.NotNil(t, standby.Cluster)
	require.Greater(t, standby.Cluster.NodeID, da.Cluster.NodeID)
	require.False(t, standby.Cluster.Coordinator)
	require.Equal(t, da.Cluster.NodeID, standby.Cluster.LeaderID)
	resp, err := http.Get("http://" + b.srv.MetricsAddr() + "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NoError(t, resp.Body.Close())

	// The standby's API port answers at once, over gRPC and REST, that it
	// is not ready (and who leads) instead of leaving clients to wait.
	conn, err := grpc.NewClient(b.srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	api := milvuspb.NewMilvusServiceClient(conn)
	callCtx, callCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer callCancel()
	_, err = api.CheckHealth(callCtx, &milvuspb.CheckHealthRequest{})
	require.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	require.ErrorContains(t, err, fmt.Sprintf("node %d at %s leads", da.Cluster.NodeID, a.srv.Addr()))
	rresp, err := http.Post("http://"+b.srv.Addr()+"/v2/vectordb/collections/list", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, rresp.StatusCode)
	var body struct {
		Code    int32  `json:"code"`
		Message string `json:"message"`
	}
	require.NoError(t, json.NewDecoder(rresp.Body).Decode(&body))
	require.NoError(t, rresp.Body.Close())
	require.Equal(t, errcode.ServiceNotReady, body.Code)
	require.Contains(t, body.Message, "standby")

	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	reg, err := membership.New(c, membership.Config{Root: membership.DefaultRoot}, nil)
	require.NoError(t, err)
	nodes, err := reg.List(context.Background(), RoleStandalone)
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	require.Equal(t, da.Cluster.NodeID, nodes[0].ID)
	_, err = c.Revoke(context.Background(), clientv3.LeaseID(nodes[0].Lease))
	require.NoError(t, err)

	select {
	case err := <-a.done:
		require.ErrorIs(t, err, ErrSteppedDown)
		a.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("A did not step down")
	}
	db := b.awaitReady(t)
	require.NotNil(t, db.Cluster)
	require.True(t, db.Cluster.Coordinator)
	require.Equal(t, standby.Cluster.NodeID, db.Cluster.NodeID)
	require.Zero(t, db.Cluster.LeaderID)
	require.Greater(t, db.Cluster.Term, da.Cluster.Term)
	// The same client connection now reaches the real API on that port.
	require.Eventually(t, func() bool {
		h, err := api.CheckHealth(callCtx, &milvuspb.CheckHealthRequest{})
		return err == nil && h.GetIsHealthy()
	}, 20*time.Second, 50*time.Millisecond)
}

// TestEmbeddedMetaHasNoMembership: the default (embedded meta store)
// starts no membership, whatever the cluster section says.
func TestEmbeddedMetaHasNoMembership(t *testing.T) {
	cfg := Defaults()
	require.True(t, cfg.Cluster.Enabled)
	require.False(t, cfg.clusterOn())
	cfg.Engines.Meta.Type = EngineEtcd
	require.True(t, cfg.clusterOn())
	cfg.Cluster.Enabled = false
	require.False(t, cfg.clusterOn())

	cfg = Defaults()
	cfg.Cluster.Membership.SessionTTL = time.Millisecond
	require.ErrorContains(t, cfg.Validate(), "cluster.membership")
}
