package querycoord_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/proxy"
)

// readLoop runs a search and a count query through a proxy, one after the
// other, until it ends; each must answer as the reference node does.
type readLoop struct {
	t      *testing.T
	stop   atomic.Bool
	done   atomic.Int64 // reads done, all exact
	failed chan error   // the first read that failed or was not exact; closed when the loop ends
	err    error
}

// startReads starts a readLoop through px (the reference answers are read
// first).
func (c *cluster) startReads(px *proxy.Proxy) *readLoop {
	t := c.t
	ctx := context.Background()
	search, count := searches(t)["top-k"], queries()["count"]
	wantSearch, err := c.s.Proxy.Search(ctx, search)
	require.NoError(t, err)
	wantCount, err := c.s.Proxy.Query(ctx, count)
	require.NoError(t, err)
	r := &readLoop{t: t, failed: make(chan error, 1)}
	once := func() error {
		got, err := px.Search(ctx, search)
		if err == nil && got.GetStatus().GetCode() != 0 {
			err = fmt.Errorf("search: %s", got.GetStatus().GetReason())
		}
		if err == nil && !proto.Equal(wantSearch.GetResults(), got.GetResults()) {
			err = fmt.Errorf("search:\n got  %v\n want %v", got.GetResults(), wantSearch.GetResults())
		}
		if err != nil {
			return err
		}
		q, err := px.Query(ctx, count)
		if err == nil && q.GetStatus().GetCode() != 0 {
			err = fmt.Errorf("count: %s", q.GetStatus().GetReason())
		}
		if err == nil && !proto.Equal(wantCount.GetFieldsData()[0], q.GetFieldsData()[0]) {
			err = fmt.Errorf("count: %v, want %v", q.GetFieldsData(), wantCount.GetFieldsData())
		}
		return err
	}
	go func() {
		defer close(r.failed)
		for !r.stop.Load() {
			if err := once(); err != nil {
				r.failed <- err
				return
			}
			r.done.Add(1)
		}
	}()
	t.Cleanup(func() { r.end() })
	return r
}

// check fails the test when a read failed or was not exact.
func (r *readLoop) check() {
	r.t.Helper()
	if r.err == nil {
		select {
		case err := <-r.failed:
			r.err = err
		default:
		}
	}
	require.NoError(r.t, r.err)
}

// more waits for n more reads, all exact.
func (r *readLoop) more(n int64) {
	r.t.Helper()
	from := r.done.Load()
	require.Eventually(r.t, func() bool { r.check(); return r.done.Load() >= from+n }, 30*time.Second, time.Millisecond)
	r.check()
}

// until waits for cond while the reads go on, all exact.
func (r *readLoop) until(cond func() bool, msg string) {
	r.t.Helper()
	require.Eventually(r.t, func() bool { r.check(); return cond() }, 30*time.Second, 10*time.Millisecond, msg)
	r.check()
}

// end stops the loop and returns how many reads it did, all exact
// (idempotent).
func (r *readLoop) end() int64 {
	r.t.Helper()
	r.stop.Store(true)
	for err := range r.failed {
		if r.err == nil {
			r.err = err
		}
	}
	require.NoError(r.t, r.err)
	return r.done.Load()
}

// TestHealAfterADeathKeepsReadsExact: two replicas, one over two nodes;
// one of those dies while searches and queries run. Its reads in progress
// fail over to the other replica, and the shard it led moves to the
// replica's other node (which then leads both); every read before, during
// and after answers as one node holding everything does, none fails.
func TestHealAfterADeathKeepsReadsExact(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	c.addLocal()
	c.addLocal()
	c.addLocal()
	ok(t, c.load(2), nil)
	reps := c.replicas()
	require.Len(t, reps, 2)
	i := slices.IndexFunc(reps, func(r *milvuspb.ReplicaInfo) bool { return len(r.GetNodeIds()) == 2 })
	require.GreaterOrEqual(t, i, 0, "a replica over two nodes: %v", reps)
	replica, dying, survivor := reps[i].GetReplicaID(), reps[i].GetNodeIds()[0], reps[i].GetNodeIds()[1]
	c.same()

	reads := c.startReads(c.px)
	reads.more(3)
	c.kill(dying)
	reads.until(func() bool {
		for _, r := range c.replicas() {
			if r.GetReplicaID() == replica {
				return slices.Equal(r.GetNodeIds(), []int64{survivor})
			}
		}
		return false
	}, "the dead node's shard moves to the replica's other node")
	reads.more(3)
	t.Logf("%d reads before, during and after the heal, all exact", reads.end())
	c.same()
}
