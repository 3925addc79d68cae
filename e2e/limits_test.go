package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// TestVarCharAutoIDSurvivesRestart: a VarChar primary key with auto_id gets
// string IDs (the allocated int64 as decimal text). The rows are applied by
// the data node and the query node, survive a flush and a restart, and are
// served with the IDs the insert returned.
func TestVarCharAutoIDSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "vcauto"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, varcharAutoIDSchema(coll))))
	res, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("n", []int64{1, 2, 3}).
		WithFloatVectorColumn("v", 2, [][]float32{{1, 0}, {0, 1}, {1, 1}}))
	require.NoError(t, err)
	require.Equal(t, int64(3), res.InsertCount)
	require.Equal(t, entity.FieldTypeVarChar, res.IDs.Type(), "a VarChar auto-ID key returns string IDs")
	ids := map[string]int64{}
	for i := 0; i < res.IDs.Len(); i++ {
		id, err := res.IDs.GetAsString(i)
		require.NoError(t, err)
		require.NotEmpty(t, id)
		ids[id] = int64(i + 1)
	}
	require.Len(t, ids, 3)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	s.stop()

	s = startServer(t, dir)
	c = s.client(t)
	indexAndLoad(ctx, t, c, coll, entity.L2)
	requireVarCharRows(ctx, t, c, coll, ids)

	// Rows still growing (not flushed) replay after a restart too.
	res, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("n", []int64{4}).WithFloatVectorColumn("v", 2, [][]float32{{2, 2}}))
	require.NoError(t, err)
	id, err := res.IDs.GetAsString(0)
	require.NoError(t, err)
	ids[id] = 4
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	requireVarCharRows(ctx, t, c, coll, ids)
}

// requireVarCharRows checks that coll serves exactly want (id → n).
func requireVarCharRows(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string, want map[string]int64) {
	t.Helper()
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`id != ""`).
		WithOutputFields("id", "n").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	got := map[string]int64{}
	for i := 0; i < rs.ResultCount; i++ {
		id, err := rs.GetColumn("id").GetAsString(i)
		require.NoError(t, err)
		n, err := rs.GetColumn("n").GetAsInt64(i)
		require.NoError(t, err)
		got[id] = n
	}
	require.Equal(t, want, got)
}

// createKeyedCollection creates and loads a collection of an Int64 key "id",
// an Int64 "n" and a 2-dimensional vector "v".
func createKeyedCollection(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string) {
	t.Helper()
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("n").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	indexAndLoad(ctx, t, c, coll, entity.L2)
}

// varcharAutoIDSchema is a collection of an auto-ID VarChar key "id", an
// Int64 "n" and a 2-dimensional vector "v".
func varcharAutoIDSchema(coll string) *entity.Schema {
	return entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64).
			WithIsPrimaryKey(true).WithIsAutoID(true)).
		WithField(entity.NewField().WithName("n").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
}

