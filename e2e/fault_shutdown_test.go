//go:build fault

package e2e

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// The shutdown fault test: SIGTERM while an HNSW build runs. The build is
// sized to take tens of seconds on a 2-core machine (40,000 × 128-dim rows,
// M=16, efConstruction=500: 20-30 s measured here), so a shutdown that
// waits for it is far slower than one that cancels it.
const (
	shutdownColl     = "shutdown_build"
	shutdownDim      = 128
	shutdownRows     = 40000
	shutdownDeadline = 5 * time.Second
)

// describeVecIndex returns the state of the collection's vector index.
func describeVecIndex(ctx context.Context, t *testing.T, c *milvusclient.Client) milvusclient.IndexDescription {
	t.Helper()
	desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(shutdownColl, "vec"))
	require.NoError(t, err)
	return desc
}

// TestFaultShutdownDuringIndexBuild: SIGTERM during an HNSW build stops the
// process within seconds with exit code 0 (the build is cancelled, not
// waited for), and after a restart the build is claimed again and finishes:
// the task was neither lost nor marked Failed.
func TestFaultShutdownDuringIndexBuild(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	p := startProc(t, bin, dir)
	c := p.client(t)
	createRandomVectors(ctx, t, c, shutdownColl, shutdownDim, shutdownRows, 17)
	_, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(shutdownColl, "vec",
		index.NewHNSWIndex(entity.L2, 16, 500)))
	require.NoError(t, err)

	// The build is running once the index reports InProgress with rows
	// still pending; give the builder a moment to be deep in its insert loop.
	require.Eventually(t, func() bool {
		d := describeVecIndex(ctx, t, c)
		return index.IndexState(commonpb.IndexState_InProgress) == d.State && d.PendingIndexRows > 0
	}, 30*time.Second, 100*time.Millisecond, "the index build never started")
	time.Sleep(2 * time.Second)
	d := describeVecIndex(ctx, t, c)
	require.NotEqual(t, index.IndexState(commonpb.IndexState_Finished), d.State,
		"the build finished before the shutdown; the test needs a bigger build")

	start := time.Now()
	code := p.termWithin(t, shutdownDeadline)
	t.Logf("SIGTERM to exit: %v", time.Since(start))
	require.Equal(t, 0, code, "a clean shutdown exits 0; stderr:\n%s", p.stderr.String())

	// After the restart the build is retried and completes.
	p = startProc(t, bin, dir)
	c = p.client(t)
	require.Eventually(t, func() bool {
		d := describeVecIndex(ctx, t, c)
		require.NotEqual(t, index.IndexState(commonpb.IndexState_Failed), d.State, "the interrupted build is not a failure")
		return d.State == index.IndexState(commonpb.IndexState_Finished)
	}, 8*time.Minute, 500*time.Millisecond, "the index build did not complete after the restart") // a hang guard: a loaded CI machine builds slowly
	d = describeVecIndex(ctx, t, c)
	require.EqualValues(t, shutdownRows, d.IndexedRows)
	require.Zero(t, d.PendingIndexRows)

	// And the index serves.
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(shutdownColl))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	q := make([]float32, shutdownDim)
	rs, err := c.Search(ctx, milvusclient.NewSearchOption(shutdownColl, 5, []entity.Vector{entity.FloatVector(q)}).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 5, rs[0].ResultCount)
	require.Equal(t, 0, p.termWithin(t, shutdownDeadline))
}

// termWithin sends SIGTERM and requires the process to exit within limit;
// it returns the exit code. A process still running at the limit is killed
// and the test fails.
func (p *proc) termWithin(t *testing.T, limit time.Duration) int {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(limit):
		p.kill(t)
		t.Fatalf("process still running %v after SIGTERM; stderr:\n%s", limit, p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, p.err)
	return 0
}
