package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/etcd"
	"github.com/strata-db/strata/internal/metastore/kvtest"
)

// openStore opens a Store under root that is closed when the test ends.
func openStore(t *testing.T, endpoint, root string) *etcd.Store {
	t.Helper()
	s, err := etcd.Open(context.Background(), etcd.Config{Endpoints: []string{endpoint}, Root: root}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// TestFencedConformance: while its term lasts a Fenced store is a
// metastore.KV like any other.
func TestFencedConformance(t *testing.T) {
	endpoint := startEtcd(t)
	n := 0
	fenced := func(t *testing.T, root string) metastore.KV {
		s := openStore(t, endpoint, root)
		// A stand-in for a leader key: a key that nothing deletes.
		leader := "fence/" + root
		resp, err := s.Client().Put(context.Background(), leader, "x", clientv3.WithPrevKV())
		require.NoError(t, err)
		rev := resp.Header.Revision
		if resp.PrevKv != nil {
			rev = resp.PrevKv.CreateRevision
		}
		f, err := s.Fenced(etcd.Fence{Key: leader, Revision: rev}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, f.Close()) })
		return f
	}
	kvtest.RunConformance(t,
		func(t *testing.T) metastore.KV {
			n++
			return fenced(t, fmt.Sprintf("fenced/%d/", n))
		},
		func(t *testing.T, kv metastore.KV) metastore.KV {
			return fenced(t, fmt.Sprintf("fenced/%d/", n))
		},
	)
}

// killableRegistry is a membership registry over a client of its own;
// kill closes the client without leaving, so the member's lease expires as
// when its process dies.
func killableRegistry(t *testing.T, endpoint string) (*membership.Registry, func()) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	kill := func() {
		if err := c.Close(); err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}
	t.Cleanup(kill)
	r, err := membership.New(c, membership.Config{Root: "fence-test/", SessionTTL: 2 * time.Second}, nil)
	require.NoError(t, err)
	return r, kill
}

// coordinator is one coordinator process: its membership (on a client of
// its own, so it can die alone) and its meta store.
type coordinator struct {
	member *membership.Member
	kill   func()
	store  *etcd.Store
}

func newCoordinator(t *testing.T, endpoint, name string) coordinator {
	t.Helper()
	reg, kill := killableRegistry(t, endpoint)
	m, err := reg.Register(context.Background(), membership.RoleCoordinator, name)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return coordinator{member: m, kill: kill, store: openStore(t, endpoint, "meta/")}
}

// campaign blocks until c leads and returns its election and term.
func (c coordinator) campaign() (*membership.Election, membership.Term, error) {
	el, err := c.member.Election("coordinator")
	if err != nil {
		return nil, membership.Term{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	term, err := el.Campaign(ctx)
	return el, term, err
}

// fence returns c's meta store fenced by term and a counter of the
// onFenced calls.
func (c coordinator) fence(t *testing.T, term membership.Term) (*etcd.Fenced, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	f, err := c.store.Fenced(etcd.Fence{Key: term.Key, Revision: term.Revision}, func() { calls.Add(1) })
	require.NoError(t, err)
	return f, &calls
}

// lead campaigns until c leads and returns its fenced meta store, a
// counter of the onFenced calls and the election it leads.
func (c coordinator) lead(t *testing.T) (*etcd.Fenced, *atomic.Int32, *membership.Election) {
	t.Helper()
	el, term, err := c.campaign()
	require.NoError(t, err)
	f, calls := c.fence(t, term)
	return f, calls, el
}

// TestFencedAfterLeaseExpiry: coordinator A leads and writes; A's session
// expires (its process hangs or is cut off from etcd, but its meta-store
// connection still works), B is elected; A's next write is refused with
// ErrFenced and applies nothing, A is told to step down once, and B's
// writes succeed.
func TestFencedAfterLeaseExpiry(t *testing.T) {
	ctx := context.Background()
	endpoint := startEtcd(t)
	a := newCoordinator(t, endpoint, "a")
	fa, aFenced, _ := a.lead(t)
	require.NoError(t, fa.Txn(ctx, metastore.Put("k", []byte("a1"))))

	b := newCoordinator(t, endpoint, "b")
	type won struct {
		term membership.Term
		err  error
	}
	bLeads := make(chan won, 1)
	go func() {
		_, term, err := b.campaign()
		bLeads <- won{term, err}
	}()
	a.kill() // A's keep-alives stop; its lease expires after its TTL
	var fb *etcd.Fenced
	select {
	case w := <-bLeads:
		require.NoError(t, w.err)
		fb, _ = b.fence(t, w.term)
	case <-time.After(30 * time.Second):
		t.Fatal("B was not elected after A's lease expired")
	}
	require.Greater(t, fb.Fence().Revision, fa.Fence().Revision)

	err := fa.Txn(ctx, metastore.Put("k", []byte("a2")))
	require.ErrorIs(t, err, metastore.ErrFenced)
	require.ErrorContains(t, err, "no longer the leader")
	require.True(t, fa.IsFenced())
	require.EqualValues(t, 1, aFenced.Load(), "A is told to step down")
	// Refused again at once, and the callback does not run twice.
	require.ErrorIs(t, fa.Txn(ctx, metastore.Put("k2", []byte("a3"))), metastore.ErrFenced)
	require.EqualValues(t, 1, aFenced.Load())

	v, err := fa.Get(ctx, "k")
	require.NoError(t, err, "reads are not fenced")
	require.Equal(t, "a1", string(v), "A's refused write applied nothing")

	require.NoError(t, fb.Txn(ctx, metastore.IfEquals("k", []byte("a1")), metastore.Put("k", []byte("b1"))))
	v, err = b.store.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "b1", string(v))
}

// TestFencedAfterResign: a leader that resigns is fenced at once (its
// process still lives: only the term ended); a false
// guard of a live term is still ErrConflict, not ErrFenced.
func TestFencedAfterResign(t *testing.T) {
	ctx := context.Background()
	endpoint := startEtcd(t)
	a := newCoordinator(t, endpoint, "a")
	fa, calls, el := a.lead(t)
	require.NoError(t, fa.Txn(ctx, metastore.Put("k", []byte("1"))))
	err := fa.Txn(ctx, metastore.IfAbsent("k"), metastore.Put("k", []byte("2")))
	require.ErrorIs(t, err, metastore.ErrConflict)
	require.NotErrorIs(t, err, metastore.ErrFenced)
	require.False(t, fa.IsFenced())

	require.NoError(t, el.Resign(ctx))
	require.ErrorIs(t, fa.Txn(ctx, metastore.Put("k", []byte("3"))), metastore.ErrFenced)
	require.EqualValues(t, 1, calls.Load())

	require.NoError(t, fa.Close())
	require.NoError(t, fa.Close(), "Close is idempotent")
	_, err = fa.Get(ctx, "k")
	require.ErrorIs(t, err, metastore.ErrClosed)
	v, err := a.store.Get(ctx, "k")
	require.NoError(t, err, "closing the view leaves the store open")
	require.Equal(t, "1", string(v))
}

func TestFenceValidation(t *testing.T) {
	s := openStore(t, startEtcd(t), "v/")
	_, err := s.Fenced(etcd.Fence{Key: "", Revision: 3}, nil)
	require.Error(t, err)
	_, err = s.Fenced(etcd.Fence{Key: "k", Revision: 0}, nil)
	require.Error(t, err)
}
