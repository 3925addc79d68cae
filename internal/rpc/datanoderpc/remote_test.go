package datanoderpc_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/datanoderpc"
	datanodev1 "github.com/strata-db/strata/internal/rpcpb/strata/datanode/v1"
	"github.com/strata-db/strata/internal/stacktest"
)

// serve runs a watched data node of s and serves it on a loopback TCP
// port; it returns the node and its address.
func serve(t *testing.T, s *stacktest.Stack) (*datanode.Node, string) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	cfg := s.DataNodeConfig
	cfg.Watched = true
	dn, err := datanode.New(cfg, s.Log, s.Objects, s.Data, s.Root, s.IDs, logger)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- dn.Run(ctx) }()
	srv, err := rpc.NewServer(rpc.ServerDefaults(), logger)
	require.NoError(t, err)
	datanodev1.RegisterDataNodeServiceServer(srv, datanoderpc.NewServer(dn))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.GracefulStop()
		require.NoError(t, <-served)
		cancel()
		require.NoError(t, <-ran)
	})
	return dn, lis.Addr().String()
}

// dialer returns clients of data nodes through one pool.
func dialer(t *testing.T) func(string) (*datanoderpc.Client, error) {
	t.Helper()
	pool, err := rpc.NewPool(rpc.ClientDefaults(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pool.Close()) })
	return func(addr string) (*datanoderpc.Client, error) {
		conn, err := pool.Conn(addr)
		if err != nil {
			return nil, err
		}
		return datanoderpc.NewClient(addr, conn, nil), nil
	}
}

// TestRemoteChannelOwnership: a data node served over loopback is told
// what to consume through the client, with the in-process node's results
// and errors; a ChannelApplier moves a channel between two remote nodes
// with the release handshake, and every row is stored once.
func TestRemoteChannelOwnership(t *testing.T) {
	s := stacktest.New(t)
	ctx := context.Background()
	v := s.VChannels[0]
	n1, a1 := serve(t, s)
	n2, a2 := serve(t, s)
	dial := dialer(t)
	c1, err := dial(a1)
	require.NoError(t, err)

	// Errors cross the hop with their codes and messages.
	err = c1.WatchChannel(ctx, v, 0)
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.ErrorContains(t, err, "positive epoch")
	err = c1.WatchChannel(ctx, "no-such-vchannel", 1)
	require.Error(t, err)
	require.Equal(t, n1.WatchChannel(ctx, "no-such-vchannel", 1).Error(), err.Error())

	// The applier's first handoff: fence, then watch on node 1 (retried:
	// idempotent).
	apply, err := placement.NewChannelApplier(placement.DefaultApplierConfig(),
		func(addr string) (placement.ChannelOwner, error) { return dial(addr) }, s.Data, nil)
	require.NoError(t, err)
	first := placement.Handoff{Move: placement.Move{Channel: v, To: 1, Reason: placement.ReasonNew}, Epoch: 1, ToAddress: a1}
	require.NoError(t, apply.Apply(ctx, first))
	require.NoError(t, apply.Apply(ctx, first))
	got, err := c1.ListChannels(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{v: 1}, got)
	require.Equal(t, n1.Channels(), c1.Channels())
	require.ErrorContains(t, c1.WatchChannel(ctx, v, 0), "positive")

	x := s.Insert(0, 100)
	// Node 1 reads the rows; they stay buffered (16 MiB buffers) until
	// the release syncs them.
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, apply.Apply(ctx, placement.Handoff{
		Move:  placement.Move{Channel: v, From: 1, To: 2, Reason: placement.ReasonBalance},
		Epoch: 2, FromAddress: a1, ToAddress: a2,
	}))
	info, _, _ := s.Data.Segment(context.Background(), x)
	require.EqualValues(t, 100, info.NumRows, "node 1 synced its buffer when it released the channel")
	require.Empty(t, n1.Channels())
	require.Equal(t, map[string]int64{v: 2}, n2.Channels())
	require.NoError(t, c1.ReleaseChannel(ctx, v), "releasing a channel not watched does nothing")

	s.Insert(100, 150)
	ids, ts := s.Seal()
	require.Eventually(t, func() bool { return s.FlushState(ids, s.VChannels, ts) }, 30*time.Second, 5*time.Millisecond)
	info, _, _ = s.Data.Segment(context.Background(), x)
	require.EqualValues(t, 150, info.NumRows, "every row once")
}

// TestStaleEpochCrossesTheWire: the data coordinator's refusal of a stale
// report is recognised after an RPC hop (it travels as Milvus code 500).
func TestStaleEpochCrossesTheWire(t *testing.T) {
	err := catalog.StaleEpoch("v0", 1, 2)
	back := rpc.ErrorOf("/strata.datacoord.v1.DataCoordService/Synced", rpc.StatusOf(fmt.Errorf("datacoord: %w", err)))
	require.True(t, catalog.IsStaleEpoch(back), "%v", back)
	require.Equal(t, "datacoord: "+err.Error(), back.Error())
	require.False(t, catalog.IsStaleEpoch(errors.New("other")))
	require.False(t, catalog.IsStaleEpoch(nil))
}
