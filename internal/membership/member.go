package membership

import (
	"context"
	"fmt"
	"sync"

	"go.etcd.io/etcd/client/v3/concurrency"
)

// Member is a registered node's membership: its session key and the lease
// that keeps it. It is safe for concurrent use.
type Member struct {
	reg     *Registry
	session *concurrency.Session
	node    Node

	closeOnce sync.Once
	closeErr  error
}

// Node returns the member's node as registered.
func (m *Member) Node() Node { return m.node }

// ID returns the member's node ID.
func (m *Member) ID() int64 { return m.node.ID }

// Done is closed when the membership ends: the lease expired or its
// keep-alive stopped (the session is lost), or the member was closed.
func (m *Member) Done() <-chan struct{} { return m.session.Done() }

// Run keeps the membership until ctx ends, then leaves (Close) and returns
// Close's error; it returns ErrSessionLost at once if the lease is lost
// first. The lease is kept alive by the Registry's etcd client whether Run
// is called or not; Run is the owner's way to learn of the loss.
func (m *Member) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return m.Close()
	case <-m.session.Done():
		select {
		case <-ctx.Done():
			return m.Close()
		default:
		}
		m.reg.logger.Warn("membership: session lost", "role", m.node.Role, "node_id", m.node.ID, "lease", m.node.Lease)
		return fmt.Errorf("%w: %s node %d (lease %x)", ErrSessionLost, m.node.Role, m.node.ID, m.node.Lease)
	}
}

// Close leaves the cluster: it revokes the lease, which deletes the session
// key and every election candidacy of the member at once. It is
// idempotent; on a lost session, or once the etcd client is closed, it
// only stops the keep-alive.
func (m *Member) Close() error {
	m.closeOnce.Do(func() {
		if m.reg.clientClosed() {
			// Closing the client abandoned the lease; it expires on its own.
			m.session.Orphan()
			return
		}
		select {
		case <-m.session.Done():
			// Already lost: nothing to revoke.
			m.session.Orphan()
			return
		default:
		}
		if err := m.session.Close(); err != nil {
			m.closeErr = fmt.Errorf("membership: leave: %s node %d: %w", m.node.Role, m.node.ID, err)
			return
		}
		m.reg.logger.Info("membership: left", "role", m.node.Role, "node_id", m.node.ID)
	})
	return m.closeErr
}
