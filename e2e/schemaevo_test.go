package e2e

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// schemaEvoCount runs a Strong count(*) with filter.
func schemaEvoCount(ctx context.Context, t *testing.T, c *milvusclient.Client, coll, filter string) int64 {
	t.Helper()
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err, filter)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	return n
}

// createIDVecCollection creates a collection of an Int64 key "id" and a
// 2-dimensional vector "v", without the dynamic field.
func createIDVecCollection(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string) {
	t.Helper()
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
}

func loadAndWait(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string) {
	t.Helper()
	indexAndLoad(ctx, t, c, coll, entity.L2)
}

// TestAddCollectionField: a field added to a collection with sealed and
// growing rows reads as null (or its default) in every row written before
// it, through filters, outputs, a restart and a compaction; rows after it
// hold their values; truncate then removes every row, for good.
func TestAddCollectionField(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "evo"
	createIDVecCollection(ctx, t, c, coll)
	insert := func(ids ...int64) {
		vecs := make([][]float32, len(ids))
		for i := range vecs {
			vecs[i] = []float32{float32(ids[i]), 1}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
			WithFloatVectorColumn("v", 2, vecs))
		require.NoError(t, err)
	}
	flush := func() {
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}
	insert(1, 2, 3)
	flush()
	insert(4, 5)
	flush()
	insert(6) // growing
	loadAndWait(ctx, t, c, coll)

	err := c.AddCollectionField(ctx, milvusclient.NewAddCollectionFieldOption(coll,
		entity.NewField().WithName("bad").WithDataType(entity.FieldTypeInt64)))
	require.ErrorContains(t, err, "added field must be nullable, please check it, field name = bad")
	require.NoError(t, c.AddCollectionField(ctx, milvusclient.NewAddCollectionFieldOption(coll,
		entity.NewField().WithName("age").WithDataType(entity.FieldTypeInt64).WithNullable(true))))
	require.NoError(t, c.AddCollectionField(ctx, milvusclient.NewAddCollectionFieldOption(coll,
		entity.NewField().WithName("city").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16).
			WithNullable(true).WithDefaultValueString("x"))))
	err = c.AddCollectionField(ctx, milvusclient.NewAddCollectionFieldOption(coll,
		entity.NewField().WithName("age").WithDataType(entity.FieldTypeInt64).WithNullable(true)))
	require.ErrorContains(t, err, "duplicate field name: age")

	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	var names []string
	for _, f := range desc.Schema.Fields {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"id", "v", "age", "city"}, names)

	age, err := column.NewNullableColumnInt64("age", []int64{70}, []bool{true, false})
	require.NoError(t, err)
	city, err := column.NewNullableColumnVarChar("city", []string{"c7"}, []bool{true, false})
	require.NoError(t, err)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{7, 8}).
		WithColumns(age, city).WithFloatVectorColumn("v", 2, [][]float32{{7, 1}, {8, 1}}))
	require.NoError(t, err)

	check := func(stage string) {
		t.Helper()
		require.EqualValues(t, 8, schemaEvoCount(ctx, t, c, coll, "id > 0"), stage)
		require.EqualValues(t, 7, schemaEvoCount(ctx, t, c, coll, "age is null"), stage)
		require.EqualValues(t, 1, schemaEvoCount(ctx, t, c, coll, "age == 70"), stage)
		require.EqualValues(t, 7, schemaEvoCount(ctx, t, c, coll, `city == "x"`), stage)
		require.EqualValues(t, 1, schemaEvoCount(ctx, t, c, coll, `city == "c7"`), stage)
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id in [2, 6, 7]").
			WithOutputFields("age", "city").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, stage)
		require.Equal(t, 3, rs.ResultCount, stage)
		ids, ages, cities := rs.GetColumn("id"), rs.GetColumn("age"), rs.GetColumn("city")
		for i := range rs.ResultCount {
			id, _ := ids.GetAsInt64(i)
			null, err := ages.IsNull(i)
			require.NoError(t, err)
			cv, _ := cities.GetAsString(i)
			if id == 7 {
				a, _ := ages.GetAsInt64(i)
				require.False(t, null, stage)
				require.EqualValues(t, 70, a, stage)
				require.Equal(t, "c7", cv, stage)
			} else {
				require.True(t, null, "%s: row %d age", stage, id)
				require.Equal(t, "x", cv, "%s: row %d city", stage, id)
			}
		}
		res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 8, []entity.Vector{entity.FloatVector{1, 1}}).
			WithOutputFields("age").WithFilter("age is null").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, stage)
		require.Equal(t, 7, res[0].ResultCount, stage)
	}
	check("loaded")

	flush()
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	loadAndWait(ctx, t, c, coll)
	check("after restart")

	waitCompaction(t, ctx, s.rawClient(t), coll)
	check("after compaction")

	insert(10) // growing at the truncate: dropped with the rest
	raw := s.rawClient(t)
	tr, err := raw.TruncateCollection(ctx, &milvuspb.TruncateCollectionRequest{CollectionName: coll})
	require.NoError(t, err)
	require.Zero(t, tr.GetStatus().GetCode(), tr.GetStatus().GetReason())
	require.EqualValues(t, 0, schemaEvoCount(ctx, t, c, coll, "id > 0"))
	insert(9)
	require.EqualValues(t, 1, schemaEvoCount(ctx, t, c, coll, "age is null"))
	flush() // completes: the truncated growing segment holds no checkpoint back
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	loadAndWait(ctx, t, c, coll)
	require.EqualValues(t, 1, schemaEvoCount(ctx, t, c, coll, "id > 0"), "truncated rows stay gone after a restart")
	require.EqualValues(t, 1, schemaEvoCount(ctx, t, c, coll, "id == 9"))
}

// TestEnableDynamicField: turning the dynamic field on adds `$meta`; rows
// written before it read as having no dynamic keys, rows after it keep
// theirs, and it cannot be turned off again.
func TestEnableDynamicField(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "dyn"
	createIDVecCollection(ctx, t, c, coll)
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1, 2}).
		WithFloatVectorColumn("v", 2, [][]float32{{1, 0}, {0, 1}}))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	loadAndWait(ctx, t, c, coll)

	require.NoError(t, c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(coll).
		WithProperty("dynamicfield.enabled", true)))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.True(t, desc.Schema.EnableDynamicField)
	c = s.client(t) // the Go SDK converts rows with the schema it cached before
	_, err = c.Insert(ctx, milvusclient.NewRowBasedInsertOption(coll,
		map[string]any{"id": int64(3), "v": []float32{1, 1}, "k": int64(5)}))
	require.NoError(t, err)
	require.EqualValues(t, 3, schemaEvoCount(ctx, t, c, coll, "id > 0"))
	require.EqualValues(t, 1, schemaEvoCount(ctx, t, c, coll, "k == 5"))

	err = c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(coll).
		WithProperty("dynamicfield.enabled", false))
	require.ErrorContains(t, err, "dynamic schema cannot supported to be disabled")

	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	loadAndWait(ctx, t, c, coll)
	require.EqualValues(t, 1, schemaEvoCount(ctx, t, c, coll, "k == 5"))
	require.EqualValues(t, 3, schemaEvoCount(ctx, t, c, coll, "id > 0"))
}
