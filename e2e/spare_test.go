package e2e

import (
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/catalog"
)

// TestSpareSegmentsAreInvisible: the data coordinator keeps a spare empty
// segment per written vchannel (so that assigning rows to a new segment
// needs no meta-store write under the pchannel lock). Clients never see
// it: GetPersistentSegmentInfo lists only the segments that took rows,
// before and after a restart and a flush, and count(*) is unchanged.
func TestSpareSegmentsAreInvisible(t *testing.T) {
	dir := t.TempDir()
	tweak := func(cfg *app.Config) {
		cfg.DataCoord.SegmentMaxSize = 40000 // 100 four-dimensional rows fill a segment at the second batch
	}
	s := startServer(t, dir, tweak)
	c := s.client(t)
	ctx := ctxT(t)
	svc := c.GetService()
	const coll = "spare"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(1)))
	insert := func(from, n int) {
		ids := make([]int64, n)
		vecs := make([][]float32, n)
		for i := range ids {
			ids[i], vecs[i] = int64(from+i), []float32{float32(i), 1, 2, 3}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).WithFloatVectorColumn("v", 4, vecs))
		require.NoError(t, err)
	}
	listed := func() map[int64]commonpb.SegmentState {
		resp, err := svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		out := map[int64]commonpb.SegmentState{}
		for _, si := range resp.GetInfos() {
			out[si.GetSegmentID()] = si.GetState()
		}
		return out
	}
	for b := range 3 {
		insert(b*100, 100)
		time.Sleep(100 * time.Millisecond) // lets the spare loop make the next spare
	}
	before := listed()
	require.NotEmpty(t, before)
	s.stop()

	var spares int
	for id, info := range s.segmentRecords(t) {
		if info.Spare && info.State == catalog.SegmentGrowing && info.NumRows == 0 {
			spares++
			require.NotContains(t, before, id, "a spare is never listed")
		}
	}
	require.Positive(t, spares, "the vchannel has a spare")

	s = startServer(t, dir, tweak)
	c = s.client(t)
	svc = c.GetService()
	again := listed()
	require.Len(t, again, len(before), "a restart shows the same segments")
	for id := range again {
		require.Contains(t, before, id)
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	after := listed()
	require.Len(t, after, len(before), "a flush adds no (empty) segment")
	for id, st := range after {
		require.Contains(t, before, id)
		require.Equal(t, commonpb.SegmentState_Flushed, st)
	}
	idx := milvusclient.NewCreateIndexOption(coll, "v", index.NewFlatIndex(entity.L2))
	it, err := c.CreateIndex(ctx, idx)
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.EqualValues(t, 300, n)
}
