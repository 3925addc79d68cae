package membership_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/membership"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// eventually is the generous bound for anything that waits on a lease
// expiry (a 2s TTL in these tests) or a watch: it is far above the expected
// time and only fails a test that hangs.
const eventually = 30 * time.Second

// open returns a Registry with a session TTL of ttl over a client of its
// own, as one process has; the client is closed when the test ends.
func open(t *testing.T, endpoint, root string, ttl time.Duration) *membership.Registry {
	t.Helper()
	r, _ := openKillable(t, endpoint, root, ttl)
	return r
}

// openKillable is open with a kill function that closes the client at
// once without closing its members: their keep-alives stop and their
// leases expire, as when the process is killed.
func openKillable(t *testing.T, endpoint, root string, ttl time.Duration) (*membership.Registry, func()) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	kill := func() {
		if err := c.Close(); err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}
	t.Cleanup(kill)
	r, err := membership.New(c, membership.Config{Root: root, SessionTTL: ttl}, nil)
	require.NoError(t, err)
	return r, kill
}

// register registers a node that leaves when the test ends.
func register(t *testing.T, r *membership.Registry, role, addr string) *membership.Member {
	t.Helper()
	m, err := r.Register(context.Background(), role, addr)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// next receives the next event, failing the test after eventually.
func next(t *testing.T, w *membership.Watcher) membership.Event {
	t.Helper()
	select {
	case e, ok := <-w.Events:
		require.True(t, ok, "events closed: %v", w.Err())
		return e
	case <-time.After(eventually):
		t.Fatal("no membership event")
	}
	return membership.Event{}
}

// watch starts a watch that is stopped (and drained) when the test ends.
func watch(t *testing.T, r *membership.Registry, role string) *membership.Watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := r.Watch(ctx, role)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		cancel()
		for range w.Events { // drain until the goroutine exits
		}
		require.NoError(t, w.Err())
	})
	return w
}

