package datacoord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/wal"
)

// The collection and partition of mergeEnv.
const mergeColl, mergePart = 7, 1

// mergeEnv is a coordinator with two small flushed segments a and b on
// vchannel vch of collection mergeColl, partition mergePart, and the one
// mix compaction that merges them planned (trigger), unclaimed.
func mergeEnv(t *testing.T) (e *gcEnv, vch string, a, b, trigger int64) {
	t.Helper()
	e = newGCEnv(t)
	e.cfg.Compaction.MinSmallSegments = 2
	e.open()
	vch = wal.VChannelName(wal.PChannelName("by-dev", 0), mergeColl, 0)
	a, b = e.id(), e.id()
	e.sync(mergeColl, mergePart, a, vch, true)
	e.sync(mergeColl, mergePart, b, vch, true)
	trigger, n, err := e.c.triggerCompaction(e.ctx, false, 0, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	return e, vch, a, b, trigger
}

// TestReleaseExecutorMovesIndexBuild: the index build of a builder whose
// session ended goes back to Unissued with a new version at once (not when
// its lease ends), another builder claims it, the dead builder's late
// report is refused and changes nothing, and the release survives a
// coordinator restart (index tasks are persisted).
func TestReleaseExecutorMovesIndexBuild(t *testing.T) {
	e := indexedEnv(t)
	held, _, ok, err := e.c.ClaimIndexTask(e.ctx, "datanode-1@a", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{"datanode-1@a"}, e.c.Claimants())
	_, _, ok, err = e.c.ClaimIndexTask(e.ctx, "datanode-2@b", 0)
	require.NoError(t, err)
	require.False(t, ok, "leased to datanode-1")

	r, err := e.c.ReleaseExecutor(e.ctx, "datanode-9@z")
	require.NoError(t, err)
	require.Equal(t, Released{}, r, "another builder's release takes nothing")
	require.Equal(t, catalog.IndexInProgress, e.c.IndexTasks(1)[0].State)

	r, err = e.c.ReleaseExecutor(e.ctx, "datanode-1@a")
	require.NoError(t, err)
	require.Equal(t, Released{IndexTasks: 1}, r)
	task := e.c.IndexTasks(1)[0]
	require.Equal(t, catalog.IndexUnissued, task.State)
	require.Equal(t, held.Version+1, task.Version)
	require.Empty(t, task.Builder)
	require.Zero(t, task.Failures, "an abandoned attempt is not a failure")
	require.Empty(t, e.c.Claimants())

	// The stale builder (only cut off, still running) reports late.
	err = e.c.FinishIndexTask(e.ctx, held.BuildID, held.Version, []string{"stale"}, 1, nil)
	require.ErrorIs(t, err, ErrStaleClaim)
	require.Equal(t, task, e.c.IndexTasks(1)[0], "the stale report changed nothing")

	// A restarted coordinator holds the release.
	e.open()
	require.Equal(t, task, e.c.IndexTasks(1)[0])

	moved, _, ok, err := e.c.ClaimIndexTask(e.ctx, "datanode-2@b", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, held.BuildID, moved.BuildID)
	require.Equal(t, held.Version+2, moved.Version)
	require.ErrorIs(t, e.c.FinishIndexTask(e.ctx, held.BuildID, held.Version, []string{"stale"}, 1, nil), ErrStaleClaim,
		"still refused while another builder holds it")
	require.NoError(t, e.c.FinishIndexTask(e.ctx, moved.BuildID, moved.Version, []string{"f"}, 1, nil))
	done := e.c.IndexTasks(1)[0]
	require.Equal(t, catalog.IndexFinished, done.State)
	require.Equal(t, []string{"f"}, done.Files)
	require.ErrorIs(t, e.c.FinishIndexTask(e.ctx, held.BuildID, held.Version, nil, 0, nil), ErrStaleClaim)
	require.Equal(t, done, e.c.IndexTasks(1)[0], "a stale report after the finish changes nothing")
	require.NoError(t, e.c.FinishIndexTask(e.ctx, moved.BuildID, moved.Version, []string{"f"}, 1, nil),
		"a retried report of the current version succeeds")
}

// TestRestartedBuilderHoldsNoOldClaim: a data node restarted under the same
// address registers a new node ID, so its builder name differs and its
// claims do not take back the task of its previous life before the old
// session's release; after it, the task is claimed under the new name.
func TestRestartedBuilderHoldsNoOldClaim(t *testing.T) {
	e := indexedEnv(t)
	old, _, ok, err := e.c.ClaimIndexTask(e.ctx, "datanode-3@10.0.0.5:19530", 0)
	require.NoError(t, err)
	require.True(t, ok)
	_, _, ok, err = e.c.ClaimIndexTask(e.ctx, "datanode-7@10.0.0.5:19530", 0)
	require.NoError(t, err)
	require.False(t, ok, "the new life is another builder")
	_, err = e.c.ReleaseExecutor(e.ctx, "datanode-3@10.0.0.5:19530")
	require.NoError(t, err)
	again, _, ok, err := e.c.ClaimIndexTask(e.ctx, "datanode-7@10.0.0.5:19530", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, old.BuildID, again.BuildID)
	require.Equal(t, "datanode-7@10.0.0.5:19530", again.Builder)
}

// TestReleasedCompactionCommitsOnce: a compaction plan executing on an
// executor whose session ended goes back to pending; another executor
// claims it as a new attempt and commits it; the dead executor's result,
// before or after that commit, is refused and changes nothing, so the
// inputs are dropped and the output added exactly once.
func TestReleasedCompactionCommitsOnce(t *testing.T) {
	const coll, part = mergeColl, mergePart
	e, vch, a, b, trigger := mergeEnv(t)
	first, ok, err := e.c.ClaimCompaction(e.ctx, "datanode-1@a", time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "datanode-1@a", first.Executor)
	require.Equal(t, []string{"datanode-1@a"}, e.c.Claimants())
	_, ok, err = e.c.ClaimCompaction(e.ctx, "datanode-2@b", 0)
	require.NoError(t, err)
	require.False(t, ok, "executing on datanode-1")

	output := func(rows int64) catalog.CompactionResult {
		id, err := e.ids.Allocate(e.ctx, 2)
		require.NoError(t, err)
		out, logID := int64(id), int64(id)+1
		key := storage.InsertLogKey("files", coll, part, out, testVec, logID)
		return catalog.CompactionResult{PlanID: first.ID, Outputs: []catalog.SegmentInfo{{
			ID: out, CollectionID: coll, PartitionID: part, VChannel: vch, State: catalog.SegmentFlushed,
			Level: catalog.LevelL1, NumRows: rows, Binlogs: map[int64][]catalog.Binlog{testVec: {{LogID: logID, Entries: rows, Size: e.put(key)}}},
		}}}
	}
	stale := output(20)
	stale.Attempt = first.Attempt

	r, err := e.c.ReleaseExecutor(e.ctx, "datanode-1@a")
	require.NoError(t, err)
	require.Equal(t, Released{Compactions: 1}, r)
	require.Empty(t, e.c.Claimants())
	require.ErrorIs(t, e.c.CompleteCompaction(e.ctx, stale, nil), ErrStaleClaim, "released: its result is stale")
	for _, id := range []int64{a, b} {
		info, ok := segmentOf(t, e.c, id)
		require.True(t, ok)
		require.Equal(t, catalog.SegmentFlushed, info.State, "the stale result changed nothing")
	}

	second, ok, err := e.c.ClaimCompaction(e.ctx, "datanode-2@b", time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, first.ID, second.ID)
	require.Greater(t, second.Attempt, first.Attempt)
	require.Equal(t, "datanode-2@b", second.Executor)
	require.ErrorIs(t, e.c.CompleteCompaction(e.ctx, stale, nil), ErrStaleClaim, "re-claimed: still stale")
	good := output(20)
	good.Attempt = second.Attempt
	require.NoError(t, e.c.CompleteCompaction(e.ctx, good, nil))
	require.ErrorIs(t, e.c.CompleteCompaction(e.ctx, stale, nil), ErrStaleClaim, "committed: still stale")

	executing, completed, failed, _ := e.c.compactionState(trigger)
	require.Equal(t, [3]int{0, 1, 0}, [3]int{executing, completed, failed})
	var live []int64
	for _, s := range e.c.Segments(coll) {
		if s.State == catalog.SegmentFlushed {
			live = append(live, s.ID)
		}
	}
	require.Equal(t, []int64{good.Outputs[0].ID}, live, "one commit: the inputs dropped, one output")
}

// TestLostCompactionClaimIsHandedBack: a plan executing under the executor
// that claims again is one whose claim it never received: it comes back
// to it as a new attempt, and the lost attempt's result is stale.
func TestLostCompactionClaimIsHandedBack(t *testing.T) {
	e, _, _, _, _ := mergeEnv(t)
	lost, ok, err := e.c.ClaimCompaction(e.ctx, "x", 0)
	require.NoError(t, err)
	require.True(t, ok)
	again, ok, err := e.c.ClaimCompaction(e.ctx, "x", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, lost.ID, again.ID)
	require.Equal(t, lost.Attempt+1, again.Attempt)
	err = e.c.CompleteCompaction(e.ctx, catalog.CompactionResult{PlanID: lost.ID, Attempt: lost.Attempt}, nil)
	require.ErrorIs(t, err, ErrStaleClaim)
}

// TestClaimSurvivesCoordinatorRestart: a build claimed by a data node
// stays its own through a coordinator restart (a failover: the node may
// still be building), so no other builder takes it until it is released,
// and the node's report after the restart is taken.
func TestClaimSurvivesCoordinatorRestart(t *testing.T) {
	e := indexedEnv(t)
	held, _, ok, err := e.c.ClaimIndexTask(e.ctx, "datanode-1@a", 0)
	require.NoError(t, err)
	require.True(t, ok)
	e.open()
	require.Equal(t, []string{"datanode-1@a"}, e.c.Claimants())
	_, _, ok, err = e.c.ClaimIndexTask(e.ctx, "datanode-2@b", 0)
	require.NoError(t, err)
	require.False(t, ok, "still leased to a builder that may be alive")
	require.NoError(t, e.c.FinishIndexTask(e.ctx, held.BuildID, held.Version, []string{"f"}, 1, nil),
		"the builder's report goes through after the restart")
	require.Equal(t, catalog.IndexFinished, e.c.IndexTasks(1)[0].State)
}
