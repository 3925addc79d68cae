package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/storage"
)

// waitCompaction runs a manual compaction and waits until it completes.
func waitCompaction(t *testing.T, ctx context.Context, svc milvuspb.MilvusServiceClient, coll string) {
	t.Helper()
	resp, err := svc.ManualCompaction(ctx, &milvuspb.ManualCompactionRequest{CollectionName: coll})
	require.NoError(t, err)
	require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	require.Eventually(t, func() bool {
		st, err := svc.GetCompactionState(ctx, &milvuspb.GetCompactionStateRequest{CompactionID: resp.GetCompactionID()})
		return err == nil && st.GetState() == commonpb.CompactionState_Completed
	}, 30*time.Second, 50*time.Millisecond)
	st, err := svc.GetCompactionState(ctx, &milvuspb.GetCompactionStateRequest{CompactionID: resp.GetCompactionID()})
	require.NoError(t, err)
	require.Zero(t, st.GetFailedPlanNo())
}

func TestCompactionRemovesDeletedRows(t *testing.T) {
	dir := t.TempDir()
	manualOnly := func(cfg *app.Config) {
		cfg.DataCoord.Compaction.MinSmallSegments = 1 << 30
		cfg.DataCoord.Compaction.L0Count = 1 << 30
		cfg.DataCoord.Compaction.L0MaxAge = time.Hour
		cfg.DataCoord.Compaction.DeletedRatio = 2
	}
	s := startServer(t, dir, manualOnly)
	c := s.client(t)
	ctx := ctxT(t)
	svc := c.GetService()
	const coll = "compact"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	indexAndLoad(ctx, t, c, coll, entity.L2)

	rng := rand.New(rand.NewPCG(9, 9))
	live := map[int64]movie{}
	for b := 0; b < 5; b++ {
		ms := genMovies(b*400, 400, rng)
		_, err := c.Insert(ctx, insertOption(coll, ms))
		require.NoError(t, err)
		for _, m := range ms {
			live[m.id] = m
		}
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}
	// Delete 30% of the rows, then flush so the deletes become an L0 segment.
	var del []int64
	for id := range live {
		if id%10 < 3 {
			del = append(del, id)
		}
	}
	_, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithInt64IDs("id", del))
	require.NoError(t, err)
	for _, id := range del {
		delete(live, id)
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	segs, err := svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
	require.NoError(t, err)
	l1, l0 := 0, 0
	for _, s := range segs.GetInfos() {
		if s.GetLevel() == commonpb.SegmentLevel_L0 {
			l0++
		} else {
			l1++
		}
	}
	require.Equal(t, 5, l1)
	require.GreaterOrEqual(t, l0, 1)

	check := func() {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
		require.EqualValues(t, len(live), n)
		for q := 0; q < 3; q++ {
			qv := genMovies(90000+q, 1, rng)[0].vec
			res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(qv)}).
				WithConsistencyLevel(entity.ClStrong).WithSearchParam("metric_type", "L2"))
			require.NoError(t, err)
			want := bruteForce(live, qv, 10)
			var got []int64
			for i := 0; i < res[0].ResultCount; i++ {
				id, _ := res[0].IDs.GetAsInt64(i)
				got = append(got, id)
			}
			require.Equal(t, want, got)
		}
	}
	check()
	waitCompaction(t, ctx, svc, coll)

	segs, err = svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
	require.NoError(t, err)
	var rows int64
	var live1 []*milvuspb.PersistentSegmentInfo
	for _, s := range segs.GetInfos() {
		require.NotEqual(t, commonpb.SegmentLevel_L0, s.GetLevel(), "L0 segments are compacted away")
		live1 = append(live1, s)
		rows += s.GetNumRows()
	}
	require.Len(t, live1, 1, "the small segments were merged")
	require.EqualValues(t, len(live), rows, "deleted rows are physically gone")

	// The merged segment's binlogs hold exactly the live rows.
	seg := live1[0]
	pattern := filepath.Join(s.storageDir(t), "files", "insert_log", "*", "*", itoa(seg.GetSegmentID()), "100", "*")
	files, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	bl, err := storage.DecodeBinlog(data)
	require.NoError(t, err)
	require.Equal(t, len(live), bl.Column().Len())

	// The query node switched to the merged segment without a gap or duplicate.
	require.Eventually(t, func() bool {
		qs, err := svc.GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{CollectionName: coll})
		return err == nil && len(qs.GetInfos()) == 1 && qs.GetInfos()[0].GetSegmentID() == seg.GetSegmentID()
	}, 20*time.Second, 50*time.Millisecond)
	check()

	s.stop()
	s = startServer(t, dir, manualOnly)
	c = s.client(t)
	check()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
