package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// roleProc is a process of a cluster: `strata run ROLE`.
type roleProc struct {
	*proc
	role     string
	internal string
}

// startRole starts `strata run role` on the engines' configuration and
// waits until its /healthz answers ok (or, with standby, until it
// answers at all). Coordinators and proxies serve the Milvus API on a
// free port.
func startRole(t *testing.T, bin, role, cfg string, standby bool) *roleProc {
	t.Helper()
	p := &proc{stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.metrics = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	internal := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args := []string{
		"run", role, "--config", cfg, "--data-dir", t.TempDir(), "--log-level", "info",
		"--metrics-addr", p.metrics, "--internal-addr", internal,
	}
	if role == "coordinator" || role == "proxy" {
		p.addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		args = append(args, "--addr", p.addr)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill(t) })
	ok := false
	if standby {
		ok = p.waitAnswers(60 * time.Second)
	} else {
		ok = p.waitHealthy(60 * time.Second)
	}
	require.True(t, ok, "%s did not start; stderr:\n%s", role, p.stderr.String())
	return &roleProc{proc: p, role: role, internal: internal}
}

// clusterConfig is the engines' configuration with membership sessions of
// ttl: short, so that a killed process is noticed within seconds.
func (e *realEngines) clusterConfig(t *testing.T, ttl time.Duration) string {
	t.Helper()
	return e.config(t, map[string]any{
		"cluster": map[string]any{"membership": map[string]any{"sessionTTL": ttl.String()}},
	})
}

// waitAnswers waits until /healthz answers anything (a standby's 503).
func (p *proc) waitAnswers(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return false
		default:
		}
		if resp, err := http.Get("http://" + p.metrics + "/healthz"); err == nil {
			_ = resp.Body.Close()
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// createTwoShards creates a movies collection of two shards with an HNSW
// index on its vector.
func createTwoShards(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string) {
	t.Helper()
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll)).WithShardNum(2)))
	task, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 16, 64)))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))
}

