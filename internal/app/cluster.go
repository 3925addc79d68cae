package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/etcd"
)

// Membership names the standalone process uses.
const (
	// RoleStandalone is the session role of a standalone process (every
	// role in one process, Milvus's "mixcoord" and more).
	RoleStandalone = "standalone"
	// ElectionCoordinator is the election every coordinator campaigns in;
	// its leader is the one process whose meta-store writes succeed.
	ElectionCoordinator = "coordinator"
)

// ErrSteppedDown is returned by Run when the process stopped leading the
// coordinator election (its session expired, or a newer leader was
// elected): it stops rather than write as a deposed coordinator.
var ErrSteppedDown = errors.New("app: no longer the coordinator; stepped down")

// Cluster configures cluster membership (docs/design/cluster.md). It takes
// effect only when the meta store is etcd (Engines.Meta): the process then
// registers a session (role "standalone") with a never-reused node ID,
// campaigns to be the coordinator, and writes its metadata through a meta
// store fenced by its term. A process that does not lead waits as a
// standby. With the embedded meta store these settings are ignored.
type Cluster struct {
	// Enabled turns membership on when the meta store is etcd. Default
	// true: two processes on one etcd without it would both write as the
	// coordinator.
	Enabled bool `json:"enabled"`
	// Address is the address other nodes reach this one at, stored in its
	// session ("": the API listener's address).
	Address string `json:"address"`
	// Membership configures the sessions (key root, session TTL, request
	// timeout).
	Membership membership.Config `json:"membership"`
}

// defaultCluster returns the default Cluster.
func defaultCluster() Cluster {
	return Cluster{Enabled: true, Membership: membership.Defaults()}
}

// Validate checks the membership settings.
func (c Cluster) Validate() error {
	if err := c.Membership.Validate(); err != nil {
		return fmt.Errorf("app: cluster.membership: %w", err)
	}
	return nil
}

// clusterOn reports whether the configuration runs membership.
func (c Config) clusterOn() bool {
	return c.Cluster.Enabled && c.Engines.Meta.Type == EngineEtcd
}

// clusterNode is a process's membership while it leads: its session, its
// term, and the fenced meta store the components write through.
type clusterNode struct {
	reg    *membership.Registry
	member *membership.Member
	term   membership.Term
	meta   *etcd.Fenced

	fencedOnce sync.Once
	fenced     chan struct{} // closed when etcd refused a write: the term ended
}

// joinCluster registers the process's session on the meta store's etcd
// and campaigns until it leads the coordinator election (a standby waits
// here). The caller closes the returned node.
func joinCluster(ctx context.Context, cfg Config, meta metastore.KV, address string, logger *slog.Logger) (*clusterNode, error) {
	store, ok := meta.(*etcd.Store)
	if !ok {
		return nil, fmt.Errorf("app: cluster membership needs the etcd meta store, not %T", meta)
	}
	reg, err := membership.New(store.Client(), cfg.Cluster.Membership, logger)
	if err != nil {
		return nil, err
	}
	if cfg.Cluster.Address != "" {
		address = cfg.Cluster.Address
	}
	member, err := reg.Register(ctx, RoleStandalone, address)
	if err != nil {
		return nil, fmt.Errorf("app: join cluster: %w", err)
	}
	n := &clusterNode{reg: reg, member: member, fenced: make(chan struct{})}
	el, err := member.Election(ElectionCoordinator)
	if err != nil {
		return nil, errors.Join(err, member.Close())
	}
	if cur, err := reg.Leader(ctx, ElectionCoordinator); err == nil {
		logger.Info("standby: another node is the coordinator; waiting for it to leave or die",
			"node_id", member.ID(), "leader_id", cur.Leader.ID, "leader_address", cur.Leader.Address)
	}
	n.term, err = el.Campaign(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("app: campaign for coordinator: %w", err), member.Close())
	}
	n.meta, err = store.Fenced(etcd.Fence{Key: n.term.Key, Revision: n.term.Revision}, func() {
		n.fencedOnce.Do(func() { close(n.fenced) })
	})
	if err != nil {
		return nil, errors.Join(err, member.Close())
	}
	logger.Info("elected coordinator", "node_id", member.ID(), "role", RoleStandalone, "term", n.term.Revision)
	return n, nil
}

// watch returns ErrSteppedDown as soon as the process's term ends: its
// session is lost, etcd refused a fenced write, or the election shows
// another term. It returns nil when ctx ends.
func (n *clusterNode) watch(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	terms, err := n.reg.Observe(ctx, ElectionCoordinator)
	if err != nil {
		return err
	}
	defer func() {
		cancel()
		for range terms { // drain until the observer stops
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.member.Done():
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%w: node %d's session was lost", ErrSteppedDown, n.member.ID())
		case <-n.fenced:
			return fmt.Errorf("%w: etcd refused node %d's write (term %d ended)", ErrSteppedDown, n.member.ID(), n.term.Revision)
		case t, ok := <-terms:
			if !ok {
				return nil
			}
			if t.Revision != n.term.Revision {
				return fmt.Errorf("%w: node %d's term %d ended (now term %d of node %d)",
					ErrSteppedDown, n.member.ID(), n.term.Revision, t.Revision, t.Leader.ID)
			}
		}
	}
}

// close leaves the cluster: the lease is revoked, so a standby leads at
// once instead of after the session TTL.
func (n *clusterNode) close() error {
	return errors.Join(n.meta.Close(), n.member.Close())
}

// clusterDetail is the membership part of /healthz/detail.
type clusterDetail struct {
	// NodeID is the process's cluster-unique, never reused node ID.
	NodeID int64 `json:"nodeId"`
	// Role is its session role.
	Role string `json:"role"`
	// Address is the address in its session.
	Address string `json:"address"`
	// Coordinator is true while it leads the coordinator election.
	Coordinator bool `json:"coordinator"`
	// Term is the fencing revision of its term as coordinator.
	Term int64 `json:"term"`
}

// detail describes the node for /healthz/detail.
func (n *clusterNode) detail() *clusterDetail {
	if n == nil {
		return nil
	}
	node := n.member.Node()
	lead := !n.meta.IsFenced()
	select {
	case <-n.member.Done():
		lead = false
	default:
	}
	return &clusterDetail{NodeID: node.ID, Role: node.Role, Address: node.Address, Coordinator: lead, Term: n.term.Revision}
}
