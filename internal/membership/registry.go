package membership

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Well-known roles of a Strata cluster (issue 18's `strata run ROLE`).
const (
	RoleCoordinator = "coordinator"
	RoleProxy       = "proxy"
	RoleDataNode    = "datanode"
	RoleQueryNode   = "querynode"
)

// Errors of the package.
var (
	// ErrSessionLost is returned by Member.Run when the member's lease
	// expired (or its keep-alive stopped) before the member left.
	ErrSessionLost = errors.New("membership: session lost")
	// ErrNoLeader is returned by Election.Leader when nobody leads.
	ErrNoLeader = errors.New("membership: no leader")
	// ErrNotLeader is returned by Campaign when the candidate's key vanished
	// (its lease expired) before it could lead.
	ErrNotLeader = errors.New("membership: not leader")
)

// Node is one live node, as stored in its session key.
type Node struct {
	// ID is the node's cluster-unique, never reused ID (from 1).
	ID int64 `json:"id"`
	// Role is the node's role, e.g. RoleQueryNode.
	Role string `json:"role"`
	// Address is where the node serves its internal RPC.
	Address string `json:"address"`
	// API is where clients reach the node's Milvus API (gRPC and REST), for
	// the roles that serve it (standalone, coordinator, proxy); "" for the
	// others.
	API string `json:"api,omitempty"`
	// Lease is the etcd lease the node's keys are attached to.
	Lease int64 `json:"lease"`
	// Revision is the etcd create revision of the node's session key: it
	// orders registrations. The session key's value omits it (it is the
	// key's own create revision); candidate keys carry it.
	Revision int64 `json:"revision,omitempty"`
}

// Registry reads and writes the membership keys over an etcd client that
// the caller owns. It holds no goroutines or resources of its own, so it
// has no Close: members, elections and watches are closed or cancelled
// individually. It is safe for concurrent use.
type Registry struct {
	client *clientv3.Client
	cfg    Config
	logger *slog.Logger
}

// New returns a Registry over client, which the caller keeps owning (and
// has checked is reachable, as metastore/etcd.Open does). Closing the
// client without closing the members first is, to the rest of the
// cluster, a crash: their sessions expire after their TTL.
func New(client *clientv3.Client, cfg Config, logger *slog.Logger) (*Registry, error) {
	if client == nil {
		return nil, errors.New("membership: nil etcd client")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Registry{client: client, cfg: cfg.withDefaults(), logger: logger}, nil
}

// bound limits a request to cfg.RequestTimeout (or ctx's sooner deadline).
func (r *Registry) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.cfg.RequestTimeout)
}

// clientClosed reports whether the etcd client was closed.
func (r *Registry) clientClosed() bool { return r.client.Ctx().Err() != nil }

func (r *Registry) idKey() string { return r.cfg.Root + "session/id" }

func (r *Registry) rolePrefix(role string) string { return r.cfg.Root + "session/node/" + role + "/" }

func (r *Registry) nodeKey(role string, id int64) string {
	return r.rolePrefix(role) + strconv.FormatInt(id, 10)
}

func (r *Registry) electionPrefix(name string) string {
	return r.cfg.Root + "session/election/" + name
}

// validName reports whether s may be a role or an election name: it is a
// single key segment.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// An Option sets a field of the session a node registers.
type Option func(*Node)

// WithAPI records the address of the node's Milvus API (Node.API).
func WithAPI(addr string) Option { return func(n *Node) { n.API = addr } }

