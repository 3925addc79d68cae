package e2e

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

func TestCollectionTTL(t *testing.T) {
	s := startServer(t, t.TempDir(), func(cfg *app.Config) {
		cfg.DataCoord.Compaction.MinSmallSegments = 1 << 30
	})
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "ttl"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	rng := rand.New(rand.NewPCG(4, 4))
	_, err := c.Insert(ctx, insertOption(coll, genMovies(0, 100, rng)))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	indexAndLoad(ctx, t, c, coll, entity.L2)
	count := func() int64 {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
		return n
	}
	require.EqualValues(t, 100, count())

	require.NoError(t, c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(coll).
		WithProperty("collection.ttl.seconds", 1)))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.Equal(t, "1", desc.Properties["collection.ttl.seconds"])
	time.Sleep(1100 * time.Millisecond) // let the rows age past the TTL
	require.Eventually(t, func() bool { return count() == 0 }, 10*time.Second, 100*time.Millisecond,
		"expired rows are invisible")

	// Compaction removes them physically.
	svc := c.GetService()
	waitCompaction(t, ctx, svc, coll)
	segs, err := svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
	require.NoError(t, err)
	for _, sg := range segs.GetInfos() {
		require.Zero(t, sg.GetNumRows(), "segment %d still holds expired rows", sg.GetSegmentID())
	}
}
