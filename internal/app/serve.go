package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/soheilhy/cmux"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
)

// apiServer serves gRPC and REST v2 on one listener. Each connection is
// classified once, by its first request: an HTTP/2 connection whose first
// headers carry content-type application/grpc goes to the native gRPC
// server; every other connection (REST over HTTP/1.1, or cleartext HTTP/2)
// goes to the REST http.Server.
//
// Splitting connections (rather than serving gRPC through grpc.Server's
// experimental http.Handler) keeps gRPC on its native transport, with its
// keepalive policy and graceful stop; in e2e BenchmarkTransport small
// searches were 10–30% slower through the http.Handler path, while the split
// measured the same as a plain gRPC listener.
type apiServer struct {
	root net.Listener
	mux  cmux.CMux
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
	m := cmux.New(lis)
	m.SetReadTimeout(sniffTimeout)
	grpcLis := m.MatchWithWriters(cmux.HTTP2MatchHeaderFieldPrefixSendSettings("content-type", "application/grpc"))
	httpLis := m.Match(cmux.Any())
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	return &apiServer{root: lis, mux: m, grpc: g, grpcLis: grpcLis, httpLis: httpLis, http: &http.Server{
		Handler:           rest,
		Protocols:         protocols,
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
		if err := a.mux.Serve(); err != nil && !a.closing.Load() {
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
	a.mux.Close()
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
