package coordrpc_test

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
	"github.com/strata-db/strata/internal/wal"
)

// truncated records the truncations that pass the remote pins.
type truncated map[string]int64

func (t truncated) Truncate(_ context.Context, pchannel string, before int64) error {
	t[pchannel] = before
	return nil
}

// TestReportPins: a node's pins travel to the coordinator's remote pins
// and hold its truncation; a second report replaces the first.
func TestReportPins(t *testing.T) {
	ctx := context.Background()
	log := truncated{}
	pins := wal.NewRemotePins(log, 0)
	pins.SetLive([]int64{7})

	lis := bufconn.Listen(1 << 20)
	logger := slog.New(slog.DiscardHandler)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), logger)
	require.NoError(t, err)
	coordv1.RegisterWALPinServiceServer(srv, coordrpc.NewWALPinServer(pins))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	pool, err := rpc.NewPool(rpc.ClientDefaults(), logger,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	require.NoError(t, err)
	defer func() {
		require.NoError(t, pool.Close())
		srv.GracefulStop()
		require.NoError(t, <-served)
	}()
	conn, err := pool.Conn("bufconn")
	require.NoError(t, err)
	c := coordrpc.NewWALPins(conn)

	require.NoError(t, pins.Truncate(ctx, "p0", 100))
	require.Empty(t, log, "node 7 has not reported")
	require.NoError(t, c.Report(ctx, 7, map[string]int64{"p0": 30, "p1": 5}))
	require.NoError(t, pins.Truncate(ctx, "p0", 100))
	require.NoError(t, pins.Truncate(ctx, "p1", 100))
	require.Equal(t, truncated{"p0": 30, "p1": 5}, log)
	require.NoError(t, c.Report(ctx, 7, map[string]int64{"p0": 60}))
	require.NoError(t, pins.Truncate(ctx, "p0", 100))
	require.NoError(t, pins.Truncate(ctx, "p1", 100))
	require.Equal(t, truncated{"p0": 60, "p1": 100}, log)
}
