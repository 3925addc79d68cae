package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/strata-db/strata/internal/metastore"
)

// Fence identifies one leadership term: the leader's election key and its
// create revision (membership.Term's Key and Revision). The key exists with
// that create revision exactly as long as the term lasts: it is deleted
// when the leader resigns or its lease expires, and a later leader's key
// has a larger create revision.
type Fence struct {
	// Key is the leader's candidate key, an absolute etcd key (not under
	// the store's Root).
	Key string
	// Revision is Key's create revision, the term's fencing token.
	Revision int64
}

// Fenced is a metastore.KV whose writes succeed only while one leadership
// term lasts: every Txn is one etcd transaction guarded by
// Compare(CreateRevision(Fence.Key) == Fence.Revision). Once etcd refuses
// a Txn because the term ended, the Txn and every later one fail with
// metastore.ErrFenced (without another round trip) and the onFenced
// callback runs once, so the coordinator that owns the KV steps down.
//
// Reads are not fenced: Get and Scan read through the Store. A Fenced does
// not own the Store; Close only stops the Fenced view. It is safe for
// concurrent use.
type Fenced struct {
	store    *Store
	fence    Fence
	onFenced func()

	fenced  atomic.Bool
	once    sync.Once
	closeMu sync.RWMutex
	closed  bool
}

var _ metastore.KV = (*Fenced)(nil)

// Fenced returns a view of the store whose writes are fenced by f.
// onFenced (may be nil) runs once, on the goroutine of the first Txn that
// etcd refuses because the term ended.
func (s *Store) Fenced(f Fence, onFenced func()) (*Fenced, error) {
	if f.Key == "" || f.Revision <= 0 {
		return nil, fmt.Errorf("metastore/etcd: fence %q at revision %d: want a leader key and its create revision", f.Key, f.Revision)
	}
	if onFenced == nil {
		onFenced = func() {}
	}
	return &Fenced{store: s, fence: f, onFenced: onFenced}, nil
}

// Fence returns the term that fences the KV's writes.
func (f *Fenced) Fence() Fence { return f.fence }

// IsFenced reports whether etcd has refused a write because the term
// ended.
func (f *Fenced) IsFenced() bool { return f.fenced.Load() }

// begin checks the closed flag; on success the caller must call
// f.closeMu.RUnlock.
func (f *Fenced) begin() error {
	f.closeMu.RLock()
	if f.closed {
		f.closeMu.RUnlock()
		return metastore.ErrClosed
	}
	return nil
}

// Get reads through the store (unfenced).
func (f *Fenced) Get(ctx context.Context, key string) ([]byte, error) {
	if err := f.begin(); err != nil {
		return nil, err
	}
	defer f.closeMu.RUnlock()
	return f.store.Get(ctx, key)
}

// Scan reads through the store (unfenced).
func (f *Fenced) Scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error) {
	if err := f.begin(); err != nil {
		return nil, err
	}
	defer f.closeMu.RUnlock()
	return f.store.Scan(ctx, prefix)
}

// Txn applies ops as one etcd transaction if, and only if, the term still
// lasts: the fence compare is the outer transaction's guard and the ops'
// own guards and mutations are a nested transaction, so a refused fence
// (metastore.ErrFenced) is told apart from a false guard
// (metastore.ErrConflict). Neither applies anything.
func (f *Fenced) Txn(ctx context.Context, ops ...metastore.Op) error {
	if err := metastore.ValidateOps(ops); err != nil {
		return err
	}
	if err := f.begin(); err != nil {
		return err
	}
	defer f.closeMu.RUnlock()
	if f.fenced.Load() {
		return f.fencedErr()
	}
	if err := f.store.begin(ctx); err != nil {
		return err
	}
	defer f.store.mu.RUnlock()
	if len(ops) == 0 {
		return nil
	}
	ctx, cancel := f.store.bound(ctx)
	defer cancel()
	cmps, then := f.store.txnOps(ops)
	resp, err := f.store.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(f.fence.Key), "=", f.fence.Revision)).
		Then(clientv3.OpTxn(cmps, then, nil)).
		Commit()
	if err != nil {
		return wrapErr(ctx, "txn", err)
	}
	if !resp.Succeeded {
		f.fenced.Store(true)
		f.once.Do(f.onFenced)
		return f.fencedErr()
	}
	if len(resp.Responses) != 1 || resp.Responses[0].GetResponseTxn() == nil {
		return errors.New("metastore/etcd: txn: etcd answered a fenced transaction without its nested result")
	}
	if !resp.Responses[0].GetResponseTxn().Succeeded {
		return fmt.Errorf("%w: a guard of %v is false", metastore.ErrConflict, ops)
	}
	return nil
}

// fencedErr is the error of a Txn refused because the term ended.
func (f *Fenced) fencedErr() error {
	return fmt.Errorf("%w (term %s@%d ended)", metastore.ErrFenced, f.fence.Key, f.fence.Revision)
}

// Close stops the view; the store stays open. It is idempotent.
func (f *Fenced) Close() error {
	f.closeMu.Lock()
	defer f.closeMu.Unlock()
	f.closed = true
	return nil
}
