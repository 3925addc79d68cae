package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

func TestNullableAndDefaults(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "nulls"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("age").WithDataType(entity.FieldTypeInt64).WithNullable(true)).
		WithField(entity.NewField().WithName("city").WithDataType(entity.FieldTypeVarChar).WithMaxLength(32).
			WithDefaultValueString("unknown")).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))

	age, err := column.NewNullableColumnInt64("age", []int64{30, 40}, []bool{true, false, true})
	require.NoError(t, err)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("id", []int64{1, 2, 3}).WithColumns(age).
		WithFloatVectorColumn("v", 2, [][]float32{{1, 0}, {0, 1}, {1, 1}}))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)

	count := func(filter string) int64 {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("count(*)").
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, filter)
		n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
		return n
	}
	require.EqualValues(t, 1, count("age is null"))
	require.EqualValues(t, 2, count("age is not null"))
	require.EqualValues(t, 1, count("age > 35"))
	require.EqualValues(t, 3, count(`city == "unknown"`), "a missing field with a default takes the default")

	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 2").WithOutputFields("age", "city").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 1, rs.ResultCount)
	isNull, err := rs.GetColumn("age").IsNull(0)
	require.NoError(t, err)
	require.True(t, isNull)
	city, err := rs.GetColumn("city").GetAsString(0)
	require.NoError(t, err)
	require.Equal(t, "unknown", city)
}
