package datacoord

import (
	"fmt"
	"testing"

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
