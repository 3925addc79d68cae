package e2e

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestClusterProxies runs two proxy processes (`strata run proxy`) beside
// the coordinator, a data node and a query node on real engines. DDL
// through one proxy is seen through the other at once; inserts and
// searches run through both; one proxy is killed -9 mid-load: the clients
// of the other see no failure, and every acknowledged row is there exactly
// once (a batch in flight on the killed proxy may or may not have landed).
func TestClusterProxies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and five processes")
	}
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.config(t, map[string]any{
		"cluster": map[string]any{"membership": map[string]any{"sessionTTL": "3s"}},
	})
	coord := startRole(t, bin, "coordinator", cfg, false)
	startRole(t, bin, "datanode", cfg, false)
	startRole(t, bin, "querynode", cfg, false)
	pa := startRole(t, bin, "proxy", cfg, false)
	pb := startRole(t, bin, "proxy", cfg, false)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ca, cb, cc := pa.client(t), pb.client(t), coord.client(t)
	const coll = crashColl // countRange's

	// DDL through A, seen through B (and the coordinator) at once.
	createTwoShards(ctx, t, ca, coll)
	has, err := cb.HasCollection(ctx, milvusclient.NewHasCollectionOption(coll))
	require.NoError(t, err)
	require.True(t, has, "a collection created through proxy A is seen through proxy B")
	require.NoError(t, cb.CreateAlias(ctx, milvusclient.NewCreateAliasOption(coll, "movies_now")))
	_, err = ca.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("movies_now"))
	require.NoError(t, err, "an alias created through B resolves through A")
	require.NoError(t, cc.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("scratch", moviesSchema("scratch"))))
	_, err = cb.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("scratch"))
	require.NoError(t, err)
	require.NoError(t, ca.DropCollection(ctx, milvusclient.NewDropCollectionOption("scratch")))
	_, err = cb.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("scratch"))
	require.ErrorContains(t, err, "can't find collection", "a collection dropped through A is gone through B")

	var (
		mu       sync.Mutex
		live     = map[int64]bool{}
		inFlight = map[int64]bool{} // rows of writes whose answer was lost
	)
	record := func(ms []movie, acked bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			if acked {
				live[m.id] = true
			} else {
				inFlight[m.id] = true
			}
		}
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for i, c := range []*milvusclient.Client{ca, cb} {
		batch := genMovies(i*1000, 1000, rng)
		_, err := c.Insert(ctx, insertOption(coll, batch))
		require.NoError(t, err)
		record(batch, true)
	}
	lt, err := cb.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	for _, c := range []*milvusclient.Client{ca, cb} {
		n, err := countStrong(ctx, c, coll)
		require.NoError(t, err)
		require.EqualValues(t, 2000, n)
	}

	// Ingest streams through both proxies and searches through B.
	var (
		stop               atomic.Bool
		wg                 sync.WaitGroup
		acksA, acksB       atomic.Int64
		failsB, readFailsB atomic.Int64
		searchesB          atomic.Int64
		firstErrMu         sync.Mutex
		firstErrB          error
	)
	noteB := func(err error) {
		firstErrMu.Lock()
		defer firstErrMu.Unlock()
		if firstErrB == nil {
			firstErrB = err
		}
	}
	stream := func(c *milvusclient.Client, base int, acks, fails *atomic.Int64, strict bool) {
		defer wg.Done()
		r := rand.New(rand.NewPCG(uint64(base), 23))
		for next := base; !stop.Load(); next += 50 {
			batch := genMovies(next, 50, r)
			ictx, icancel := context.WithTimeout(ctx, 20*time.Second)
			_, err := c.Insert(ictx, insertOption(coll, batch))
			icancel()
			if err != nil {
				record(batch, false)
				if fails != nil {
					fails.Add(1)
				}
				if strict {
					noteB(err)
				}
				continue
			}
			record(batch, true)
			acks.Add(1)
			time.Sleep(10 * time.Millisecond)
		}
	}
	wg.Add(3)
	go stream(ca, 100000, &acksA, nil, false)
	go stream(cb, 500000, &acksB, &failsB, true)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(24, 25))
		for !stop.Load() {
			qv := genMovies(900000, 1, r)[0].vec
			_, err := cb.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector(qv)}))
			searchesB.Add(1)
			if err != nil {
				readFailsB.Add(1)
				noteB(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	require.Eventually(t, func() bool { return acksA.Load() >= 10 && acksB.Load() >= 10 }, 60*time.Second, 20*time.Millisecond,
		"the ingest streams stalled")

	// Proxy A dies mid-load.
	pa.kill(t)
	base := acksB.Load()
	require.Eventually(t, func() bool { return acksB.Load() >= base+20 }, 60*time.Second, 20*time.Millisecond,
		"proxy B's stream stalled after proxy A died")
	stop.Store(true)
	wg.Wait()
	firstErrMu.Lock()
	require.NoError(t, errors.Join(firstErrB), "a client of proxy B failed while proxy A died")
	firstErrMu.Unlock()
	require.Zero(t, failsB.Load())
	require.Zero(t, readFailsB.Load())
	t.Logf("proxy A killed: proxy B served %d inserts and %d searches without a failure", acksB.Load(), searchesB.Load())

	// Every acknowledged row is there exactly once.
	mu.Lock()
	acked, unknown := len(live), 0
	for id := range inFlight {
		if !live[id] {
			unknown++
		}
	}
	mu.Unlock()
	n, err := countStrong(ctx, cb, coll)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(acked), "acknowledged rows lost")
	require.LessOrEqual(t, n, int64(acked+unknown), "rows stored that no write sent")
	cnt, distinct, err := countRange(ctx, cb, 0, 1<<40)
	require.NoError(t, err)
	require.EqualValues(t, distinct, cnt, "duplicated rows")
	t.Logf("acknowledged rows: %d, in flight when A died: %d, stored: %d", acked, unknown, n)
}

