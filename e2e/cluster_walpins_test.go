package e2e

import (
	"context"
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
	walkafka "github.com/strata-db/strata/internal/wal/kafka"
)

// TestClusterWALTruncatedBehindQueryNodes runs a coordinator, a data node
// and a query node as processes on real engines. The query node reports
// the WAL offsets its delegator still needs (WALPinService); the
// coordinator truncates the collection's pchannel behind them and the
// channel checkpoints (the Kafka log start moves past offset 0, where the
// coordinator role kept everything before). The query node is then stopped
// (SIGSTOP, its session alive) while rows are inserted and flushed: the WAL
// it has not read yet is kept, and once it runs again it counts every row.
// Finally it is killed -9 and a new one loads the collection after the
// truncation: it reads the flushed rows from object storage and the rest
// from what the WAL kept, and counts every row.
func TestClusterWALTruncatedBehindQueryNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and four processes")
	}
	e := startRealEngines(t)
	bin := buildBinary(t)
	// Sessions outlive the query node's 12-second stop below.
	cfg := e.clusterConfig(t, 20*time.Second)
	coord := startRole(t, bin, "coordinator", cfg, false)
	startRole(t, bin, "datanode", cfg, false)
	qn := startRole(t, bin, "querynode", cfg, false)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := coord.client(t)
	const coll = crashColl // countRange's
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll)).WithShardNum(1)))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 16, 64)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.Len(t, desc.VirtualChannels, 1)
	pchannel := wal.PChannelOf(desc.VirtualChannels[0])
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	rng := rand.New(rand.NewPCG(41, 42))
	rows := 0
	insert := func(n int, flush bool) {
		t.Helper()
		_, err := c.Insert(ctx, insertOption(coll, genMovies(rows, n, rng)))
		require.NoError(t, err)
		rows += n
		if flush {
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
		}
	}
	for range 3 {
		insert(500, true)
	}

	// The coordinator truncates behind the query node's pins.
	kcfg := walkafka.Defaults()
	kcfg.Brokers = []string{e.kafka.Addr}
	log, err := walkafka.Open(kcfg, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, log.Close()) }()
	truncatedAt := func(off int64) bool {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		defer rcancel()
		r, err := log.Read(rctx, pchannel, off)
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		_, err = r.Next(rctx)
		return errors.Is(err, wal.ErrTruncated)
	}
	start := time.Now()
	require.Eventually(t, func() bool {
		if truncatedAt(0) {
			return true
		}
		insert(10, true) // the checkpoints move with every flush
		return false
	}, 2*time.Minute, time.Second, "the WAL was never truncated; coordinator's log:\n%s", coord.stderr.String())
	t.Logf("pchannel %s truncated behind the query node's pins %v after the first flushes", pchannel, time.Since(start).Round(time.Millisecond))
	n, err := countStrong(ctx, c, coll)
	require.NoError(t, err)
	require.EqualValues(t, rows, n)

	// The query node falls behind (stopped, its session alive): the WAL
	// moves on and the checkpoints with it, but the truncation stops at
	// the pin it reported; once it runs again it replays every row, and
	// the truncation passes that point.
	behind, err := log.End(ctx, pchannel)
	require.NoError(t, err)
	require.NoError(t, qn.cmd.Process.Signal(syscall.SIGSTOP))
	paused := time.Now()
	for time.Since(paused) < 12*time.Second {
		insert(50, true)
		time.Sleep(500 * time.Millisecond)
	}
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	r, err := log.Read(rctx, pchannel, behind)
	require.NoError(t, err)
	_, err = r.Next(rctx)
	require.NoError(t, err, "truncated under a live query node that is behind")
	require.NoError(t, r.Close())
	rcancel()
	require.NoError(t, qn.cmd.Process.Signal(syscall.SIGCONT))
	require.Eventually(t, func() bool {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		n, err := countStrong(rctx, c, coll)
		return err == nil && n == int64(rows)
	}, time.Minute, 200*time.Millisecond, "the query node that was behind does not count every row")
	t.Logf("a query node stopped for %v (its pin at offset ≤ %d) kept the WAL it needed and counts all %d rows once running again",
		time.Since(paused).Round(time.Second), behind, rows)
	// Caught up, it lets the truncation pass where it was held.
	require.Eventually(t, func() bool {
		if truncatedAt(behind) {
			return true
		}
		insert(10, true)
		return false
	}, time.Minute, time.Second, "the truncation stays held after the query node caught up")

	// Rows only in the WAL, then the query node dies and a new one loads.
	insert(300, false)
	qn.kill(t)
	killed := time.Now()
	startRole(t, bin, "querynode", cfg, false)
	require.Eventually(t, func() bool {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		n, err := countStrong(rctx, c, coll)
		return err == nil && n == int64(rows)
	}, 2*time.Minute, 200*time.Millisecond, "the new query node does not count every row; coordinator's log:\n%s", coord.stderr.String())
	t.Logf("query node killed after the truncation: a new one counts all %d rows %v later", rows, time.Since(killed).Round(time.Millisecond))
	cnt, distinct, err := countRange(ctx, c, 0, 1<<40)
	require.NoError(t, err)
	require.EqualValues(t, rows, cnt)
	require.EqualValues(t, distinct, cnt, "no row twice")
}