func ids(nodes []membership.Node) []int64 {
	out := make([]int64, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return out
}

func TestConfig(t *testing.T) {
	d := membership.Defaults()
	require.Equal(t, membership.DefaultRoot, d.Root)
	require.Equal(t, membership.DefaultSessionTTL, d.SessionTTL)
	require.NoError(t, d.Validate())
	for name, tc := range map[string]struct {
		mod func(*membership.Config)
		ok  bool
	}{
		"defaults":         {func(*membership.Config) {}, true},
		"zero fields":      {func(c *membership.Config) { *c = membership.Config{} }, true},
		"root without /":   {func(c *membership.Config) { c.Root = "strata" }, false},
		"short ttl":        {func(c *membership.Config) { c.SessionTTL = 500 * time.Millisecond }, false},
		"negative timeout": {func(c *membership.Config) { c.RequestTimeout = -time.Second }, false},
	} {
		t.Run(name, func(t *testing.T) {
			c := membership.Defaults()
			tc.mod(&c)
			if tc.ok {
				require.NoError(t, c.Validate())
			} else {
				require.Error(t, c.Validate())
			}
		})
	}
}

func TestNewNeedsAClient(t *testing.T) {
	_, err := membership.New(nil, membership.Defaults(), nil)
	require.Error(t, err)
}

func TestRegisterListLeave(t *testing.T) {
	ctx := context.Background()
	r := open(t, enginetest.Etcd(t), "t/", 10*time.Second)

	q1 := register(t, r, membership.RoleQueryNode, "10.0.0.1:1")
	d1 := register(t, r, membership.RoleDataNode, "10.0.0.2:1")
	q2 := register(t, r, membership.RoleQueryNode, "10.0.0.3:1")
	require.Equal(t, []int64{1, 2, 3}, []int64{q1.ID(), d1.ID(), q2.ID()})

	qs, err := r.List(ctx, membership.RoleQueryNode)
	require.NoError(t, err)
	require.Len(t, qs, 2)
	require.Equal(t, q1.Node(), qs[0])
	require.Equal(t, membership.Node{ID: 3, Role: "querynode", Address: "10.0.0.3:1", Lease: q2.Node().Lease, Revision: q2.Node().Revision}, qs[1])
	ds, err := r.List(ctx, membership.RoleDataNode)
	require.NoError(t, err)
	require.Equal(t, []int64{2}, ids(ds))

	// Leaving revokes the lease: the node is gone at once, not after a TTL.
	require.NoError(t, q1.Close())
	require.NoError(t, q1.Close(), "idempotent")
	<-q1.Done()
	qs, err = r.List(ctx, membership.RoleQueryNode)
	require.NoError(t, err)
	require.Equal(t, []int64{3}, ids(qs))

	_, err = r.Register(ctx, "Query/Node", "x")
	require.Error(t, err)
	_, err = r.List(ctx, "")
	require.Error(t, err)
}

func TestIDsUniqueUnderConcurrency(t *testing.T) {
	endpoint := enginetest.Etcd(t)
	const registries, perRegistry = 3, 8
	var (
		mu      sync.Mutex
		members []*membership.Member
		wg      sync.WaitGroup
	)
	for i := range registries {
		r := open(t, endpoint, "t/", 10*time.Second)
		for j := range perRegistry {
			wg.Go(func() {
				m, err := r.Register(context.Background(), membership.RoleProxy, fmt.Sprintf("p%d-%d", i, j))
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				members = append(members, m)
			})
		}
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, m := range members {
		t.Cleanup(func() { require.NoError(t, m.Close()) })
		require.False(t, seen[m.ID()], "ID %d handed out twice", m.ID())
		seen[m.ID()] = true
	}
	require.Len(t, seen, registries*perRegistry)
	for id := int64(1); id <= registries*perRegistry; id++ {
		require.True(t, seen[id], "IDs are dense from 1: %d missing", id)
	}
}

// assertNoError reports err from a goroutine other than the test's.
func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

func TestIDsNeverReusedAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	srv := enginetest.NewEtcd(t)

	// First life: two nodes; one leaves, one crashes (its lease expires).
	r1, kill := openKillable(t, srv.URL, "t/", 2*time.Second)
	a, err := r1.Register(ctx, membership.RoleDataNode, "a")
	require.NoError(t, err)
	b, err := r1.Register(ctx, membership.RoleDataNode, "b")
	require.NoError(t, err)
	require.NoError(t, a.Close())
	kill() // b crashes
	require.NoError(t, b.Close())

	// etcd restarts on the same data.
	srv.Stop()
	srv.Start()

	r2 := open(t, srv.URL, "t/", 2*time.Second)
	c := register(t, r2, membership.RoleDataNode, "a") // the same address comes back
	require.Equal(t, int64(3), c.ID())
	require.Eventually(t, func() bool {
		nodes, err := r2.List(ctx, membership.RoleDataNode)
		return err == nil && len(nodes) == 1 && nodes[0].ID == 3
	}, eventually, 100*time.Millisecond, "b's session expires; only c is alive")
	d := register(t, r2, membership.RoleQueryNode, "d")
	require.Equal(t, int64(4), d.ID(), "one counter across roles")
}

func TestWatchAddedAndRemovedOnLeaseExpiry(t *testing.T) {
	ctx := context.Background()
	endpoint := enginetest.Etcd(t)
	observer := open(t, endpoint, "t/", 2*time.Second)
	stay := register(t, observer, membership.RoleQueryNode, "stay")

	w := watch(t, observer, membership.RoleQueryNode)
	require.Equal(t, []int64{stay.ID()}, ids(w.Nodes))

	// A node in another process: its registry is closed without revoking
	// the lease, as when the process is killed.
	crashing, kill := openKillable(t, endpoint, "t/", 2*time.Second)
	victim, err := crashing.Register(ctx, membership.RoleQueryNode, "victim")
	require.NoError(t, err)
	other := register(t, observer, membership.RoleDataNode, "other role")

	e := next(t, w)
	require.Equal(t, membership.Added, e.Type)
	require.Equal(t, victim.Node(), e.Node)
	require.Greater(t, e.Revision, w.Revision)

	kill() // kill -9: keep-alives stop
	require.NoError(t, victim.Close())

	e = next(t, w)
	require.Equal(t, membership.Removed, e.Type, "the expired lease deletes the session key")
	require.Equal(t, victim.ID(), e.Node.ID)
	require.Equal(t, "victim", e.Node.Address)
	nodes, err := observer.List(ctx, membership.RoleQueryNode)
	require.NoError(t, err)
	require.Equal(t, []int64{stay.ID()}, ids(nodes))

	// A clean leave is an event too, and other roles never show up.
	require.NoError(t, stay.Close())
	e = next(t, w)
	require.Equal(t, membership.Removed, e.Type)
	require.Equal(t, stay.ID(), e.Node.ID)
	require.NotEqual(t, other.ID(), e.Node.ID)
}

func TestMemberLearnsOfLostLease(t *testing.T) {
	ctx := context.Background()
	endpoint := enginetest.Etcd(t)
	r := open(t, endpoint, "t/", 10*time.Second)
	m := register(t, r, membership.RoleDataNode, "n")

	runErr := make(chan error, 1)
	go func() { runErr <- m.Run(ctx) }()

	// etcd drops the lease (as it does when keep-alives stop arriving for
	// a TTL, e.g. across a partition).
	raw, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}})
	require.NoError(t, err)
	defer func() { require.NoError(t, raw.Close()) }()
	_, err = raw.Revoke(ctx, clientv3.LeaseID(m.Node().Lease))
	require.NoError(t, err)

	select {
	case err := <-runErr:
		require.ErrorIs(t, err, membership.ErrSessionLost)
	case <-time.After(eventually):
		t.Fatal("Run did not report the lost session")
	}
	<-m.Done()
	nodes, err := r.List(ctx, membership.RoleDataNode)
	require.NoError(t, err)
	require.Empty(t, nodes)

	// A new registration is a new node.
	m2 := register(t, r, membership.RoleDataNode, "n")
	require.Greater(t, m2.ID(), m.ID())
}

