package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Milvus 2.6 behaviour that its own client test suite checks (issue 11).

// TestParityLoadStatePartitions: after load_partitions of some partitions,
// Milvus reports the collection Loaded (it is loaded, for those partitions),
// each loaded partition Loaded, a partition that is not loaded (or a list
// with one) NotLoad, and the collection NotLoad again once every partition
// is released. list_collections' in-memory percentage follows the same rule.
func TestParityLoadStatePartitions(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "ls"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions(coll, 4)))
	for _, p := range []string{"p1", "p2"} {
		require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, p)))
	}
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	state := func(parts ...string) entity.LoadStateCode {
		t.Helper()
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll, parts...))
		require.NoError(t, err)
		return st.State
	}
	require.Equal(t, entity.LoadStateNotLoad, state())

	lt, err := c.LoadPartitions(ctx, milvusclient.NewLoadPartitionsOption(coll, "p1"))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	for _, tc := range []struct {
		parts []string
		want  entity.LoadStateCode
	}{
		{nil, entity.LoadStateLoaded},
		{[]string{"p1"}, entity.LoadStateLoaded},
		{[]string{"p2"}, entity.LoadStateNotLoad},
		{[]string{"p1", "p2"}, entity.LoadStateNotLoad},
		{[]string{"_default"}, entity.LoadStateNotLoad},
	} {
		require.Equal(t, tc.want, state(tc.parts...), "after loading p1, partitions %v", tc.parts)
	}
	colls, err := c.ListCollections(ctx, milvusclient.NewListCollectionOption())
	require.NoError(t, err)
	require.Contains(t, colls, coll)

	// Releasing the one loaded partition leaves nothing loaded.
	require.NoError(t, c.ReleasePartitions(ctx, milvusclient.NewReleasePartitionsOptions(coll, "p1")))
	require.Equal(t, entity.LoadStateNotLoad, state())
	require.Equal(t, entity.LoadStateNotLoad, state("p1"))

	// A whole-collection load, then releasing one partition: the others stay.
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	require.NoError(t, c.ReleasePartitions(ctx, milvusclient.NewReleasePartitionsOptions(coll, "_default")))
	require.Equal(t, entity.LoadStateLoaded, state())
	require.Equal(t, entity.LoadStateLoaded, state("p1", "p2"))
	require.Equal(t, entity.LoadStateNotLoad, state("_default"))
	vec := []entity.Vector{entity.FloatVector{1, 0, 0, 0}}
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, vec).WithPartitions("_default"))
	require.ErrorContains(t, err, "partition not loaded", "a search of a released partition is refused (201)")
	_, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id >= 0").WithPartitions("p1", "_default"))
	require.ErrorContains(t, err, "partition not loaded")
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, vec).WithPartitions("p1"))
	require.NoError(t, err)
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, vec))
	require.NoError(t, err, "a search naming no partition reads the loaded ones")
	require.NoError(t, c.ReleasePartitions(ctx, milvusclient.NewReleasePartitionsOptions(coll, "p1", "p2")))
	require.Equal(t, entity.LoadStateNotLoad, state())
}

// rawClient is a plain gRPC client of the Milvus API, for request fields the
// Go SDK does not set (query's ignore_growing).
func (s *server) rawClient(t *testing.T) milvuspb.MilvusServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return milvuspb.NewMilvusServiceClient(conn)
}

// TestParityIgnoreGrowing: search and query with ignore_growing read only
// sealed segments, so rows inserted after the last flush are neither returned
// nor counted; without it (or with "False") they are. A value that is not a
// boolean is refused with Milvus's "parse ignore growing field failed".
func TestParityIgnoreGrowing(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	const coll = "ig"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions(coll, 2).WithAutoID(false)))
	insert := func(from, n int) {
		t.Helper()
		ids := make([]int64, n)
		vecs := make([][]float32, n)
		for i := range ids {
			ids[i] = int64(from + i)
			vecs[i] = []float32{float32(from + i), 1}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
			WithInt64Column("id", ids).WithFloatVectorColumn("vector", 2, vecs))
		require.NoError(t, err)
	}
	insert(0, 10)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	// Wait until the flushed rows are served from the sealed segment.
	count := func(ignore string) int64 {
		t.Helper()
		req := &milvuspb.QueryRequest{
			CollectionName: coll, OutputFields: []string{"count(*)"},
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		}
		if ignore != "" {
			req.QueryParams = []*commonpb.KeyValuePair{{Key: "ignore_growing", Value: ignore}}
		}
		res, err := raw.Query(ctx, req)
		require.NoError(t, err)
		require.Zero(t, res.GetStatus().GetCode(), res.GetStatus().GetReason())
		return res.GetFieldsData()[0].GetScalars().GetLongData().GetData()[0]
	}
	require.Eventually(t, func() bool { return count("True") == 10 }, 20*time.Second, 50*time.Millisecond,
		"the flushed rows are sealed")
	insert(100, 5) // growing

	for _, tc := range []struct {
		ignore string
		want   int64
	}{{"", 15}, {"False", 15}, {"True", 10}, {"true", 10}} {
		t.Run("query ignore_growing="+tc.ignore, func(t *testing.T) {
			require.Equal(t, tc.want, count(tc.ignore))
		})
	}
	res, err := raw.Query(ctx, &milvuspb.QueryRequest{
		CollectionName: coll, OutputFields: []string{"count(*)"},
		QueryParams: []*commonpb.KeyValuePair{{Key: "ignore_growing", Value: "2.3"}},
	})
	require.NoError(t, err)
	require.EqualValues(t, 1100, res.GetStatus().GetCode())
	require.Contains(t, res.GetStatus().GetReason(), "parse ignore growing field failed")

	vec := []entity.Vector{entity.FloatVector{104, 1}}
	for _, ignore := range []bool{false, true} {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 20, vec).WithIgnoreGrowing(ignore).
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		var ids []int64
		for i := 0; i < rs[0].ResultCount; i++ {
			id, err := rs[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		if ignore {
			require.Len(t, ids, 10, "search ignoring growing rows")
			for _, id := range ids {
				require.Less(t, id, int64(100), "a growing row returned with ignore_growing")
			}
		} else {
			require.Len(t, ids, 15)
			require.Contains(t, ids, int64(104), "the growing rows are searched")
		}
	}
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, vec).WithSearchParam("ignore_growing", "[True]"))
	require.ErrorContains(t, err, "parse ignore growing field failed")
}

