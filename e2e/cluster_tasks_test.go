package e2e

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// The build of TestClusterIndexBuildMovesOffDeadNode: one segment of
// 20,000 random 128-dim vectors under HNSW M=16, efConstruction=100, sized
// to take seconds on a 2-core machine, so that the kill lands mid-build.
const (
	movesColl = "moves_build"
	movesDim  = 128
	movesRows = 20000
)

// createRandomVectors creates coll with one shard (an int64 key "id" and
// a dim-wide float vector "vec"), inserts n random vectors (seeded) in
// batches of 5,000 and flushes them.
func createRandomVectors(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string, dim, n int, seed uint64) {
	t.Helper()
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(int64(dim)))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(1)))
	rng := rand.New(rand.NewPCG(seed, seed))
	const batch = 5000
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		ids := make([]int64, 0, hi-lo)
		vecs := make([][]float32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			v := make([]float32, dim)
			for j := range v {
				v[j] = rng.Float32()
			}
			ids, vecs = append(ids, int64(i)), append(vecs, v)
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
			WithInt64Column("id", ids).WithFloatVectorColumn("vec", dim, vecs))
		require.NoError(t, err)
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
}

// logField returns the value of key in a slog text line ("" when absent).
func logField(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestClusterIndexBuildMovesOffDeadNode runs a coordinator, two data nodes
// and a query node as processes on real engines (etcd, Kafka 4, an S3
// server), starts an HNSW build and kills -9 the data node building it
// (found from its "index build started" line). The coordinator releases
// the build as soon as the node's session ends (its log names the build
// and the dead builder, strata_datacoord_tasks_released_total counts it),
// the other data node builds it, and the index serves searches. The time
// from the kill to the index Finished is logged; its bound is the session
// TTL plus one whole build on the other node (not the 10-minute lease).
func TestClusterIndexBuildMovesOffDeadNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and four processes")
	}
	const sessionTTL = 3 * time.Second
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.clusterConfig(t, sessionTTL)
	coord := startRole(t, bin, "coordinator", cfg, false)
	dns := []*roleProc{startRole(t, bin, "datanode", cfg, false), startRole(t, bin, "datanode", cfg, false)}
	startRole(t, bin, "querynode", cfg, false)

	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	c := coord.client(t)
	createRandomVectors(ctx, t, c, movesColl, movesDim, movesRows, 31)
	_, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(movesColl, "vec", index.NewHNSWIndex(entity.L2, 16, 100)))
	require.NoError(t, err)

	describe := func() milvusclient.IndexDescription {
		t.Helper()
		d, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(movesColl, "vec"))
		require.NoError(t, err)
		return d
	}
	finished := index.IndexState(commonpb.IndexState_Finished)

	// The node building it says so.
	var holder, other *roleProc
	var started string
	require.Eventually(t, func() bool {
		for i, dn := range dns {
			if lines := logLines(dn.stderr, `msg="index build started"`); len(lines) > 0 {
				holder, other, started = dn, dns[1-i], lines[0]
				return true
			}
		}
		return false
	}, 2*time.Minute, 20*time.Millisecond, "no data node started the build; coordinator's log:\n%s", coord.stderr.String())
	build, builder := logField(started, "build"), logField(started, "builder")
	require.NotEmpty(t, build)
	require.True(t, strings.HasPrefix(builder, "datanode-"), "the builder is named by its session: %s", started)
	time.Sleep(500 * time.Millisecond) // deep in its insert loop
	require.NotEqual(t, finished, describe().State, "the build finished before the kill; the test needs a bigger build")

	holder.kill(t)
	killed := time.Now()
	require.Eventually(t, func() bool {
		d := describe()
		require.NotEqual(t, index.IndexState(commonpb.IndexState_Failed), d.State, "an abandoned build is not a failure")
		return d.State == finished
	}, 8*time.Minute, 100*time.Millisecond, "the build did not finish on the other node; coordinator's log:\n%s\nother node's log:\n%s",
		coord.stderr.String(), other.stderr.String()) // a hang guard: a loaded machine builds slowly
	took := time.Since(killed)
	d := describe()
	require.EqualValues(t, movesRows, d.IndexedRows)
	require.Zero(t, d.PendingIndexRows)

	// The coordinator released the build from the dead builder, and the
	// other node built it under a new version.
	released := logLines(coord.stderr, "index build released from a dead builder", "build="+build, "builder="+builder)
	require.Len(t, released, 1, "coordinator's log:\n%s", coord.stderr.String())
	built := logLines(other.stderr, `msg="index built"`, "build="+build)
	require.Len(t, built, 1, "the other node's log:\n%s", other.stderr.String())
	resp, err := http.Get("http://" + coord.metrics + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Contains(t, string(body), `strata_datacoord_tasks_released_total{kind="index"} 1`)
	at := func(line string) time.Duration {
		ts, err := time.Parse(time.RFC3339Nano, logField(line, "time"))
		require.NoError(t, err, line)
		return ts.Sub(killed).Round(time.Millisecond)
	}
	restarted := logLines(other.stderr, `msg="index build started"`, "build="+build)
	require.NotEmpty(t, restarted)
	t.Logf("data node killed mid-build: released %v after the kill (session TTL %v), rebuilt from %v on the other node "+
		"(took=%s), index Finished %v after the kill",
		at(released[0]), sessionTTL, at(restarted[len(restarted)-1]), logField(built[0], "took"), took.Round(time.Millisecond))
	require.Less(t, at(released[0]), sessionTTL+5*time.Second, "released long after the session ended")

	// The index serves.
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(movesColl))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	q := make([]float32, movesDim)
	rs, err := c.Search(ctx, milvusclient.NewSearchOption(movesColl, 10, []entity.Vector{entity.FloatVector(q)}).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 10, rs[0].ResultCount)
}
