// Package e2e drives a real Strata server with the real Milvus Go SDK.
package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/app"
)

func TestMain(m *testing.M) {
	stopEngines, err := setTarget()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	stopEngines()
	removeBinary()
	if code == 0 {
		// As goleak.VerifyTestMain, after the shared binary is removed.
		if err := goleak.Find(
			// The Milvus SDK and grpc-go keep background goroutines after Close.
			goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			goleak.IgnoreAnyFunction("github.com/milvus-io/milvus/pkg/v2/util/paramtable.init"),
			goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
			goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
			goleak.IgnoreAnyFunction("go.opencensus.io/stats/view.(*worker).start"),
			goleak.IgnoreAnyFunction("github.com/milvus-io/milvus/pkg/v2/log.(*asyncTextIOCore).run"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// server is a Strata server running in this process: a standalone, or
// in cluster mode (STRATA_E2E_TARGET=cluster) a cluster whose coordinator
// serves the API.
type server struct {
	t    testing.TB
	dir  string
	addr string
	// metrics is the metrics port's address ("" unless a tweak opens it).
	metrics string
	// internal is the internal RPC address ("" unless a tweak sets
	// InternalAddr; a cluster's coordinator always has one).
	internal string
	// namespace is a cluster's part of the engines ("" for a standalone).
	namespace string
	// parts are the app servers: the standalone, or the coordinator and
	// the nodes.
	parts []*part
}

// startServer starts a server on a free port over dir.
func startServer(t testing.TB, dir string, tweak ...func(*app.Config)) *server {
	t.Helper()
	return startServerLogs(t, dir, nil, tweak...)
}

// startServerLogs is startServer with the server's log written to logs
// (when not nil) at cfg.LogLevel.
func startServerLogs(t testing.TB, dir string, logs io.Writer, tweak ...func(*app.Config)) *server {
	t.Helper()
	cfg := app.Defaults()
	cfg.DataDir = dir
	cfg.Addr = "127.0.0.1:0"
	cfg.MetricsAddr = ""
	cfg.DataCoord.CheckInterval = 200 * time.Millisecond
	ns := ""
	if target != nil {
		ns = target.namespace(t, dir)
		target.config(t, &cfg, ns)
	}
	for _, f := range tweak {
		f(&cfg)
	}
	logger := testLogger(logs, cfg.LogLevel)
	if target != nil {
		return startCluster(t, cfg, ns, logger)
	}
	srv, err := app.Listen(cfg, logger)
	require.NoError(t, err)
	s := &server{t: t, dir: dir, addr: srv.Addr(), metrics: srv.MetricsAddr(), internal: srv.InternalAddr()}
	s.parts = []*part{runPart(app.RoleStandalone, srv)}
	t.Cleanup(s.stop)
	// The collections loaded before a restart load again in the background;
	// tests read them at once, so wait for that (or for Run to fail).
	s.waitReloaded(srv, s.parts[0])
	return s
}

// stop shuts the server down and waits; it is idempotent.
func (s *server) stop() {
	parts := s.parts
	s.parts = nil
	if len(parts) > 0 {
		stopParts(s.t, parts)
	}
}

// client connects the Milvus Go SDK to the server.
func (s *server) client(t *testing.T) *milvusclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: s.addr})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