// TestParityPartitionKey: a collection with a partition-key field gets
// num_partitions partitions (16 by default) named `_default_0` …, rows are
// spread over them by their key, reads with a key filter still find every
// row, and partition DDL and partition names on writes are refused.
func TestParityPartitionKey(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	schema := func(name string) *entity.Schema {
		return entity.NewSchema().WithName(name).
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("tenant").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16).WithIsPartitionKey(true)).
			WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	}
	for _, tc := range []struct {
		name string
		num  int64
		want int
	}{{"pk_default", 0, 16}, {"pk_four", 4, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			opt := milvusclient.NewCreateCollectionOption(tc.name, schema(tc.name)).
				WithIndexOptions(milvusclient.NewCreateIndexOption(tc.name, "v", index.NewFlatIndex(entity.L2)))
			if tc.num > 0 {
				opt = opt.WithNumPartitions(tc.num)
			}
			require.NoError(t, c.CreateCollection(ctx, opt))
			parts, err := c.ListPartitions(ctx, milvusclient.NewListPartitionOption(tc.name))
			require.NoError(t, err)
			want := make([]string, tc.want)
			for i := range want {
				want[i] = fmt.Sprintf("_default_%d", i)
			}
			require.ElementsMatch(t, want, parts)
			desc, err := raw.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: tc.name})
			require.NoError(t, err)
			require.EqualValues(t, tc.want, desc.GetNumPartitions())
		})
	}

	const coll = "pk_default"
	const n = 200
	ids := make([]int64, n)
	tenants := make([]string, n)
	vecs := make([][]float32, n)
	for i := range ids {
		ids[i], tenants[i], vecs[i] = int64(i), fmt.Sprintf("t%d", i%20), []float32{float32(i), 0}
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
		WithVarcharColumn("tenant", tenants).WithFloatVectorColumn("v", 2, vecs))
	require.NoError(t, err)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	// The rows are spread over the partitions, each tenant in one of them.
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	used, total := 0, 0
	for i := range 16 {
		stats, err := c.GetPartitionStats(ctx, milvusclient.NewGetPartitionStatsOption(coll, fmt.Sprintf("_default_%d", i)))
		require.NoError(t, err)
		cnt, err := strconv.Atoi(stats["row_count"])
		require.NoError(t, err)
		require.Zero(t, cnt%10, "a tenant's 10 rows are all in one partition")
		if cnt > 0 {
			used++
		}
		total += cnt
	}
	require.Equal(t, n, total)
	require.Greater(t, used, 1, "rows of 20 tenants land in more than one partition")
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`tenant == "t7"`).
		WithOutputFields("id").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 10, rs.ResultCount)
	res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector{27, 0}}).
		WithFilter(`tenant == "t7"`).WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	top, err := res[0].IDs.GetAsInt64(0)
	require.NoError(t, err)
	require.EqualValues(t, 27, top)

	for name, err := range map[string]error{
		"create partition":   c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, "p1")),
		"drop partition":     c.DropPartition(ctx, milvusclient.NewDropPartitionOption(coll, "_default_1")),
		"release partitions": c.ReleasePartitions(ctx, milvusclient.NewReleasePartitionsOptions(coll, "_default_1")),
	} {
		require.ErrorContains(t, err, "disable "+name+" if partition key mode is used")
	}
	_, err = c.LoadPartitions(ctx, milvusclient.NewLoadPartitionsOption(coll, "_default_1"))
	require.ErrorContains(t, err, "disable load partitions if partition key mode is used")
	_, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`tenant == "t7"`).WithPartitions("_default_1"))
	require.ErrorContains(t, err, "not support manually specifying the partition names if partition key mode is used")
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector{27, 0}}).
		WithPartitions("_default_1"))
	require.ErrorContains(t, err, "not support manually specifying the partition names if partition key mode is used")
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartition("_default_1").
		WithInt64Column("id", ids[:1]).WithVarcharColumn("tenant", tenants[:1]).WithFloatVectorColumn("v", 2, vecs[:1]))
	require.ErrorContains(t, err, "not support manually specifying the partition names if partition key mode is used")

	// After a restart the partitions are the same and new rows still route.
	s.stop()
	s = startServer(t, s.dir)
	c = s.client(t)
	parts, err := c.ListPartitions(ctx, milvusclient.NewListPartitionOption(coll))
	require.NoError(t, err)
	require.Len(t, parts, 16)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1000}).
		WithVarcharColumn("tenant", []string{"t7"}).WithFloatVectorColumn("v", 2, [][]float32{{1000, 0}}))
	require.NoError(t, err)
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`tenant == "t7"`).
		WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	cnt, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.EqualValues(t, 11, cnt)
}
