package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/objstore/s3"
	"github.com/strata-db/strata/internal/wal"
)

// TestClusterEngines runs the server with every port on its cluster engine
// (meta on etcd, objects on S3, the WAL on Kafka), all started in-process,
// through insert, upsert, flush, search and a restart; the data directory
// stays empty.
func TestClusterEngines(t *testing.T) {
	engines := app.Defaults().Engines
	engines.Meta.Type, engines.Meta.Etcd.Endpoints, engines.Meta.Etcd.Root = app.EngineEtcd, []string{enginetest.Etcd(t)}, "strata/"
	engines.Objects.Type, engines.Objects.S3.Endpoint, engines.Objects.S3.Bucket = app.EngineS3, enginetest.S3(t), "strata"
	engines.Objects.S3.CreateBucket = true
	engines.WAL.Type, engines.WAL.Kafka.Brokers, engines.WAL.Kafka.TopicPrefix = app.EngineKafka, enginetest.Kafka(t), "e2e."
	dir := t.TempDir()
	withEngines := func(c *app.Config) { c.Engines = engines }
	s := startServer(t, dir, withEngines)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "movies"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll)).WithShardNum(2)))

	rng := rand.New(rand.NewPCG(3, 4))
	live := map[int64]movie{}
	all := genMovies(0, 1000, rng)
	for i := 0; i < len(all); i += 250 {
		_, err := c.Insert(ctx, insertOption(coll, all[i:i+250]))
		require.NoError(t, err)
	}
	for _, m := range all {
		live[m.id] = m
	}
	task, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewFlatIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	check := func(c *milvusclient.Client) {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, err := rs.GetColumn("count(*)").GetAsInt64(0)
		require.NoError(t, err)
		require.EqualValues(t, len(live), n)
		for q := range 3 {
			qv := genMovies(100000+q, 1, rng)[0].vec
			res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(qv)}).
				WithConsistencyLevel(entity.ClStrong).WithOutputFields("title"))
			require.NoError(t, err)
			var got []int64
			for i := 0; i < res[0].ResultCount; i++ {
				id, err := res[0].IDs.GetAsInt64(i)
				require.NoError(t, err)
				title, err := res[0].GetColumn("title").GetAsString(i)
				require.NoError(t, err)
				require.Equal(t, live[id].title, title)
				got = append(got, id)
			}
			require.Equal(t, bruteForce(live, qv, 10), got)
		}
	}
	check(c)

	// Upsert (a delete and an insert in one WAL record), flush, then write
	// more that lives only in the WAL when the server stops.
	up := genMovies(10, 20, rng)
	for i := range up {
		up[i].title = fmt.Sprintf("upserted-%d", up[i].id)
		live[up[i].id] = up[i]
	}
	_, err = c.Upsert(ctx, insertOption(coll, up))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	more := genMovies(5000, 200, rng)
	_, err = c.Insert(ctx, insertOption(coll, more))
	require.NoError(t, err)
	for _, m := range more {
		live[m.id] = m
	}
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id in [5000, 11]"))
	require.NoError(t, err)
	delete(live, 5000)
	delete(live, 11)
	check(c)

	// The data coordinator truncates the WAL behind the flushed checkpoints:
	// DeleteRecords moves some topic's log start past 0.
	cl, err := kgo.NewClient(kgo.SeedBrokers(engines.WAL.Kafka.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	require.Eventually(t, func() bool {
		starts, err := adm.ListStartOffsets(ctx)
		if err != nil {
			return false
		}
		truncated := false
		starts.Each(func(o kadm.ListedOffset) { truncated = truncated || o.Offset > 0 })
		return truncated
	}, 30*time.Second, 50*time.Millisecond, "no topic was truncated")

	s.stop()
	s = startServer(t, dir, withEngines)
	c = s.client(t)
	// The restart serves at once and reloads in the background: Loading
	// until the reload has replayed the Kafka topics, then Loaded.
	require.Eventually(t, func() bool {
		state, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
		require.NoError(t, err)
		require.Contains(t, []entity.LoadStateCode{entity.LoadStateLoading, entity.LoadStateLoaded}, state.State)
		return state.State == entity.LoadStateLoaded
	}, 60*time.Second, 50*time.Millisecond, "the collection loads again after the restart")
	check(c)
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 12").
		WithOutputFields("title").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 1, rs.ResultCount)
	title, err := rs.GetColumn("title").GetAsString(0)
	require.NoError(t, err)
	require.Equal(t, "upserted-12", title)
	s.stop()

	// Everything went to the engines: nothing under the data directory, the
	// WAL records are on the Kafka topics, the segments in the bucket.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
	ends, err := adm.ListEndOffsets(context.Background(), "e2e."+wal.PChannelName("", 0))
	require.NoError(t, err)
	end, ok := ends.Lookup("e2e."+wal.PChannelName("", 0), 0)
	require.True(t, ok)
	require.NoError(t, end.Err)
	require.Positive(t, end.Offset)
	objects, err := s3.Open(context.Background(), engines.Objects.S3, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, objects.Close()) }()
	files, err := objects.List(context.Background(), "")
	require.NoError(t, err)
	require.NotEmpty(t, files)
}