// TestClusterProcesses runs Strata as a cluster of processes on real
// engines (etcd, Kafka 4, an S3 server): a coordinator (with a standby),
// two data nodes and two query nodes, each `strata run ROLE`, and drives it
// with the Go SDK through the failures issue 18 names: a data node killed
// mid-ingest, a query node killed mid-search with two replicas, the active
// coordinator killed. Every acknowledged row must be there exactly once
// after each; the recovery times are logged.
func TestClusterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and six processes")
	}
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.clusterConfig(t, 3*time.Second)
	coord := startRole(t, bin, "coordinator", cfg, false)
	standby := startRole(t, bin, "coordinator", cfg, true)
	dn1 := startRole(t, bin, "datanode", cfg, false)
	startRole(t, bin, "datanode", cfg, false)
	qn1 := startRole(t, bin, "querynode", cfg, false)
	startRole(t, bin, "querynode", cfg, false)

	// A node's /healthz/detail names its session.
	resp, err := http.Get("http://" + qn1.metrics + "/healthz/detail")
	require.NoError(t, err)
	var detail struct {
		Status  string `json:"status"`
		Cluster struct {
			NodeID  int64  `json:"nodeId"`
			Role    string `json:"role"`
			Address string `json:"address"`
		} `json:"cluster"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&detail))
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "ok", detail.Status)
	require.Equal(t, "querynode", detail.Cluster.Role)
	require.Equal(t, qn1.internal, detail.Cluster.Address)
	require.Positive(t, detail.Cluster.NodeID)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := coord.client(t)
	const coll = crashColl // countRange's
	createTwoShards(ctx, t, c, coll)

	var (
		mu   sync.Mutex
		live = map[int64]movie{}
	)
	record := func(ms []movie) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			live[m.id] = m
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	first := genMovies(0, 2000, rng)
	_, err = c.Insert(ctx, insertOption(coll, first))
	require.NoError(t, err)
	record(first)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll).WithReplica(2))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	// The placement is real: two replicas on the two query nodes.
	reps, err := c.DescribeReplica(ctx, milvusclient.NewDescribeReplicaOption(coll))
	require.NoError(t, err)
	require.Len(t, reps, 2)
	require.NotEqual(t, reps[0].Nodes, reps[1].Nodes, "replicas on distinct nodes")

	checkAll := func(c *milvusclient.Client, what string) {
		t.Helper()
		mu.Lock()
		want := len(live)
		mu.Unlock()
		n, err := countStrong(ctx, c, coll)
		require.NoError(t, err, what)
		require.EqualValues(t, want, n, "%s: count(*) is not the acknowledged rows", what)
		cnt, distinct, err := countRange(ctx, c, 0, 1<<40)
		require.NoError(t, err, what)
		require.EqualValues(t, distinct, cnt, "%s: duplicates", what)
		qv := genMovies(900000, 1, rng)[0].vec
		res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(qv)}).
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, what)
		require.Equal(t, 10, res[0].ResultCount, what)
	}
	checkAll(c, "after load")

	// An ingest stream runs through every failure below; a batch counts
	// once its insert is acknowledged.
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
		acks atomic.Int64
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(13, 14))
		for next := 100000; !stop.Load(); next += 100 {
			batch := genMovies(next, 100, r)
			ictx, icancel := context.WithTimeout(ctx, 20*time.Second)
			_, err := c.Insert(ictx, insertOption(coll, batch))
			icancel()
			if err == nil {
				record(batch)
				acks.Add(1)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	waitAcks := func(n int64) {
		t.Helper()
		base := acks.Load()
		require.Eventually(t, func() bool { return acks.Load() >= base+n }, 60*time.Second, 20*time.Millisecond,
			"the ingest stream stalled")
	}
	waitAcks(5)

	// 1. A data node dies mid-ingest: its vchannels move to the other,
	// which resumes from the channel checkpoint.
	dn1.kill(t)
	killed := time.Now()
	waitAcks(10)
	// A flush completes only once every vchannel's rows are in object
	// storage: the dead node's vchannels must have moved.
	ft, err = c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	t.Logf("data node killed: a flush of every vchannel completed %v later", time.Since(killed).Round(time.Millisecond))

	// 2. A query node dies mid-search with two replicas: reads keep
	// succeeding on the other replica.
	var failedReads atomic.Int64
	readsDone := make(chan struct{})
	go func() {
		defer close(readsDone)
		for i := 0; i < 50; i++ {
			qv := genMovies(800000+i, 1, rng)[0].vec
			if _, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector(qv)})); err != nil {
				failedReads.Add(1)
			}
			time.Sleep(40 * time.Millisecond)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	qn1.kill(t)
	<-readsDone
	t.Logf("query node killed with 2 replicas: %d of 50 searches failed", failedReads.Load())
	require.Zero(t, failedReads.Load(), "a search failed while the other replica was serving")

	// 3. The active coordinator dies: the standby takes over.
	stop.Store(true)
	wg.Wait()
	coord.kill(t)
	killed = time.Now()
	require.True(t, standby.waitHealthy(60*time.Second), "the standby did not take over; stderr:\n%s", standby.stderr.String())
	t.Logf("coordinator killed: the standby serves %v later", time.Since(killed).Round(time.Millisecond))
	c2 := standby.client(t)
	require.Eventually(t, func() bool {
		state, err := c2.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
		return err == nil && state.State == entity.LoadStateLoaded
	}, 120*time.Second, 100*time.Millisecond, "the collection serves again after the failover; new coordinator's log:\n%s", standby.stderr.String())
	checkAll(c2, "after the coordinator failover")
	ft, err = c2.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	checkAll(c2, "after a flush")
	mu.Lock()
	t.Logf("acknowledged rows: %d", len(live))
	mu.Unlock()
}

// TestClusterQueryNodeRecovery runs replica_number=1 over two query node
// processes (one shard each) on real engines. One is killed -9: reads of
// its shard fail (Milvus's retriable 503) until its session ends and its
// shard is loaded on the other node; the time until reads succeed again is
// logged. Its bound is the session TTL plus the reload of one vchannel
// (its sealed segments from object storage and the WAL since its
// checkpoint); it is not asserted beyond a generous limit. A third query
// node then joins and a shard moves to it while reads run: none fails and
// each counts every row.
func TestClusterQueryNodeRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and five processes")
	}
	const sessionTTL = 3 * time.Second
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.clusterConfig(t, sessionTTL)
	coord := startRole(t, bin, "coordinator", cfg, false)
	startRole(t, bin, "datanode", cfg, false)
	qn1 := startRole(t, bin, "querynode", cfg, false)
	startRole(t, bin, "querynode", cfg, false)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := coord.client(t)
	const coll = crashColl
	createTwoShards(ctx, t, c, coll)
	rng := rand.New(rand.NewPCG(21, 22))
	const rows = 2000
	_, err := c.Insert(ctx, insertOption(coll, genMovies(0, rows, rng)))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll).WithReplica(1))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	// leaders returns the replica's nodes and each shard's leader.
	leaders := func() ([]int64, map[string]int64) {
		t.Helper()
		reps, err := c.DescribeReplica(ctx, milvusclient.NewDescribeReplicaOption(coll))
		require.NoError(t, err)
		require.Len(t, reps, 1)
		out := map[string]int64{}
		for _, sh := range reps[0].Shards {
			out[sh.ChannelName] = sh.ShardLeader
		}
		return reps[0].Nodes, out
	}
	distinct := func(l map[string]int64) int {
		seen := map[int64]bool{}
		for _, n := range l {
			seen[n] = true
		}
		return len(seen)
	}
	nodes, l := leaders()
	require.Len(t, nodes, 2)
	require.Equal(t, 2, distinct(l), "one shard on each query node")
	count := func() (int64, error) {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		return countStrong(rctx, c, coll)
	}
	n, err := count()
	require.NoError(t, err)
	require.EqualValues(t, rows, n)

	// One query node dies: reads recover once its shard is reloaded.
	qn1.kill(t)
	killed := time.Now()
	failed := 0
	require.Eventually(t, func() bool {
		n, err := count()
		if err != nil {
			failed++
			return false
		}
		require.EqualValues(t, rows, n, "every row once after the recovery")
		return true
	}, 60*time.Second, 50*time.Millisecond, "reads did not recover; coordinator's log:\n%s", coord.stderr.String())
	t.Logf("query node killed with replica_number=1: reads succeed again %v later (%d reads failed meanwhile; bound: session TTL %v + the reload of one vchannel)",
		time.Since(killed).Round(time.Millisecond), failed, sessionTTL)
	_, l = leaders()
	require.Equal(t, 1, distinct(l), "both shards on the node left")

	// A query node joins: a shard moves to it while reads run.
	var (
		stop      atomic.Bool
		reads     atomic.Int64
		readErr   atomic.Value
		readsDone = make(chan struct{})
	)
	go func() {
		defer close(readsDone)
		for !stop.Load() {
			n, err := count()
			if err == nil && n != rows {
				err = fmt.Errorf("count(*) %d, want %d", n, rows)
			}
			if err != nil {
				readErr.Store(err)
				return
			}
			reads.Add(1)
		}
	}()
	joined := time.Now()
	startRole(t, bin, "querynode", cfg, false)
	require.Eventually(t, func() bool {
		_, l := leaders()
		return distinct(l) == 2 || readErr.Load() != nil
	}, 60*time.Second, 50*time.Millisecond, "no shard moved to the new node; coordinator's log:\n%s", coord.stderr.String())
	base := reads.Load()
	require.Eventually(t, func() bool { return reads.Load() >= base+3 || readErr.Load() != nil }, 30*time.Second, 20*time.Millisecond)
	stop.Store(true)
	<-readsDone
	if err, ok := readErr.Load().(error); ok {
		require.NoError(t, err, "a read failed during the rebalance")
	}
	nodes, _ = leaders()
	require.Len(t, nodes, 2)
	t.Logf("query node joined: a shard moved to it %v later, %d reads meanwhile, none failed",
		time.Since(joined).Round(time.Millisecond), reads.Load())
	qv := genMovies(900000, 1, rng)[0].vec
	res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(qv)}).WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 10, res[0].ResultCount)
}
