package app

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metrics"
)

// claimBook is an executorReleaser over a fixed set of claimants: each
// holds one index build until released (datacoord's own release is tested
// in datacoord; this tests who gets released, and when).
type claimBook struct {
	mu       sync.Mutex
	held     map[string]bool
	released chan string
}

func (b *claimBook) Claimants() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for name := range b.held {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func (b *claimBook) ReleaseExecutor(_ context.Context, executor string) (datacoord.Released, error) {
	b.mu.Lock()
	had := b.held[executor]
	delete(b.held, executor)
	b.mu.Unlock()
	b.released <- executor
	if !had {
		return datacoord.Released{}, nil
	}
	return datacoord.Released{IndexTasks: 1}, nil
}

// TestReleaseDeadExecutors: on real etcd sessions, the claims of builders
// that are not live data nodes when the coordinator starts watching (a node
// that died during a failover, a standalone builder of an earlier life) are
// released at once, those of live nodes are not, and a node's claims are
// released when its session ends; a restarted node is a new executor.
func TestReleaseDeadExecutors(t *testing.T) {
	srv := enginetest.NewEtcd(t)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.URL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	reg, err := membership.New(c, membership.Config{Root: "release-test/", SessionTTL: 2 * time.Second}, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := reg.Register(ctx, membership.RoleDataNode, "10.0.0.1:1")
	require.NoError(t, err)
	b, err := reg.Register(ctx, membership.RoleDataNode, "10.0.0.2:1")
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	dead, err := reg.Register(ctx, membership.RoleDataNode, "10.0.0.3:1")
	require.NoError(t, err)
	deadName := executorName(dead.Node())
	require.NoError(t, dead.Close())

	book := &claimBook{
		held:     map[string]bool{executorName(a.Node()): true, executorName(b.Node()): true, deadName: true, "standalone": true},
		released: make(chan string, 16),
	}
	promReg := prometheus.NewRegistry()
	m := metrics.NewTaskRelease(promReg)
	done := make(chan error, 1)
	go func() { done <- releaseDeadExecutors(ctx, reg, book, m, slog.New(slog.DiscardHandler)) }()

	next := func() string {
		t.Helper()
		select {
		case name := <-book.released:
			return name
		case <-time.After(20 * time.Second):
			t.Fatal("nothing released")
			return ""
		}
	}
	require.ElementsMatch(t, []string{deadName, "standalone"}, []string{next(), next()}, "the claims of builders not live at start")
	require.Equal(t, []string{executorName(a.Node()), executorName(b.Node())}, book.Claimants())

	// a restarts under the same address: a new node ID, a new executor.
	again, err := reg.Register(ctx, membership.RoleDataNode, "10.0.0.1:1")
	require.NoError(t, err)
	defer func() { require.NoError(t, again.Close()) }()
	require.NotEqual(t, executorName(a.Node()), executorName(again.Node()))
	require.NoError(t, a.Close())
	require.Equal(t, executorName(a.Node()), next(), "a's session ended")
	require.Equal(t, []string{executorName(b.Node())}, book.Claimants())
	families, err := promReg.Gather()
	require.NoError(t, err)
	counts := map[string]float64{}
	for _, f := range families {
		if f.GetName() == "strata_datacoord_tasks_released_total" {
			for _, s := range f.GetMetric() {
				counts[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
			}
		}
	}
	require.Equal(t, map[string]float64{metrics.ReleasedIndex: 3, metrics.ReleasedCompaction: 0}, counts)

	cancel()
	require.NoError(t, <-done)
}
