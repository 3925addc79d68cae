package rpc_test

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/rpc"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
)

// scripted is a query-node service whose GetLoadState fails with fail(n)
// on call n (1-based) until fail returns nil; it records whether each call
// had a deadline.
type scripted struct {
	querynodev1.UnimplementedQueryNodeServiceServer
	calls       atomic.Int32
	hadDeadline atomic.Bool
	fail        func(n int32) error
}

func (s *scripted) GetLoadState(ctx context.Context, _ *querynodev1.GetLoadStateRequest) (*querynodev1.GetLoadStateResponse, error) {
	n := s.calls.Add(1)
	_, ok := ctx.Deadline()
	s.hadDeadline.Store(ok)
	if err := s.fail(n); err != nil {
		return nil, err
	}
	return &querynodev1.GetLoadStateResponse{Loaded: true, Progress: 100}, nil
}

func (s *scripted) Search(context.Context, *querynodev1.SearchRequest) (*querynodev1.SearchResponse, error) {
	panic("search exploded")
}

func fastClient() rpc.ClientConfig {
	c := rpc.ClientDefaults()
	c.Timeout = 5 * time.Second
	c.BackoffBase, c.BackoffMax = time.Millisecond, 4*time.Millisecond
	return c
}

// serve starts svc on an in-memory listener and returns a pool dialing it.
func serve(t *testing.T, svc querynodev1.QueryNodeServiceServer, cfg rpc.ClientConfig) querynodev1.QueryNodeServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	querynodev1.RegisterQueryNodeServiceServer(srv, svc)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	pool, err := rpc.NewPool(cfg, slog.New(slog.DiscardHandler),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, pool.Close())
		require.NoError(t, pool.Close()) // idempotent
		srv.Stop()
		require.NoError(t, <-done)
	})
	conn, err := pool.Conn("bufconn")
	require.NoError(t, err)
	again, err := pool.Conn("bufconn")
	require.NoError(t, err)
	require.Same(t, conn, again)
	return querynodev1.NewQueryNodeServiceClient(conn)
}

func TestClientRetries(t *testing.T) {
	notReady := errcode.New(errcode.ServiceNotReady, "query node is starting")
	for _, tc := range []struct {
		name      string
		fail      func(n int32) error
		wantCalls int32
		wantCode  int32 // 0: success
	}{
		{"succeeds at once", func(int32) error { return nil }, 1, 0},
		{"retriable then ok", func(n int32) error {
			if n < 3 {
				return notReady
			}
			return nil
		}, 3, 0},
		{"retriable every time: bounded", func(int32) error { return notReady }, 4, errcode.ServiceNotReady},
		{"not retriable", func(int32) error {
			return errcode.New(errcode.CollectionNotFound, "collection not found[collection=1]")
		}, 1, errcode.CollectionNotFound},
		{"rate limit is the client's to retry", func(int32) error { return errcode.New(errcode.RateLimit, "rate limit exceeded") }, 1, errcode.RateLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &scripted{fail: tc.fail}
			c := serve(t, svc, fastClient())
			resp, err := c.GetLoadState(context.Background(), &querynodev1.GetLoadStateRequest{CollectionId: 1})
			require.Equal(t, tc.wantCalls, svc.calls.Load())
			require.True(t, svc.hadDeadline.Load(), "the client sets a deadline")
			if tc.wantCode == 0 {
				require.NoError(t, err)
				require.True(t, resp.GetLoaded())
				return
			}
			require.Equal(t, tc.wantCode, errcode.CodeOf(err))
			require.Equal(t, tc.fail(1).Error(), err.Error())
		})
	}
}

// TestNoRetry: a call sent with rpc.NoRetry is tried once, even when it
// fails retriably.
func TestNoRetry(t *testing.T) {
	svc := &scripted{fail: func(int32) error { return errcode.New(errcode.ServiceNotReady, "query node is starting") }}
	c := serve(t, svc, fastClient())
	_, err := c.GetLoadState(context.Background(), &querynodev1.GetLoadStateRequest{CollectionId: 1}, rpc.NoRetry())
	require.Equal(t, errcode.ServiceNotReady, errcode.CodeOf(err))
	require.EqualValues(t, 1, svc.calls.Load())
}

