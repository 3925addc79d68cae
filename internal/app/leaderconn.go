package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/rpc"
)

// leaderConn is a gRPC connection to whichever process currently leads the
// coordinator election: each call goes to the internal RPC address of the
// leader of the last term observed (membership Observe), through the
// pool's connection to it. When the coordinator fails over, the next call
// goes to the new one; while nobody leads a call fails at once with
// Unavailable (retriable), never waiting on a dead address.
type leaderConn struct {
	pool   *rpc.Pool
	leader atomic.Pointer[membership.Term]
}

var _ grpc.ClientConnInterface = (*leaderConn)(nil)

// followLeader starts following election name; the returned connection is
// usable at once (calls fail Unavailable until the first term is read).
// The goroutine stops when ctx ends.
func followLeader(ctx context.Context, reg *membership.Registry, name string, pool *rpc.Pool) (*leaderConn, error) {
	terms, err := reg.Observe(ctx, name)
	if err != nil {
		return nil, err
	}
	c := &leaderConn{pool: pool}
	first := make(chan struct{})
	go func() {
		seen := false
		for t := range terms {
			c.leader.Store(&t)
			if !seen {
				seen = true
				close(first)
			}
		}
		if !seen {
			close(first)
		}
	}()
	select {
	case <-first:
	case <-ctx.Done():
	}
	return c, nil
}

// dialCoordinator follows the elected coordinator over a pool of its own:
// what node and proxy processes call the coordinator through. close stops
// following and closes the pool.
func dialCoordinator(ctx context.Context, reg *membership.Registry, logger *slog.Logger) (*leaderConn, func() error, error) {
	pool, err := rpc.NewPool(rpc.ClientDefaults(), logger.With("client", "coordinator"))
	if err != nil {
		return nil, nil, err
	}
	fctx, stop := context.WithCancel(ctx)
	coord, err := followLeader(fctx, reg, ElectionCoordinator, pool)
	if err != nil {
		stop()
		return nil, nil, errors.Join(err, pool.Close())
	}
	return coord, func() error { stop(); return pool.Close() }, nil
}

// conn is the leader's connection, or an Unavailable status when nobody
// leads.
func (c *leaderConn) conn() (*grpc.ClientConn, error) {
	t := c.leader.Load()
	if t == nil || t.Revision == 0 {
		return nil, status.Error(codes.Unavailable, "no coordinator is elected")
	}
	cc, err := c.pool.Conn(t.Leader.Address)
	if err != nil {
		return nil, status.Error(codes.Unavailable, fmt.Sprintf("coordinator node %d at %s: %v", t.Leader.ID, t.Leader.Address, err))
	}
	return cc, nil
}

// Leader is the term the connection last observed (nil before the first).
func (c *leaderConn) Leader() *membership.Term { return c.leader.Load() }

// Invoke implements grpc.ClientConnInterface.
func (c *leaderConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	cc, err := c.conn()
	if err != nil {
		return err
	}
	return cc.Invoke(ctx, method, args, reply, opts...)
}

// NewStream implements grpc.ClientConnInterface.
func (c *leaderConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cc, err := c.conn()
	if err != nil {
		return nil, err
	}
	return cc.NewStream(ctx, desc, method, opts...)
}
