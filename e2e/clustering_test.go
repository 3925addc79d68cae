package e2e

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

func TestClusteringCompaction(t *testing.T) {
	dir := t.TempDir()
	tweak := func(cfg *app.Config) {
		cfg.DataCoord.Compaction.MinSmallSegments = 1 << 30
		cfg.DataCoord.Compaction.L0Count = 1 << 30
		cfg.DataCoord.Compaction.L0MaxAge = time.Hour
		cfg.DataCoord.Compaction.ClusteringMaxRows = 250
	}
	s := startServer(t, dir, tweak)
	c := s.client(t)
	ctx := ctxT(t)
	svc := c.GetService()
	const coll = "clustered"
	schema := moviesSchema(coll)
	for _, f := range schema.Fields {
		if f.Name == "year" {
			f.IsClusteringKey = true
		}
	}
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	rng := rand.New(rand.NewPCG(11, 11))
	live := map[int64]movie{}
	for b := 0; b < 4; b++ {
		ms := genMovies(b*300, 300, rng)
		_, err := c.Insert(ctx, insertOption(coll, ms))
		require.NoError(t, err)
		for _, m := range ms {
			live[m.id] = m
		}
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}
	_, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id < 100"))
	require.Error(t, err, "a filter delete needs the collection loaded")
	indexAndLoad(ctx, t, c, coll, entity.L2)
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id < 100"))
	require.NoError(t, err)
	for id := range live {
		if id < 100 {
			delete(live, id)
		}
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	waitCompaction(t, ctx, svc, coll)
	segs, err := svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
	require.NoError(t, err)
	var rows int64
	l2 := 0
	for _, sg := range segs.GetInfos() {
		if sg.GetLevel() == commonpb.SegmentLevel_L2 {
			l2++
		}
		require.NotEqual(t, commonpb.SegmentLevel_L1, sg.GetLevel(), "every L1 segment was clustered")
		rows += sg.GetNumRows()
	}
	require.GreaterOrEqual(t, l2, 4, "1,100 rows in segments of at most ~250 rows")
	require.EqualValues(t, len(live), rows)

	// Reads with and without clustering-key filters stay exact while and
	// after the query node switches to the L2 segments.
	check := func() {
		t.Helper()
		for _, f := range []string{"year == 1960", "year >= 2000", "year < 1955 or year > 2015", "year in [1951, 1999]", "color == 'red'"} {
			rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(f).WithOutputFields("count(*)").
				WithConsistencyLevel(entity.ClStrong))
			require.NoError(t, err)
			n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
			want := 0
			for _, m := range live {
				if matchYear(f, m) {
					want++
				}
			}
			require.EqualValues(t, want, n, f)
		}
	}
	check()
	require.Eventually(t, func() bool {
		qs, err := svc.GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{CollectionName: coll})
		if err != nil || len(qs.GetInfos()) != l2 {
			return false
		}
		for _, sg := range qs.GetInfos() {
			if sg.GetLevel() != commonpb.SegmentLevel_L2 {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond, "the query node serves the L2 segments, and says so")
	check()
	s.stop()
	s = startServer(t, dir, tweak)
	c = s.client(t)
	check()
}

// matchYear evaluates the filters of TestClusteringCompaction in Go.
func matchYear(f string, m movie) bool {
	switch f {
	case "year == 1960":
		return m.year == 1960
	case "year >= 2000":
		return m.year >= 2000
	case "year < 1955 or year > 2015":
		return m.year < 1955 || m.year > 2015
	case "year in [1951, 1999]":
		return m.year == 1951 || m.year == 1999
	case "color == 'red'":
		return m.color == "red"
	}
	panic(fmt.Sprintf("unknown filter %q", f))
}