// TestRetryStopsAtDeadline: a retriable failure is not retried past the
// call's deadline.
func TestRetryStopsAtDeadline(t *testing.T) {
	cfg := fastClient()
	cfg.MaxAttempts = 1000
	cfg.BackoffBase, cfg.BackoffMax = 20*time.Millisecond, 20*time.Millisecond
	svc := &scripted{fail: func(int32) error { return errcode.New(errcode.ServiceNotReady, "not ready") }}
	c := serve(t, svc, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetLoadState(ctx, &querynodev1.GetLoadStateRequest{})
	require.Equal(t, errcode.ServiceNotReady, errcode.CodeOf(err))
	require.Less(t, time.Since(start), 2*time.Second)
	require.Less(t, svc.calls.Load(), int32(1000))
}

// TestDeadlineInAnAttemptKeepsTheFailure: when the deadline ends a retry
// while it runs (not in a backoff), the call still fails with the failure
// the retries were for, not with the deadline.
func TestDeadlineInAnAttemptKeepsTheFailure(t *testing.T) {
	cfg := fastClient()
	svc := &scripted{fail: func(n int32) error {
		if n > 1 {
			time.Sleep(300 * time.Millisecond) // past the caller's deadline
		}
		return errcode.New(errcode.ServiceNotReady, "not ready")
	}}
	c := serve(t, svc, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := c.GetLoadState(ctx, &querynodev1.GetLoadStateRequest{})
	require.Equal(t, errcode.ServiceNotReady, errcode.CodeOf(err), "%v", err)
	require.EqualValues(t, 2, svc.calls.Load())
}

func TestServerRecoversPanic(t *testing.T) {
	c := serve(t, &scripted{fail: func(int32) error { return nil }}, fastClient())
	_, err := c.Search(context.Background(), &querynodev1.SearchRequest{})
	var re *rpc.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, codes.Internal, re.Code)
	require.Contains(t, err.Error(), "search exploded")
	require.Equal(t, errcode.Unexpected, errcode.CodeOf(err))
}

// TestServerRequiresDeadline calls with a plain gRPC client, which sets no
// deadline: the server refuses the call before the handler runs.
func TestServerRequiresDeadline(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	svc := &scripted{fail: func(int32) error { return nil }}
	querynodev1.RegisterQueryNodeServiceServer(srv, svc)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	defer func() { srv.Stop(); require.NoError(t, <-done) }()
	conn, err := grpc.NewClient("passthrough:///bufconn", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	require.NoError(t, err)
	defer func() { require.NoError(t, conn.Close()) }()
	_, err = querynodev1.NewQueryNodeServiceClient(conn).GetLoadState(context.Background(), &querynodev1.GetLoadStateRequest{})
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	require.Contains(t, status.Convert(err).Message(), "without a deadline")
	require.Zero(t, svc.calls.Load())
}

// TestUnreachablePeer: nothing listens at the address; the client tries
// MaxAttempts times and reports Milvus code 2, service unavailable.
func TestUnreachablePeer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	cfg := fastClient()
	cfg.MaxAttempts = 3
	pool, err := rpc.NewPool(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, pool.Close()) }()
	conn, err := pool.Conn(addr)
	require.NoError(t, err)
	_, err = querynodev1.NewQueryNodeServiceClient(conn).GetLoadState(context.Background(), &querynodev1.GetLoadStateRequest{})
	require.Equal(t, rpc.CodeServiceUnavailable, errcode.CodeOf(err))
	require.Contains(t, err.Error(), "service unavailable")
	require.NoError(t, pool.Close())
	_, err = pool.Conn(addr)
	require.ErrorIs(t, err, rpc.ErrPoolClosed)
}

func TestBackoff(t *testing.T) {
	cfg := rpc.ClientDefaults()
	for n := 1; n <= 10; n++ {
		ceil := min(cfg.BackoffBase<<(n-1), cfg.BackoffMax)
		for range 50 {
			d := rpc.Backoff(cfg, n)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.Less(t, d, ceil)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, rpc.ClientDefaults().Validate())
	require.NoError(t, rpc.ServerDefaults().Validate())
	bad := rpc.ClientDefaults()
	bad.MaxAttempts = 0
	bad.BackoffMax = time.Millisecond
	require.Error(t, bad.Validate())
	require.Error(t, rpc.ServerConfig{}.Validate())
}