func TestRunLeavesOnCancel(t *testing.T) {
	r := open(t, enginetest.Etcd(t), "t/", 10*time.Second)
	m, err := r.Register(context.Background(), membership.RoleProxy, "p")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, m.Run(ctx))
	nodes, err := r.List(context.Background(), membership.RoleProxy)
	require.NoError(t, err)
	require.Empty(t, nodes)
	require.NoError(t, m.Close())
}

func TestWatchEndsWhenClientCloses(t *testing.T) {
	r, kill := openKillable(t, enginetest.Etcd(t), "t/", 10*time.Second)
	w, err := r.Watch(context.Background(), membership.RoleProxy)
	require.NoError(t, err)
	kill()
	for range w.Events { // drain until the goroutine exits
	}
	require.Error(t, w.Err())
	_, err = r.List(context.Background(), membership.RoleProxy)
	require.Error(t, err)
}

func TestMembershipSurvivesEtcdRestart(t *testing.T) {
	ctx := context.Background()
	srv := enginetest.NewEtcd(t)
	// Stopping the embedded server takes seconds (it drains connections);
	// the TTL leaves ample room for it.
	r := open(t, srv.URL, "t/", time.Minute)
	m := register(t, r, membership.RoleQueryNode, "m")
	w := watch(t, r, membership.RoleQueryNode)
	require.Equal(t, []int64{m.ID()}, ids(w.Nodes))

	// etcd restarts well within the TTL: the lease and the watch resume.
	srv.Stop()
	srv.Start()

	n := register(t, r, membership.RoleQueryNode, "n")
	e := next(t, w)
	require.Equal(t, membership.Added, e.Type)
	require.Equal(t, n.ID(), e.Node.ID)
	select {
	case <-m.Done():
		t.Fatal("the session was lost across a short etcd restart")
	default:
	}
	nodes, err := r.List(ctx, membership.RoleQueryNode)
	require.NoError(t, err)
	require.Equal(t, []int64{m.ID(), n.ID()}, ids(nodes))
}
