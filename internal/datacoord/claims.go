package datacoord

import (
	"context"
	"errors"
	"sort"

	"github.com/strata-db/strata/internal/catalog"
)

// ErrStaleClaim refuses the report of a claim that is no longer current:
// an index build of an older version, or a compaction result of an older
// attempt. The task or plan was released (its builder's session ended) or
// handed out again since; the report changed nothing.
var ErrStaleClaim = errors.New("datacoord: stale claim")

// Released counts what ReleaseExecutor took back.
type Released struct {
	// IndexTasks are the InProgress index tasks put back to Unissued.
	IndexTasks int
	// Compactions are the executing compaction plans put back to pending.
	Compactions int
}

// Claimants returns the builders and executors holding claims now (index
// tasks InProgress, compaction plans executing), sorted. The coordinator
// role reads them before it starts watching the data nodes: one that is
// not live when the watch starts died before, and ReleaseExecutor takes
// its claims back.
func (c *Coordinator) Claimants() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range c.tasks {
		if t.State == catalog.IndexInProgress && !t.Deleted {
			seen[t.Builder] = true
		}
	}
	for _, p := range c.compaction.plans {
		if p.state == "executing" {
			seen[p.plan.Executor] = true
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ReleaseExecutor takes back every claim of executor, a builder and
// compaction executor that is dead (its membership session ended): each
// InProgress index task goes back to Unissued with a new Version (an
// abandoned attempt, not a failure: Failures is unchanged) and each
// executing compaction plan back to pending, so that another node claims
// them at once instead of after IndexLease or the executing timeout. If the
// executor was only cut off and still runs, its late reports carry the old
// version or attempt and are refused (ErrStaleClaim). Each release is
// logged with the task and the executor.
func (c *Coordinator) ReleaseExecutor(ctx context.Context, executor string) (Released, error) {
	var out Released
	// Plans first, under metaMu: a commit in flight (CompleteCompaction
	// holds metaMu throughout) ends before its plan is released.
	c.metaMu.Lock()
	c.mu.Lock()
	var plans []int64
	for id, p := range c.compaction.plans {
		if p.state == "executing" && p.plan.Executor == executor {
			p.state, p.plan.Executor = "pending", ""
			p.plan.Attempt++ // the released attempt's result is stale from now on
			plans = append(plans, id)
			c.logger.Warn("datacoord: compaction plan released from a dead executor", "plan", id,
				"type", p.plan.Type.String(), "vchannel", p.plan.VChannel, "executor", executor)
		}
	}
	c.mu.Unlock()
	c.metaMu.Unlock()
	out.Compactions = len(plans)
	if len(plans) > 0 {
		select {
		case c.compaction.kick <- struct{}{}:
		default:
		}
	}

	c.claimMu.Lock()
	defer c.claimMu.Unlock()
	c.mu.Lock()
	var tasks []catalog.IndexTask
	for _, t := range c.tasks {
		if t.State == catalog.IndexInProgress && t.Builder == executor && !t.Deleted {
			t.State, t.Builder, t.LeaseUntil = catalog.IndexUnissued, "", 0
			t.Version++ // the released attempt's report is stale from now on
			tasks = append(tasks, t)
		}
	}
	c.mu.Unlock()
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].BuildID < tasks[j].BuildID })
	if err := c.saveTasks(ctx, tasks...); err != nil {
		return out, err
	}
	out.IndexTasks = len(tasks)
	for _, t := range tasks {
		c.logger.Warn("datacoord: index build released from a dead builder", "build", t.BuildID, "segment", t.SegmentID,
			"index", t.IndexID, "version", t.Version, "builder", executor)
	}
	return out, nil
}
