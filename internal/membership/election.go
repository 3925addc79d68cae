package membership

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Term is one leader's tenure in an election.
type Term struct {
	// Leader is the leading node.
	Leader Node
	// Key is the leader's candidate key (absolute etcd key).
	Key string
	// Revision is the create revision of Key: the term's fencing token.
	// Every later term has a larger revision, so a component that
	// remembers the largest revision it obeyed rejects a stale leader.
	Revision int64
}

// Election is one member's candidacy in a named election (for example
// "coordinator"). Campaign and Resign must not be called concurrently;
// Leader and Observe may be called from any goroutine.
type Election struct {
	m    *Member
	name string
	el   *concurrency.Election

	mu sync.Mutex // serialises Campaign and Resign
}

// Election returns the member's candidacy in election name (a role-like
// name). Its keys live on the member's lease: when the member dies or
// leaves, its candidacy and any leadership end with it.
func (m *Member) Election(name string) (*Election, error) {
	if !validName(name) {
		return nil, fmt.Errorf("membership: invalid election name %q", name)
	}
	return &Election{m: m, name: name, el: concurrency.NewElection(m.session, m.reg.electionPrefix(name))}, nil
}

// Campaign blocks until the member leads the election, then returns its
// term. It returns ctx's error if ctx ends first (withdrawing the
// candidacy), and ErrSessionLost if the member's session is lost while it
// waits. A leader stays leader until it resigns or its session is lost
// (Member.Done).
func (e *Election) Campaign(ctx context.Context) (Term, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	val, err := json.Marshal(e.m.node)
	if err != nil {
		return Term{}, err
	}
	// Stop waiting when the session dies: a dead candidate never leads.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-e.m.Done():
			cancel(ErrSessionLost)
		case <-stop:
		}
	})
	defer wg.Wait()
	defer close(stop)

	if err := e.el.Campaign(ctx, string(val)); err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return Term{}, fmt.Errorf("membership: campaign %s: %w", e.name, cause)
		}
		return Term{}, fmt.Errorf("membership: campaign %s: %w", e.name, err)
	}
	// concurrency.Election returns once every older candidate is gone; make
	// sure our own key survived the wait (it vanishes with an expired lease).
	t, err := e.Leader(ctx)
	if err != nil {
		return Term{}, fmt.Errorf("membership: campaign %s: %w", e.name, err)
	}
	if t.Key != e.el.Key() || t.Revision != e.el.Rev() {
		return Term{}, fmt.Errorf("membership: campaign %s: %w", e.name, ErrNotLeader)
	}
	e.m.reg.logger.Info("membership: elected", "election", e.name, "node_id", e.m.node.ID, "revision", t.Revision)
	return t, nil
}

// Resign gives up leadership (or withdraws a candidacy) at once, so the
// next candidate leads without waiting for a lease to expire. It is a
// no-op when the member does not lead.
func (e *Election) Resign(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.m.reg.bound(ctx)
	defer cancel()
	if err := e.el.Resign(ctx); err != nil {
		return fmt.Errorf("membership: resign %s: %w", e.name, err)
	}
	return nil
}

// Leader returns the current term of the election, or ErrNoLeader.
func (e *Election) Leader(ctx context.Context) (Term, error) {
	return e.m.reg.Leader(ctx, e.name)
}

// Leader returns the current term of election name, or ErrNoLeader; it
// needs no membership, so any process may observe the coordinator.
func (r *Registry) Leader(ctx context.Context, name string) (Term, error) {
	t, _, err := r.leader(ctx, name)
	if err == nil && t.Revision == 0 {
		err = ErrNoLeader
	}
	return t, err
}

// leader reads election name's current term (zero when nobody leads) and
// the revision it was read at.
func (r *Registry) leader(ctx context.Context, name string) (Term, int64, error) {
	if !validName(name) {
		return Term{}, 0, fmt.Errorf("membership: invalid election name %q", name)
	}
	ctx, cancel := r.bound(ctx)
	defer cancel()
	// The leader is the candidate with the lowest create revision, as in
	// concurrency.Election.Leader.
	resp, err := r.client.Get(ctx, r.electionPrefix(name)+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return Term{}, 0, fmt.Errorf("membership: leader of %s: %w", name, err)
	}
	if len(resp.Kvs) == 0 {
		return Term{}, resp.Header.Revision, nil
	}
	kv := resp.Kvs[0]
	n, err := decodeNode(kv.Key, kv.Value, 0)
	if err != nil {
		return Term{}, 0, err
	}
	return Term{Leader: n, Key: string(kv.Key), Revision: kv.CreateRevision}, resp.Header.Revision, nil
}

// Observe reports the terms of election name as they change: the current
// one first, then each new one; a zero Term (Revision 0) means nobody
// leads. Intermediate terms may be skipped, never reordered. The channel is
// closed when ctx ends or the etcd client is closed; the goroutine behind it
// stops then (cancel ctx and drain the channel).
func (r *Registry) Observe(ctx context.Context, name string) (<-chan Term, error) {
	if !validName(name) {
		return nil, fmt.Errorf("membership: invalid election name %q", name)
	}
	out := make(chan Term)
	go func() {
		defer close(out)
		r.observe(ctx, name, out)
	}()
	return out, nil
}

// observe runs Observe's loop until ctx ends or the client is closed.
func (r *Registry) observe(ctx context.Context, name string, out chan<- Term) {
	last := Term{Revision: -1}
	for ctx.Err() == nil {
		t, rev, err := r.leader(ctx, name)
		if r.clientClosed() {
			return
		}
		if err != nil {
			r.logger.Warn("membership: observe election; retrying", "election", name, "err", err)
			if !pause(ctx, resyncPause) {
				return
			}
			continue
		}
		if t.Key != last.Key || t.Revision != last.Revision {
			select {
			case out <- t:
				last = t
			case <-ctx.Done():
				return
			}
		}
		if !r.awaitChange(ctx, r.electionPrefix(name)+"/", rev) {
			return
		}
	}
}

// awaitChange blocks until a key under prefix changes after rev (or the
// watch is interrupted); it returns false when ctx ends or the client is
// closed.
func (r *Registry) awaitChange(ctx context.Context, prefix string, rev int64) bool {
	if r.clientClosed() {
		return false
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := r.client.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	select {
	case _, ok := <-wch:
		if !ok && ctx.Err() == nil {
			return pause(ctx, resyncPause)
		}
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