// Register joins the cluster as a node of role serving its internal RPC at
// address: it grants a lease of Config.SessionTTL, keeps it alive,
// allocates the next node ID and writes the session key in one
// transaction. The caller owns the returned Member and must Run or Close
// it.
func (r *Registry) Register(ctx context.Context, role, address string, opts ...Option) (*Member, error) {
	if !validName(role) {
		return nil, fmt.Errorf("membership: invalid role %q", role)
	}
	gctx, cancel := r.bound(ctx)
	grant, err := r.client.Grant(gctx, r.cfg.ttlSeconds())
	cancel()
	if err != nil {
		return nil, fmt.Errorf("membership: register %s: grant lease: %w", role, err)
	}
	sess, err := concurrency.NewSession(r.client, concurrency.WithLease(grant.ID), concurrency.WithTTL(int(r.cfg.ttlSeconds())))
	if err != nil {
		r.revoke(grant.ID)
		return nil, fmt.Errorf("membership: register %s: keep lease alive: %w", role, err)
	}
	node, err := r.claim(ctx, role, address, grant.ID, opts)
	if err != nil {
		_ = sess.Close()
		return nil, err
	}
	r.logger.Info("membership: registered", "role", role, "node_id", node.ID, "address", address, "lease", int64(grant.ID))
	return &Member{reg: r, session: sess, node: node}, nil
}

// claim allocates the next node ID and writes the session key in one
// transaction guarded by the counter's mod revision, retrying while
// concurrent registrations win the race.
func (r *Registry) claim(ctx context.Context, role, address string, lease clientv3.LeaseID, opts []Option) (Node, error) {
	ctx, cancel := r.bound(ctx)
	defer cancel()
	for {
		resp, err := r.client.Get(ctx, r.idKey())
		if err != nil {
			return Node{}, fmt.Errorf("membership: register %s: read id counter: %w", role, err)
		}
		var last, modRev int64
		if len(resp.Kvs) == 1 {
			kv := resp.Kvs[0]
			if last, err = strconv.ParseInt(string(kv.Value), 10, 64); err != nil || last < 0 {
				return Node{}, fmt.Errorf("membership: id counter %s holds %q, not a node ID", r.idKey(), kv.Value)
			}
			modRev = kv.ModRevision
		}
		node := Node{ID: last + 1, Role: role, Address: address, Lease: int64(lease)}
		for _, o := range opts {
			o(&node)
		}
		val, err := json.Marshal(node)
		if err != nil {
			return Node{}, err
		}
		key := r.nodeKey(role, node.ID)
		txn, err := r.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(r.idKey()), "=", modRev),
				clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(r.idKey(), strconv.FormatInt(node.ID, 10)),
				clientv3.OpPut(key, string(val), clientv3.WithLease(lease))).
			Commit()
		if err != nil {
			return Node{}, fmt.Errorf("membership: register %s: %w", role, err)
		}
		if txn.Succeeded {
			node.Revision = txn.Header.Revision
			return node, nil
		}
		// Another node took this ID first; read the counter again.
	}
}

// revoke revokes a lease, bounded by the request timeout, ignoring errors
// (an unrevoked lease expires on its own).
func (r *Registry) revoke(id clientv3.LeaseID) {
	ctx, cancel := r.bound(context.Background())
	defer cancel()
	_, _ = r.client.Revoke(ctx, id)
}

// List returns the live nodes of role, ordered by ID.
func (r *Registry) List(ctx context.Context, role string) ([]Node, error) {
	nodes, _, err := r.list(ctx, role)
	return nodes, err
}

// list returns the live nodes of role and the revision they were read at.
func (r *Registry) list(ctx context.Context, role string) ([]Node, int64, error) {
	if !validName(role) {
		return nil, 0, fmt.Errorf("membership: invalid role %q", role)
	}
	ctx, cancel := r.bound(ctx)
	defer cancel()
	resp, err := r.client.Get(ctx, r.rolePrefix(role), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("membership: list %s: %w", role, err)
	}
	nodes := make([]Node, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		n, err := decodeNode(kv.Key, kv.Value, kv.CreateRevision)
		if err != nil {
			return nil, 0, err
		}
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	return nodes, resp.Header.Revision, nil
}

// decodeNode parses a session key's value; createRev is the key's create
// revision (0 for a candidate key, whose value carries it).
func decodeNode(key, val []byte, createRev int64) (Node, error) {
	var n Node
	if err := json.Unmarshal(val, &n); err != nil {
		return Node{}, fmt.Errorf("membership: key %s: bad node value: %w", key, err)
	}
	if createRev != 0 {
		n.Revision = createRev
	}
	return n, nil
}
