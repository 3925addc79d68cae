package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metrics"
)

// executorReleaser is what releaseDeadExecutors needs of the data
// coordinator (datacoord.Coordinator).
type executorReleaser interface {
	Claimants() []string
	ReleaseExecutor(ctx context.Context, executor string) (datacoord.Released, error)
}

// standaloneExecutor is the builder and compaction executor name of a
// standalone process's data node.
const standaloneExecutor = "standalone"

// releaseRetry spaces the attempts of a release the meta store refused.
const releaseRetry = time.Second

// releaseDeadExecutors is the coordinator role's half of moving the work of
// a dead data node: it follows the datanode sessions and, when one ends,
// takes back every index build and compaction plan claimed under the node's
// executorName (datacoord.Coordinator.ReleaseExecutor), so that another
// node claims them at once rather than when a lease or timeout ends. At
// start it releases the claims of every builder that is not a live data
// node: nodes that died while no coordinator watched (a failover), and
// builders of an earlier standalone life. The claimants are read before the
// watch starts, so each of them registered before the watch's snapshot: one
// absent from it is dead for good (node IDs are never reused). It runs
// until ctx ends.
func releaseDeadExecutors(ctx context.Context, reg *membership.Registry, data executorReleaser, m *metrics.TaskRelease,
	logger *slog.Logger,
) error {
	before := data.Claimants()
	w, err := reg.Watch(ctx, membership.RoleDataNode)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, n := range w.Nodes {
		live[executorName(n)] = true
	}
	for _, name := range before {
		if !live[name] {
			release(ctx, data, name, 0, m, logger)
		}
	}
	for ev := range w.Events {
		if ev.Type == membership.Removed {
			release(ctx, data, executorName(ev.Node), ev.Node.ID, m, logger)
		}
	}
	return w.Err()
}

// release releases one executor's claims, retrying until the meta store
// takes the change or ctx ends (a coordinator that lost its term stops for
// that reason anyway); m may be nil (no metrics).
func release(ctx context.Context, data executorReleaser, name string, nodeID int64, m *metrics.TaskRelease,
	logger *slog.Logger,
) {
	for {
		r, err := data.ReleaseExecutor(ctx, name)
		if m != nil {
			m.ObserveRelease(metrics.ReleasedIndex, r.IndexTasks)
			m.ObserveRelease(metrics.ReleasedCompaction, r.Compactions)
		}
		if r.IndexTasks+r.Compactions > 0 || err != nil {
			logger.Info("released the claims of a builder that is gone", "executor", name, "node_id", nodeID,
				"index_builds", r.IndexTasks, "compactions", r.Compactions, "err", err)
		}
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(releaseRetry):
		}
	}
}
