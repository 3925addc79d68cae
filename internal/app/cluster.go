package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

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
	// Address is the internal RPC address other nodes reach this one at,
	// stored in its session ("": the internal listener's address, else the
	// API listener's).
	Address string `json:"address"`
	// APIAddress is the Milvus API address the session advertises to
	// clients, e.g. in a standby's refusal ("": the API listener's).
	APIAddress string `json:"apiAddress"`
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

// clusterNode is a process's membership: its session, and once it leads,
// its term and the fenced meta store the components write through.
type clusterNode struct {
	reg    *membership.Registry
	member *membership.Member
	el     *membership.Election
	store  *etcd.Store
	logger *slog.Logger
	// lead is nil while the process waits as a standby.
	lead atomic.Pointer[leadership]

	fencedOnce sync.Once
	fenced     chan struct{} // closed when etcd refused a write: the term ended
}

// leadership is a term the process leads.
type leadership struct {
	term membership.Term
	meta *etcd.Fenced
}

// joinCluster registers the process's session on the meta store's etcd.
// The caller closes the returned node.
// role is the session's role; internal and api are the listeners'
// addresses (internal "" when the process serves no internal RPC).
func joinCluster(ctx context.Context, cfg Config, meta metastore.KV, role, internal, api string, logger *slog.Logger) (*clusterNode, error) {
	store, ok := meta.(*etcd.Store)
	if !ok {
		return nil, fmt.Errorf("app: cluster membership needs the etcd meta store, not %T", meta)
	}
	reg, err := membership.New(store.Client(), cfg.Cluster.Membership, logger)
	if err != nil {
		return nil, err
	}
	address := internal
	switch {
	case cfg.Cluster.Address != "":
		address = cfg.Cluster.Address
	case address == "":
		address = api
	}
	if cfg.Cluster.APIAddress != "" {
		api = cfg.Cluster.APIAddress
	}
	var opts []membership.Option
	if api != "" {
		opts = append(opts, membership.WithAPI(api))
	}
	member, err := reg.Register(ctx, role, address, opts...)
	if err != nil {
		return nil, fmt.Errorf("app: join cluster: %w", err)
	}
	el, err := member.Election(ElectionCoordinator)
	if err != nil {
		return nil, errors.Join(err, member.Close())
	}
	return &clusterNode{reg: reg, member: member, el: el, store: store, logger: logger, fenced: make(chan struct{})}, nil
}

// campaign blocks until the process leads the coordinator election (a
// standby waits here), then returns the meta store fenced by its term.
func (n *clusterNode) campaign(ctx context.Context) (metastore.KV, error) {
	if cur, err := n.reg.Leader(ctx, ElectionCoordinator); err == nil {
		n.logger.Info("standby: another node is the coordinator; waiting for it to leave or die",
			"node_id", n.member.ID(), "leader_id", cur.Leader.ID, "leader_address", cur.Leader.API)
	}
	term, err := n.el.Campaign(ctx)
	if err != nil {
		return nil, fmt.Errorf("app: campaign for coordinator: %w", err)
	}
	meta, err := n.store.Fenced(etcd.Fence{Key: term.Key, Revision: term.Revision}, func() {
		n.fencedOnce.Do(func() { close(n.fenced) })
	})
	if err != nil {
		return nil, err
	}
	n.lead.Store(&leadership{term: term, meta: meta})
	n.logger.Info("elected coordinator", "node_id", n.member.ID(), "role", n.member.Node().Role, "term", term.Revision)
	return meta, nil
}

// watch returns ErrSteppedDown as soon as the process's term ends: its
// session is lost, etcd refused a fenced write, or the election shows
// another term. It returns nil when ctx ends. Call it once the process
// leads.
func (n *clusterNode) watch(ctx context.Context) error {
	l := n.lead.Load()
	if l == nil {
		return errors.New("app: cluster watch before the election was won")
	}
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
			return fmt.Errorf("%w: etcd refused node %d's write (term %d ended)", ErrSteppedDown, n.member.ID(), l.term.Revision)
		case t, ok := <-terms:
			if !ok {
				return nil
			}
			if t.Revision != l.term.Revision {
				return fmt.Errorf("%w: node %d's term %d ended (now term %d of node %d)",
					ErrSteppedDown, n.member.ID(), l.term.Revision, t.Revision, t.Leader.ID)
			}
		}
	}
}

// close leaves the cluster: the lease is revoked, so a standby leads at
// once instead of after the session TTL.
func (n *clusterNode) close() error {
	var err error
	if l := n.lead.Load(); l != nil {
		err = l.meta.Close()
	}
	return errors.Join(err, n.member.Close())
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
	// Term is the fencing revision of its term as coordinator (0 while a
	// standby).
	Term int64 `json:"term"`
	// LeaderID is the coordinator's node ID, as a standby sees it (0: none
	// or this node).
	LeaderID int64 `json:"leaderId,omitempty"`
}

// detail describes the node for /healthz/detail.
func (n *clusterNode) detail(ctx context.Context) *clusterDetail {
	if n == nil {
		return nil
	}
	node := n.member.Node()
	d := &clusterDetail{NodeID: node.ID, Role: node.Role, Address: node.Address}
	l := n.lead.Load()
	if l == nil {
		if t, err := n.reg.Leader(ctx, ElectionCoordinator); err == nil {
			d.LeaderID = t.Leader.ID
		}
		return d
	}
	d.Term = l.term.Revision
	d.Coordinator = !l.meta.IsFenced()
	select {
	case <-n.member.Done():
		d.Coordinator = false
	default:
	}
	return d
}

// standing is the node's state for /healthz: "standby" while it waits to
// lead, "" otherwise.
func (n *clusterNode) standing() string {
	if n != nil && n.lead.Load() == nil {
		return "standby"
	}
	return ""
}

// switchHandler answers with next once it is set, and with first until
// then: a standby's metrics port answers /healthz while it waits and the
// full set of endpoints once it leads, on one listener.
type switchHandler struct {
	first http.Handler
	next  atomic.Pointer[http.Handler]
}

// ServeHTTP implements http.Handler.
func (h *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if next := h.next.Load(); next != nil {
		(*next).ServeHTTP(w, r)
		return
	}
	h.first.ServeHTTP(w, r)
}

// serveStandby answers the metrics port while the process is not ready:
// /healthz and /healthz/detail as usual (503, "standby" or "starting"),
// every other path 503.
func (s *Server) serveStandby(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz/detail":
		s.serveHealthDetail(w, r)
	default:
		state := s.cluster.Load().standing()
		if state == "" {
			state = "starting"
		}
		http.Error(w, state, http.StatusServiceUnavailable)
	}
}
