package rpc

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"google.golang.org/grpc"
)

// ErrPoolClosed is returned by Pool.Conn after Close.
var ErrPoolClosed = errors.New("rpc: pool closed")

// Pool keeps one client connection per peer address. A connection is made
// on first use (without I/O: gRPC connects, and reconnects, in the
// background) and lives until Close. Safe for concurrent use.
type Pool struct {
	cfg    ClientConfig
	logger *slog.Logger
	mu     sync.Mutex
	extra  []grpc.DialOption
	conns  map[string]*grpc.ClientConn
	closed bool
}

// NewPool returns an empty pool whose connections use cfg (DialOptions),
// then extra (a custom dialer in tests, say).
func NewPool(cfg ClientConfig, logger *slog.Logger, extra ...grpc.DialOption) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Pool{cfg: cfg, logger: logger, extra: extra, conns: map[string]*grpc.ClientConn{}}, nil
}

// Conn returns the connection to addr (host:port), making it on first use.
func (p *Pool) Conn(addr string) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrPoolClosed
	}
	if c, ok := p.conns[addr]; ok {
		return c, nil
	}
	c, err := grpc.NewClient("passthrough:///"+addr, append(DialOptions(p.cfg, p.logger), p.extra...)...)
	if err != nil {
		return nil, fmt.Errorf("rpc: connect %s: %w", addr, err)
	}
	p.conns[addr] = c
	return c, nil
}

// Close closes every connection; later calls of Conn fail. Idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	for addr, c := range p.conns {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("rpc: close %s: %w", addr, err))
		}
	}
	p.conns = nil
	return errors.Join(errs...)
}
