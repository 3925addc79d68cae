package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
)

// apiServer serves gRPC and REST v2 on one listener, splitting connections
// by their first bytes: a connection that opens with the HTTP/2 preface is
// gRPC (every Milvus SDK speaks cleartext HTTP/2 with prior knowledge) and
// goes to the native gRPC server; anything else is HTTP/1.x and goes to the
// REST server. REST over cleartext HTTP/2 is therefore not served (such a
// request reaches gRPC and is refused with HTTP 415); REST clients use HTTP/1.1.
//
// Splitting connections (rather than serving gRPC through grpc.Server's
// experimental http.Handler) keeps gRPC on its native transport, with its
// keepalive policy and graceful stop; in e2e BenchmarkTransport small
// searches were 10–30% slower through the http.Handler path, while the split
// measured the same as a plain gRPC listener. Matching on the preface alone
// (not on content-type) means the split never writes to a connection: a
// matcher that sends SETTINGS to read the headers breaks HTTP/2 clients that
// are not gRPC, which then acknowledge SETTINGS the real server never sent.
// The split is connSplitter's.
type apiServer struct {
	root net.Listener
	mux  *connSplitter
	grpc *grpc.Server
	http *http.Server
	grpcLis,
	httpLis net.Listener
	closing atomic.Bool // set by shutdown: accept errors after it are expected
}

// sniffTimeout bounds how long a new connection may take to send its first
// request before it is dropped.
const sniffTimeout = 10 * time.Second

func newAPIServer(lis net.Listener, g *grpc.Server, rest http.Handler) *apiServer {
	m := newConnSplitter(lis, sniffTimeout)
	return &apiServer{root: lis, mux: m, grpc: g, grpcLis: m.h2, httpLis: m.h1, http: &http.Server{
		Handler:           rest,
		ReadHeaderTimeout: 30 * time.Second,
	}}
}

// serve blocks until shutdown.
func (a *apiServer) serve() error {
	var g errgroup.Group
	g.Go(func() error {
		if err := a.grpc.Serve(a.grpcLis); err != nil && !a.closing.Load() {
			return fmt.Errorf("app: grpc: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if err := a.http.Serve(a.httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) && !a.closing.Load() {
			return fmt.Errorf("app: rest: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if err := a.mux.serve(); err != nil && !a.closing.Load() {
			return fmt.Errorf("app: listener: %w", err)
		}
		return nil
	})
	return g.Wait()
}

// shutdown stops accepting, lets running requests finish for up to grace,
// then closes every connection.
func (a *apiServer) shutdown(grace time.Duration) {
	a.closing.Store(true)
	_ = a.root.Close()
	stopped := make(chan struct{})
	go func() { a.grpc.GracefulStop(); close(stopped) }()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := a.http.Shutdown(ctx); err != nil {
		_ = a.http.Close()
	}
	select {
	case <-stopped:
	case <-ctx.Done():
		a.grpc.Stop()
		<-stopped
	}
}
