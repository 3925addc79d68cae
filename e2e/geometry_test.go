package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/storage"
)

// TestGeometryField drives a Geometry field through the Go SDK: WKT in,
// WKT out, spatial filters in query, search and delete, the RTREE index,
// and the data surviving flush, compaction and a restart.
func TestGeometryField(t *testing.T) {
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
	const coll = "geo"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("geo").WithDataType(entity.FieldTypeGeometry)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))

	// A 10×10 grid of points (id = 10x + y) in two flushed segments.
	wkt := map[int64]string{}
	for batch := 0; batch < 2; batch++ {
		var ids []int64
		var geos []string
		var vecs [][]float32
		for x := batch * 5; x < batch*5+5; x++ {
			for y := 0; y < 10; y++ {
				id := int64(10*x + y)
				ids = append(ids, id)
				w := fmt.Sprintf("POINT (%d.5 %d)", x, y)
				geos = append(geos, w)
				wkt[id] = w
				vecs = append(vecs, []float32{float32(x), float32(y)})
			}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
			WithColumns(column.NewColumnGeometryWKT("geo", geos)).WithFloatVectorColumn("v", 2, vecs))
		require.NoError(t, err)
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}

	// Invalid WKT is refused with Milvus's code and message, and nothing is written.
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1000, 1001}).
		WithColumns(column.NewColumnGeometryWKT("geo", []string{"POINT (1 1)", "POLYGON ((0 0, 1 1))"})).
		WithFloatVectorColumn("v", 2, [][]float32{{0, 0}, {1, 1}}))
	require.ErrorContains(t, err, "invalid Geometry data, transform to wkb failed: syntax error")

	for _, it := range []struct {
		field string
		idx   index.Index
	}{{"v", index.NewFlatIndex(entity.L2)}, {"geo", index.NewRTreeIndex()}} {
		task, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, it.field, it.idx))
		require.NoError(t, err)
		require.NoError(t, task.Await(ctx))
	}
	desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "geo"))
	require.NoError(t, err)
	require.Equal(t, "RTREE", desc.Params()["index_type"])
	_, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "id", index.NewRTreeIndex()).WithIndexName("bad"))
	require.ErrorContains(t, err, "RTREE index can only be built on geometry field")

	rtrees, err := filepath.Glob(filepath.Join(s.storageDir(t), "files", "index_files", "*", "*", "*", "*", "RTREE"))
	require.NoError(t, err)
	require.Len(t, rtrees, 2, "one RTREE file per sealed segment")

	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	query := func(filter string) []int64 {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("geo").
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, filter)
		var ids []int64
		for i := 0; i < rs.ResultCount; i++ {
			id, _ := rs.GetColumn("id").GetAsInt64(i)
			g, err := rs.GetColumn("geo").GetAsString(i)
			require.NoError(t, err)
			require.Equal(t, wkt[id], g, "geometry comes back as the WKT that was sent")
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	box := "POLYGON ((2 2, 4 2, 4 4, 2 4, 2 2))" // holds x.5 for x in {2,3}, y in {3} strictly inside
	check := func() {
		t.Helper()
		require.Equal(t, []int64{23, 33}, query("ST_WITHIN(geo, '"+box+"')"))
		require.Equal(t, []int64{22, 23, 24, 32, 33, 34}, query("st_intersects(geo, '"+box+"')"))
		require.Equal(t, []int64{22, 24, 32, 34}, query("ST_TOUCHES(geo, '"+box+"') and id < 50"))
		require.Equal(t, []int64{55}, query("ST_EQUALS(geo, 'POINT (5.5 5)')"))
		// ST_DWITHIN is in meters on the sphere: 0.5° of longitude at 9°N is 54.9 km,
		// 0.5° of latitude 55.6 km.
		require.Equal(t, []int64{89, 99}, query("ST_DWITHIN(geo, 'POINT (9 9)', 56000)"))
		require.Equal(t, []int64{98, 99}, query("ST_DWITHIN(geo, 'POINT (9.5 8.5)', 56000)"))
		res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector{9, 9}}).
			WithFilter("ST_WITHIN(geo, '"+box+"')").WithOutputFields("geo").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 2, res[0].ResultCount)
		g, err := res[0].GetColumn("geo").GetAsString(0)
		require.NoError(t, err)
		require.Equal(t, "POINT (3.5 3)", g, "the nearest hit to (9, 9) inside the box")
	}
	check()

	// A spatial delete, then compaction merges the segments without the deleted rows.
	require.NoError(t, func() error {
		_, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("ST_WITHIN(geo, 'POLYGON ((-1 -1, 1 -1, 1 1, -1 1, -1 -1))')"))
		return err
	}())
	require.Empty(t, query("ST_EQUALS(geo, 'POINT (0.5 0)')"))
	delete(wkt, 0)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	svc := s.rawClient(t)
	waitCompaction(t, ctx, svc, coll)
	require.Eventually(t, func() bool {
		qs, err := svc.GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{CollectionName: coll})
		return err == nil && len(qs.GetInfos()) == 1
	}, 20*time.Second, 50*time.Millisecond)
	require.Len(t, query("id >= 0"), 99)
	check()

	// The merged segment's geometry binlog is type 24 and holds WKB.
	segs, err := svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
	require.NoError(t, err)
	var seg int64
	for _, sg := range segs.GetInfos() {
		if sg.GetLevel() != commonpb.SegmentLevel_L0 {
			seg = sg.GetSegmentID()
		}
	}
	files, err := filepath.Glob(filepath.Join(s.storageDir(t), "files", "insert_log", "*", "*", itoa(seg), "101", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	bl, err := storage.DecodeBinlog(data)
	require.NoError(t, err)
	require.Equal(t, schemapb.DataType_Geometry, bl.Descriptor.PayloadType)
	require.Equal(t, 99, bl.Column().Len())

	s.stop()
	s = startServer(t, dir, manualOnly)
	c = s.client(t)
	require.Eventually(t, func() bool {
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
		return err == nil && st.State == entity.LoadStateLoaded
	}, 60*time.Second, 100*time.Millisecond)
	check()
}
