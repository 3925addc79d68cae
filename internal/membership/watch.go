package membership

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EventType says what happened to a node.
type EventType int

// Event types.
const (
	// Added: a node registered.
	Added EventType = iota + 1
	// Removed: a node left or its lease expired; it is dead for good.
	Removed
	// Updated: a live node's session value changed.
	Updated
)

// String returns the event type's name.
func (t EventType) String() string {
	switch t {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Updated:
		return "updated"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is a change to the live nodes of a role.
type Event struct {
	// Type is what happened.
	Type EventType
	// Node is the node (for Removed, as it was while alive).
	Node Node
	// Revision is the etcd revision of the change.
	Revision int64
}

// Watcher follows the live nodes of one role: Nodes is the snapshot at
// Revision and Events delivers every change after it, in order.
type Watcher struct {
	// Nodes are the live nodes at Revision, ordered by ID.
	Nodes []Node
	// Revision is the etcd revision Nodes were read at.
	Revision int64
	// Events delivers the changes after Revision. It is closed when the
	// watch's context ends or the etcd client is closed; Err then says why.
	Events <-chan Event

	err error
}

// Err returns why Events was closed: nil when the watch's context ended,
// otherwise the error that stopped it. Call it only after Events is closed.
func (w *Watcher) Err() error { return w.err }

// Watch returns the live nodes of role and a stream of the changes after
// them. The stream's goroutine runs until ctx ends (or the etcd client is
// closed) and then closes Events; cancel ctx and drain Events to stop it. A
// watch that etcd cancels (compaction, a lost leader) is resumed
// transparently: the watcher lists the role again and emits the difference
// as events, so a consumer applying the events to Nodes always holds the
// live set.
func (r *Registry) Watch(ctx context.Context, role string) (*Watcher, error) {
	nodes, rev, err := r.list(ctx, role)
	if err != nil {
		return nil, err
	}
	events := make(chan Event)
	w := &Watcher{Nodes: nodes, Revision: rev, Events: events}
	live := make(map[int64]Node, len(nodes))
	for _, n := range nodes {
		live[n.ID] = n
	}
	go func() {
		defer close(events)
		w.err = r.follow(ctx, role, rev, live, events)
	}()
	return w, nil
}

// follow turns etcd watch responses on role's prefix after rev into events,
// resynchronising by a fresh list when the watch is cancelled. It returns
// nil when ctx ends.
func (r *Registry) follow(ctx context.Context, role string, rev int64, live map[int64]Node, out chan<- Event) error {
	send := func(e Event) bool {
		select {
		case out <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := r.client.Watch(wctx, r.rolePrefix(role), clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithPrevKV())
		werr := r.apply(wch, live, &rev, send)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if r.clientClosed() {
			return fmt.Errorf("membership: watch %s: etcd client closed", role)
		}
		r.logger.Warn("membership: watch interrupted; resynchronising", "role", role, "revision", rev, "err", werr)
		if !pause(ctx, resyncPause) {
			return nil
		}
		nodes, nrev, err := r.list(ctx, role)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("membership: watch %s: %w", role, errors.Join(werr, err))
		}
		for _, e := range diff(live, nodes, nrev) {
			if !send(e) {
				return nil
			}
		}
		rev = nrev
	}
}

// apply consumes one etcd watch until it ends, updating live and rev and
// sending events; it returns why the watch ended.
func (r *Registry) apply(wch clientv3.WatchChan, live map[int64]Node, rev *int64, send func(Event) bool) error {
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return err
		}
		for _, ev := range resp.Events {
			e, ok := r.event(ev, live)
			if ok && !send(e) {
				return context.Canceled
			}
		}
		*rev = resp.Header.Revision
	}
	return errors.New("watch channel closed")
}

// event converts one etcd event and applies it to live; ok is false for a
// key that is not a session key or a delete of an unknown node.
func (r *Registry) event(ev *clientv3.Event, live map[int64]Node) (e Event, ok bool) {
	key := string(ev.Kv.Key)
	id, err := strconv.ParseInt(key[strings.LastIndexByte(key, '/')+1:], 10, 64)
	if err != nil {
		r.logger.Warn("membership: ignoring a foreign key under a role prefix", "key", key)
		return Event{}, false
	}
	if ev.Type == clientv3.EventTypeDelete {
		n, known := live[id]
		if !known {
			return Event{}, false
		}
		delete(live, id)
		return Event{Type: Removed, Node: n, Revision: ev.Kv.ModRevision}, true
	}
	n, err := decodeNode(ev.Kv.Key, ev.Kv.Value, ev.Kv.CreateRevision)
	if err != nil {
		r.logger.Warn("membership: ignoring a bad session value", "key", key, "err", err)
		return Event{}, false
	}
	t := Added
	if _, known := live[id]; known {
		t = Updated
	}
	live[id] = n
	return Event{Type: t, Node: n, Revision: ev.Kv.ModRevision}, true
}

// diff returns the events that turn live into nodes (read at rev) and
// applies them to live.
func diff(live map[int64]Node, nodes []Node, rev int64) []Event {
	var out []Event
	now := make(map[int64]bool, len(nodes))
	for _, n := range nodes {
		now[n.ID] = true
		old, known := live[n.ID]
		switch {
		case !known:
			out = append(out, Event{Type: Added, Node: n, Revision: rev})
		case old != n:
			out = append(out, Event{Type: Updated, Node: n, Revision: rev})
		}
		live[n.ID] = n
	}
	var gone []Node
	for id, n := range live {
		if !now[id] {
			gone = append(gone, n)
			delete(live, id)
		}
	}
	slices.SortFunc(gone, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	for _, n := range gone {
		out = append(out, Event{Type: Removed, Node: n, Revision: rev})
	}
	return out
}

// resyncPause spaces the resynchronisations of a watch that etcd keeps
// cancelling.
const resyncPause = 200 * time.Millisecond

// pause waits d; it returns false if ctx ends first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