// TestDuplicateKeysInOneRequest: an insert that holds a primary key twice
// stores the key's last row only (a later row of the batch wins, as a later
// request would); query by key, get, count(*) and search all serve that
// one row, before and after flush and after compaction. An upsert that holds
// a key twice is refused with code 1100, as Milvus 2.6 does.
func TestDuplicateKeysInOneRequest(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	svc := c.GetService()
	const coll = "dupkeys"
	createKeyedCollection(ctx, t, c, coll)
	insert := func(ids, ns []int64, vecs [][]float32) {
		t.Helper()
		res, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
			WithInt64Column("n", ns).WithFloatVectorColumn("v", 2, vecs))
		require.NoError(t, err)
		require.Equal(t, int64(distinct(ids)), res.InsertCount, "the insert count is the rows stored")
	}
	flush := func() {
		t.Helper()
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}

	// Key 1's first row is the closest to the search vector: served, it
	// would show up in search where query shows the second.
	insert([]int64{1, 1, 2}, []int64{10, 11, 20}, [][]float32{{1, 0}, {0, 1}, {0.5, 0.5}})
	want := map[int64]int64{1: 11, 2: 20}
	requireServed(ctx, t, c, coll, want, "before flush")
	flush()
	requireServed(ctx, t, c, coll, want, "after flush")
	insert([]int64{3, 4, 4}, []int64{30, 40, 41}, [][]float32{{-1, 0}, {1, 0.01}, {0, -1}})
	want[3], want[4] = 30, 41
	requireServed(ctx, t, c, coll, want, "second batch growing")
	flush()
	requireServed(ctx, t, c, coll, want, "two flushed segments")
	waitCompaction(t, ctx, svc, coll)
	requireServed(ctx, t, c, coll, want, "after compaction")

	// An upsert with a key twice is refused, and nothing of it is applied.
	ups, err := svc.Upsert(ctx, &milvuspb.UpsertRequest{CollectionName: coll, NumRows: 2, FieldsData: []*schemapb.FieldData{
		longField("id", 1, 1), longField("n", 12, 13), vecField("v", 2, 1, 1, 2, 2),
	}})
	require.NoError(t, err)
	require.Equal(t, int32(codeIllegalArgument), ups.GetStatus().GetCode())
	require.Contains(t, ups.GetStatus().GetReason(), "duplicate primary keys are not allowed in the same batch")
	_, err = c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{2, 2}).
		WithInt64Column("n", []int64{21, 22}).WithFloatVectorColumn("v", 2, [][]float32{{1, 1}, {2, 2}}))
	require.Error(t, err)
	require.Equal(t, int32(codeIllegalArgument), merr.Code(err))
	requireServed(ctx, t, c, coll, want, "after the refused upserts")
}

func distinct(ids []int64) int {
	m := map[int64]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return len(m)
}

// requireServed checks that query by key, get, count(*) and search all
// serve exactly want (id → n).
func requireServed(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string, want map[int64]int64, when string) {
	t.Helper()
	rowsOf := func(rs milvusclient.ResultSet) map[int64][]int64 {
		got := map[int64][]int64{}
		for i := 0; i < rs.ResultCount; i++ {
			id, err := rs.GetColumn("id").GetAsInt64(i)
			require.NoError(t, err)
			n, err := rs.GetColumn("n").GetAsInt64(i)
			require.NoError(t, err)
			got[id] = append(got[id], n)
		}
		return got
	}
	wantRows := map[int64][]int64{}
	var ids []int64
	for id, n := range want {
		wantRows[id] = []int64{n}
		ids = append(ids, id)
	}
	for id, n := range want {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(fmt.Sprintf("id == %d", id)).
			WithOutputFields("n").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, map[int64][]int64{id: {n}}, rowsOf(rs), "%s: query id == %d", when, id)
	}
	rs, err := c.Get(ctx, milvusclient.NewQueryOption(coll).WithIDs(column.NewColumnInt64("id", ids)).
		WithOutputFields("n").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, wantRows, rowsOf(rs), "%s: get", when)
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	count, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.Equal(t, int64(len(want)), count, "%s: count(*)", when)
	for _, q := range [][]float32{{1, 0}, {0, 1}, {0, -1}, {1, 0.01}} {
		res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 100, []entity.Vector{entity.FloatVector(q)}).
			WithOutputFields("n").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Len(t, res, 1)
		got := map[int64][]int64{}
		for i := 0; i < res[0].ResultCount; i++ {
			id, err := res[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
			n, err := res[0].GetColumn("n").GetAsInt64(i)
			require.NoError(t, err)
			got[id] = append(got[id], n)
		}
		require.Equal(t, wantRows, got, "%s: search %v", when, q)
	}
}

