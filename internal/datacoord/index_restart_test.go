package datacoord

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
)

// TestIndexBuildInterruptedByShutdownIsRetried: a build claimed and then
// abandoned because the process shut down (no result reported) is claimed
// again after the restart, and those interrupted attempts do not count
// towards MaxIndexAttempts: a later genuine failure still goes back to
// Unissued.
func TestIndexBuildInterruptedByShutdownIsRetried(t *testing.T) {
	e := newGCEnv(t)
	const coll, part = 1, 2
	e.sync(coll, part, 10, "by-dev-rootcoord-dml_0_1v0", true)
	require.NoError(t, e.c.CreateIndex(e.ctx, catalog.IndexInfo{
		CollectionID: coll, FieldID: testVec, Name: "v",
		Params: map[string]string{"index_type": "HNSW", "metric_type": "L2"},
	}))

	claim := func() catalog.IndexTask {
		t.Helper()
		task, _, ok, err := e.c.ClaimIndexTask(e.ctx, "b", 0)
		require.NoError(t, err)
		require.True(t, ok, "the task is claimable")
		return task
	}
	var task catalog.IndexTask
	for range MaxIndexAttempts + 1 {
		task = claim()
		e.open() // shutdown mid-build, then restart
	}
	task = claim()
	require.NoError(t, e.c.FinishIndexTask(e.ctx, task.BuildID, task.Version, nil, 0, fmt.Errorf("transient")))
	tasks := e.c.IndexTasks(coll)
	require.Len(t, tasks, 1)
	require.Equal(t, catalog.IndexUnissued, tasks[0].State, "one failure after interrupted attempts is retried")
	require.Equal(t, 1, tasks[0].Failures)

	for range MaxIndexAttempts - 1 {
		task = claim()
		require.NoError(t, e.c.FinishIndexTask(e.ctx, task.BuildID, task.Version, nil, 0, fmt.Errorf("boom")))
	}
	tasks = e.c.IndexTasks(coll)
	require.Equal(t, catalog.IndexFailed, tasks[0].State, "MaxIndexAttempts failures stay Failed")
	require.Equal(t, "boom", tasks[0].FailReason)
}

// TestLostClaimIsHandedBackToItsBuilder: a task leased to a builder that
// claims again is one whose claim it never received (a remote answer
// lost): it goes to that builder again with a new version, and not to
// another builder before its lease ends; the lost attempt's result is
// stale.
func TestLostClaimIsHandedBackToItsBuilder(t *testing.T) {
	e := indexedEnv(t)
	lost, _, ok, err := e.c.ClaimIndexTask(e.ctx, "b", 0)
	require.NoError(t, err)
	require.True(t, ok)
	_, _, ok, err = e.c.ClaimIndexTask(e.ctx, "other", 0)
	require.NoError(t, err)
	require.False(t, ok, "leased to b")
	again, _, ok, err := e.c.ClaimIndexTask(e.ctx, "b", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, lost.BuildID, again.BuildID)
	require.Equal(t, lost.Version+1, again.Version)
	require.ErrorIs(t, e.c.FinishIndexTask(e.ctx, lost.BuildID, lost.Version, []string{"stale"}, 1, nil), ErrStaleClaim)
	require.Equal(t, catalog.IndexInProgress, e.c.IndexTasks(1)[0].State, "the lost attempt's result is ignored")
	require.NoError(t, e.c.FinishIndexTask(e.ctx, again.BuildID, again.Version, []string{"f"}, 1, nil))
	require.Equal(t, catalog.IndexFinished, e.c.IndexTasks(1)[0].State)
}

// TestClaimOfAGoneClaimantClaimsNothing: a claim whose context has ended
// hands nothing out, even with a task waiting.
func TestClaimOfAGoneClaimantClaimsNothing(t *testing.T) {
	e := indexedEnv(t)
	gone, cancel := context.WithCancel(e.ctx)
	cancel()
	_, _, _, err := e.c.ClaimIndexTask(gone, "b", time.Second)
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = e.c.ClaimCompaction(gone, "executor", time.Second)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, catalog.IndexUnissued, e.c.IndexTasks(1)[0].State)
}

// indexedEnv is a coordinator with one flushed segment of collection 1
// and an HNSW index on it: one build task to claim.
func indexedEnv(t *testing.T) *gcEnv {
	t.Helper()
	e := newGCEnv(t)
	e.sync(1, 2, 10, "by-dev-rootcoord-dml_0_1v0", true)
	require.NoError(t, e.c.CreateIndex(e.ctx, catalog.IndexInfo{
		CollectionID: 1, FieldID: testVec, Name: "v",
		Params: map[string]string{"index_type": "HNSW", "metric_type": "L2"},
	}))
	return e
}