// TestClusterProxiesRBAC runs authorization on a coordinator and two
// proxies: users, roles and grants are changed through the coordinator
// (a change through a proxy is refused) and every proxy enforces them at
// once (the coordinator tells each to reload before the change returns).
func TestClusterProxiesRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and three processes")
	}
	e := startRealEngines(t)
	bin := buildBinary(t)
	cfg := e.config(t, map[string]any{
		"cluster":  map[string]any{"membership": map[string]any{"sessionTTL": "3s"}},
		"security": map[string]any{"authorizationEnabled": true},
	})
	coord := startRole(t, bin, "coordinator", cfg, false)
	pa := startRole(t, bin, "proxy", cfg, false)
	pb := startRole(t, bin, "proxy", cfg, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	login := func(p *roleProc, user, pw string) (*milvusclient.Client, error) {
		c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: p.addr, Username: user, Password: pw})
		if err == nil {
			t.Cleanup(func() { _ = c.Close(context.Background()) })
		}
		return c, err
	}
	root, err := login(coord, "root", "Milvus")
	require.NoError(t, err)
	rootA, err := login(pa, "root", "Milvus")
	require.NoError(t, err)
	_, err = login(pb, "root", "wrong")
	require.ErrorContains(t, err, "auth check failure")

	// A change through a proxy is refused; through the coordinator it is
	// enforced by both proxies at once.
	require.ErrorContains(t, rootA.CreateUser(ctx, milvusclient.NewCreateUserOption("alice", "alice-pw")), "coordinator")
	require.NoError(t, root.CreateUser(ctx, milvusclient.NewCreateUserOption("alice", "alice-pw")))
	require.NoError(t, root.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("c1", moviesSchema("c1"))))
	aliceB, err := login(pb, "alice", "alice-pw")
	require.NoError(t, err, "a user created on the coordinator logs in through proxy B")
	_, err = aliceB.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
	require.ErrorContains(t, err, "permission deny")
	require.NoError(t, root.CreateRole(ctx, milvusclient.NewCreateRoleOption("analyst")))
	require.NoError(t, root.GrantRole(ctx, milvusclient.NewGrantRoleOption("alice", "analyst")))
	require.NoError(t, root.GrantPrivilege(ctx, milvusclient.NewGrantPrivilegeOption("analyst", "Collection", "GetStatistics", "c1")))
	_, err = aliceB.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
	require.NoError(t, err, "a grant made on the coordinator holds on proxy B at once")
	require.NoError(t, root.DropUser(ctx, milvusclient.NewDropUserOption("alice")))
	_, err = login(pa, "alice", "alice-pw")
	require.ErrorContains(t, err, "auth check failure", "a dropped user no longer logs in through proxy A")
}