// TestSearchNQLimit: a search of 16,384 query vectors is served; one of
// 16,385 is refused with Milvus's code 1100 and message, as are topk and
// offset+limit over 16,384.
func TestSearchNQLimit(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "nq"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1, 2}).
		WithFloatVectorColumn("v", 2, [][]float32{{1, 0}, {0, 1}}))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)
	queries := func(n int) []entity.Vector {
		out := make([]entity.Vector, n)
		for i := range out {
			out[i] = entity.FloatVector{float32(i), 1}
		}
		return out
	}

	res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 1, queries(16384)).WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Len(t, res, 16384)

	for _, tc := range []struct {
		name   string
		opt    milvusclient.SearchOption
		reason string
	}{
		{
			"nq 16385", milvusclient.NewSearchOption(coll, 1, queries(16385)),
			"nq [16385] is invalid, nq (number of search vector per search request) should be in range [1, 16384], but got 16385",
		},
		{
			"topk 16385", milvusclient.NewSearchOption(coll, 16385, queries(1)),
			"topk [16385] is invalid, it should be in range [1, 16384], but got 16385",
		},
		{
			"offset+topk 16385", milvusclient.NewSearchOption(coll, 16384, queries(1)).WithOffset(1),
			"offset+topk [16385] is invalid, it should be in range [1, 16384], but got 16385",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Search(ctx, tc.opt)
			require.Error(t, err)
			require.Equal(t, int32(codeIllegalArgument), merr.Code(err))
			require.ErrorContains(t, err, tc.reason)
		})
	}
	_, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id > 0").WithOffset(16000).WithLimit(385))
	require.Error(t, err)
	require.Equal(t, int32(codeIllegalArgument), merr.Code(err))
	require.ErrorContains(t, err, "invalid max query result window, (offset+limit) should be in range [1, 16384], but got 16385")
}

// TestDuplicateKeysAcrossRequests pins the rule for a key inserted again
// by a later request (no upsert), as Milvus has it: query and get serve the
// later row; search serves the key's most similar row (Milvus's reduce
// takes each key once, best first) and still returns limit distinct keys;
// count(*) counts both rows; before and after flush and compaction.
func TestDuplicateKeysAcrossRequests(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	svc := c.GetService()
	const coll = "dupreq"
	createKeyedCollection(ctx, t, c, coll)
	insert := func(n int64, vec []float32) {
		t.Helper()
		id := int64(1)
		if n == 3 {
			id = 2
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{id}).
			WithInt64Column("n", []int64{n}).WithFloatVectorColumn("v", 2, [][]float32{vec}))
		require.NoError(t, err)
	}
	flush := func() {
		t.Helper()
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}
	check := func(when string) {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 1").
			WithOutputFields("n").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 1, rs.ResultCount, when)
		n, err := rs.GetColumn("n").GetAsInt64(0)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "%s: query serves the later row", when)
		rs, err = c.Get(ctx, milvusclient.NewQueryOption(coll).WithIDs(column.NewColumnInt64("id", []int64{1})).
			WithOutputFields("n").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 1, rs.ResultCount, when)
		n, err = rs.GetColumn("n").GetAsInt64(0)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "%s: get serves the later row", when)
		res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 2, []entity.Vector{entity.FloatVector{1, 0}}).
			WithOutputFields("n").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 2, res[0].ResultCount, "%s: search returns the key once and fills the limit with the next key", when)
		second, err := res[0].IDs.GetAsInt64(1)
		require.NoError(t, err)
		require.Equal(t, int64(2), second, when)
		n, err = res[0].GetColumn("n").GetAsInt64(0)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "%s: search serves the key's most similar row", when)
		rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		count, err := rs.GetColumn("count(*)").GetAsInt64(0)
		require.NoError(t, err)
		require.Equal(t, int64(3), count, "%s: count(*) counts both rows of key 1", when)
	}
	// The earlier row of key 1 is the closer one to the search vector; key
	// 2 (n = 3) is the farthest.
	insert(3, []float32{-1, 0})
	insert(1, []float32{1, 0})
	flush()
	insert(2, []float32{0, 1})
	check("growing and flushed")
	flush()
	check("both flushed")
	waitCompaction(t, ctx, svc, coll)
	check("after compaction")
}
