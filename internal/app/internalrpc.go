package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rpc"
)

// internalServer serves Strata's internal RPC services (docs/design/rpc.md)
// on Config.InternalAddr: today the query node's QueryNodeService, so that
// a proxy in another process can read through this server's query node.
type internalServer struct {
	lis net.Listener
	srv *grpc.Server
}

// servedQueryNode is the query node as the internal server serves it: the
// proxy's roles (metered, as the in-process proxy calls them) and the
// node's own LoadVChannels, a shard leader's load, and BM25Stats.
type servedQueryNode struct {
	proxy.QueryServer
	node *querynode.Node
}

// BM25Stats returns the node's statistics of a full-text search, which a
// query coordinator sums over a replica's shard leaders.
func (s servedQueryNode) BM25Stats(ctx context.Context, req *plan.Search) (*plan.BM25Stats, error) {
	return s.node.BM25Stats(ctx, req)
}

// LoadVChannels loads some of a collection's vchannels on the node.
func (s servedQueryNode) LoadVChannels(ctx context.Context, collectionID int64, partitions []int64, vchannels []string) error {
	return s.node.LoadVChannels(ctx, collectionID, partitions, vchannels)
}

// newInternalServer serves the services register adds over the
// in-process components.
func newInternalServer(lis net.Listener, cfg rpc.ServerConfig, logger *slog.Logger, register func(*grpc.Server),
) (*internalServer, error) {
	srv, err := rpc.NewServer(cfg, logger.With("server", "internal"))
	if err != nil {
		return nil, err
	}
	register(srv)
	return &internalServer{lis: lis, srv: srv}, nil
}

// serve blocks until shutdown.
func (s *internalServer) serve() error {
	if err := s.srv.Serve(s.lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("app: internal rpc: %w", err)
	}
	return nil
}

// shutdown lets calls in flight finish for up to grace, then stops.
func (s *internalServer) shutdown(grace time.Duration) {
	done := make(chan struct{})
	go func() {
		s.srv.GracefulStop()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.srv.Stop()
		<-done
	}
}
