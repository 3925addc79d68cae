package rootcoord

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

// TestConfiguredLimits: limits set in the configuration replace Milvus's
// defaults, with the same codes and messages; a database's
// database.max.collections property overrides maxCollectionsPerDB.
func TestConfiguredLimits(t *testing.T) {
	e := newEnv(t, t.TempDir())
	cfg := Defaults()
	cfg.Limits = Limits{
		MaxCollections: 4, MaxCollectionsPerDB: 2, MaxDatabases: 3, MaxPartitions: 2,
		MaxFields: 3, MaxVectorFields: 1, MaxShards: 2, MaxGeneralCapacity: 100,
	}
	c := e.core(t, cfg)
	ctx := context.Background()
	requireErr := func(err error, code int32, msg string) {
		t.Helper()
		require.Equal(t, code, errcode.CodeOf(err), "%v", err)
		require.EqualError(t, err, msg)
	}

	requireErr(c.CreateCollection(ctx, "", schemaNamed("shards", "4"), 3, 0, nil),
		errcode.IllegalArgument, "shard num (3) exceeds max configuration (2)")
	requireErr(c.CreateCollection(ctx, "", with(
		&schemapb.FieldSchema{Name: "a", DataType: schemapb.DataType_Int64},
		&schemapb.FieldSchema{Name: "b", DataType: schemapb.DataType_Int64}), 1, 0, nil),
		errcode.IllegalArgument, "maximum field's number should be limited to 3")
	requireErr(c.CreateCollection(ctx, "", with(
		&schemapb.FieldSchema{Name: "v2", DataType: schemapb.DataType_FloatVector, TypeParams: kv("dim", "2")}), 1, 0, nil),
		errcode.IllegalArgument, "maximum vector field's number should be limited to 1")

	// Partitions: _default and one more.
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("parts", "4"), 2, 0, nil))
	require.NoError(t, c.CreatePartition(ctx, "", "parts", "p1"))
	requireErr(c.CreatePartition(ctx, "", "parts", "p2"),
		errcode.IllegalArgument, "partition number (2) exceeds max configuration (2), collection: parts: invalid parameter")

	// Added fields count against maxFields.
	_, err := c.AddField(ctx, "", "parts", &schemapb.FieldSchema{Name: "n", DataType: schemapb.DataType_Int64, Nullable: true})
	require.NoError(t, err)
	_, err = c.AddField(ctx, "", "parts", &schemapb.FieldSchema{Name: "m", DataType: schemapb.DataType_Int64, Nullable: true})
	requireErr(err, errcode.IllegalArgument, "The number of fields has reached the maximum value 3: invalid parameter")

	// Collections per database, then in all.
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("second", "4"), 1, 0, nil))
	requireErr(c.CreateCollection(ctx, "", schemaNamed("third", "4"), 1, 0, nil),
		errcode.CollectionNumLimit, "exceeded the limit number of collections[dbName=default][limit=2]")
	require.NoError(t, c.CreateDatabase(ctx, "small", map[string]string{MaxCollectionsProperty: "1"}))
	require.NoError(t, c.CreateCollection(ctx, "small", schemaNamed("one", "4"), 1, 0, nil))
	requireErr(c.CreateCollection(ctx, "small", schemaNamed("two", "4"), 1, 0, nil),
		errcode.CollectionNumLimit, "exceeded the limit number of collections[dbName=small][limit=1]")
	require.NoError(t, c.CreateDatabase(ctx, "big", map[string]string{MaxCollectionsProperty: "10"}))
	require.NoError(t, c.CreateCollection(ctx, "big", schemaNamed("one", "4"), 1, 0, nil))
	requireErr(c.CreateCollection(ctx, "big", schemaNamed("two", "4"), 1, 0, nil),
		errcode.CollectionNumLimit, "exceeded the limit number of collections[dbName=big][limit=4]")

	// Databases: default, small and big.
	requireErr(c.CreateDatabase(ctx, "fourth", nil), errcode.DatabaseNumLimit, "exceeded the limit number of database[limit=3]")

	bad := Defaults()
	bad.MaxShards = 0
	require.ErrorContains(t, bad.Validate(), "maxShards must be positive")
}

// TestGeneralCapacity: the sum of partitions × shards over all collections
// is bounded by maxGeneralCapacity (code 250, Milvus's message); a new
// partition counts 1.
func TestGeneralCapacity(t *testing.T) {
	e := newEnv(t, t.TempDir())
	cfg := Defaults()
	cfg.MaxGeneralCapacity = 10
	c := e.core(t, cfg)
	ctx := context.Background()
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("four", "4"), 4, 0, nil)) // 1 partition × 4 shards
	require.NoError(t, c.CreatePartition(ctx, "", "four", "p1"))                         // checked as +1, then counts 4 (as Milvus)
	err := c.CreateCollection(ctx, "", schemaNamed("six", "4"), 6, 0, nil)
	require.Equal(t, errcode.GeneralCapacityExceeded, errcode.CodeOf(err), "%v", err)
	require.EqualError(t, err, "failed checking constraint: sum_collections(parition*shard) exceeding the max general capacity:: "+
		"general capacity exceeded[newGeneralSize=14][generalCapacity=10]")
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("two", "4"), 2, 0, nil)) // 8 + 2 = 10: at the limit
	err = c.CreatePartition(ctx, "", "two", "p1")
	require.Equal(t, errcode.GeneralCapacityExceeded, errcode.CodeOf(err), "%v", err)
}
