package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// TestNullableVectors covers Milvus 2.6 nullable vector fields end to end:
// rows with a null vector are stored and counted, never returned by search
// (growing, flushed and indexed, after a restart), and come back from query
// as null, with the vector data compacted to the non-null rows on the wire.
// The Go SDK v2.6.2 has no nullable vector columns, so inserts and queries
// go through the raw gRPC service.
func TestNullableVectors(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll, dim, n = "nullvec", 4, 90
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(dim).WithNullable(true))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).
		WithIndexOptions(milvusclient.NewCreateIndexOption(coll, "vec", index.NewHNSWIndex(entity.COSINE, 16, 64)))))

	// Every third row has no vector; the vector data holds only the others.
	ids := make([]int64, n)
	valid := make([]bool, n)
	var vecs []float32
	for i := range ids {
		ids[i] = int64(i)
		valid[i] = i%3 != 0
		if valid[i] {
			vecs = append(vecs, float32(i+1), 1, float32(i%5), 2)
		}
	}
	vf := vecField("vec", dim, vecs...)
	vf.ValidData = valid
	require.NoError(t, rawInsert(ctx, t, c, coll, n, longField("id", ids...), vf))
	// A batch where every vector is null needs no vector data at all.
	allNull := vecField("vec", dim)
	allNull.ValidData = []bool{false, false}
	require.NoError(t, rawInsert(ctx, t, c, coll, 2, longField("id", 1000, 1001), allNull))
	// valid_data that disagrees with the vector data is refused.
	bad := vecField("vec", dim, 1, 2, 3, 4)
	bad.ValidData = []bool{true, true, false}
	require.Equal(t, int32(codeIllegalArgument), merr.Code(rawInsert(ctx, t, c, coll, 3, longField("id", 7, 8, 9), bad)))

	total := int64(n + 2)
	check := func(stage string) {
		t.Helper()
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 200, []entity.Vector{entity.FloatVector{1, 1, 1, 1}}).
			WithANNSField("vec").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, stage)
		require.Len(t, rs, 1)
		require.Equal(t, 60, rs[0].ResultCount, "%s: only the 60 rows with a vector are hits", stage)
		for i := 0; i < rs[0].ResultCount; i++ {
			id, err := rs[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
			require.True(t, id < n && id%3 != 0, "%s: row %d has a null vector", stage, id)
		}
		cnt, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, stage)
		got, _ := cnt.GetColumn("count(*)").GetAsInt64(0)
		require.Equal(t, total, got, "%s: count(*) counts rows with a null vector", stage)

		resp, err := c.GetService().Query(ctx, &milvuspb.QueryRequest{
			CollectionName: coll, Expr: "id in [0, 1, 2, 3, 1000]",
			OutputFields: []string{"vec"}, ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		})
		require.NoError(t, err)
		require.NoError(t, merr.Error(resp.GetStatus()), stage)
		var ids []int64
		var fd *schemapb.FieldData
		for _, f := range resp.GetFieldsData() {
			switch f.GetFieldName() {
			case "id":
				ids = f.GetScalars().GetLongData().GetData()
			case "vec":
				fd = f
			}
		}
		require.Len(t, ids, 5, stage)
		require.NotNil(t, fd, stage)
		require.Len(t, fd.GetValidData(), 5, stage)
		var want []float32
		for k, id := range ids {
			require.Equal(t, id < n && id%3 != 0, fd.GetValidData()[k], "%s: validity of row %d", stage, id)
			if fd.GetValidData()[k] {
				want = append(want, float32(id+1), 1, float32(id%5), 2)
			}
		}
		require.Equal(t, want, fd.GetVectors().GetFloatVector().GetData(), "%s: only non-null vectors travel", stage)

		// Search by primary key: a key whose vector is null has no hits.
		sr, err := c.GetService().Search(ctx, &milvuspb.SearchRequest{
			CollectionName: coll,
			SearchInput:    &milvuspb.SearchRequest_Ids{Ids: &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: []int64{0, 1, 3, 4}}}}},
			SearchParams: []*commonpb.KeyValuePair{
				{Key: "topk", Value: "5"},
				{Key: "anns_field", Value: "vec"},
				{Key: "metric_type", Value: "COSINE"},
				{Key: "params", Value: "{}"},
			},
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		})
		require.NoError(t, err)
		require.NoError(t, merr.Error(sr.GetStatus()), stage)
		require.Equal(t, []int64{0, 5, 0, 5}, sr.GetResults().GetTopks(), "%s: hits per key searched by", stage)
	}
	load := func() {
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
	}
	load()
	check("growing")

	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	waitIndexed(ctx, t, c, coll, "vec", n+2)
	check("sealed and indexed")

	// A second segment of null vectors only, merged with the first by a
	// compaction: the null bitmap stays aligned with the rows.
	more := make([]int64, 30)
	for i := range more {
		more[i] = int64(2000 + i)
	}
	allNull = vecField("vec", dim)
	allNull.ValidData = make([]bool, len(more))
	require.NoError(t, rawInsert(ctx, t, c, coll, uint32(len(more)), longField("id", more...), allNull))
	total += int64(len(more))
	ft, err = c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	waitCompaction(t, ctx, c.GetService(), coll)
	waitIndexed(ctx, t, c, coll, "vec", total)
	check("compacted")

	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	load()
	check("after a restart")
}

// waitIndexed waits until the index on field covers rows rows.
func waitIndexed(ctx context.Context, t *testing.T, c *milvusclient.Client, coll, field string, rows int64) {
	t.Helper()
	for {
		desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, field))
		require.NoError(t, err)
		if desc.IndexedRows == rows {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("index on %s covers %d of %d rows", field, desc.IndexedRows, rows)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
