package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// TestDatabasesAndAliases drives databases and aliases with the Go SDK and
// checks that they survive a restart.
func TestDatabasesAndAliases(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)

	err := c.UseDatabase(ctx, milvusclient.NewUseDatabaseOption("missing"))
	require.ErrorContains(t, err, "database not found") // code 800

	require.NoError(t, c.CreateDatabase(ctx, milvusclient.NewCreateDatabaseOption("db1").WithProperty("k", "v")))
	dbs, err := c.ListDatabase(ctx, milvusclient.NewListDatabaseOption())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"default", "db1"}, dbs)
	require.NoError(t, c.UseDatabase(ctx, milvusclient.NewUseDatabaseOption("db1")))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("films", dim)))
	require.NoError(t, c.CreateAlias(ctx, milvusclient.NewCreateAliasOption("films", "movies")))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("movies"))
	require.NoError(t, err)
	require.Equal(t, "films", desc.Name)
	require.Error(t, c.DropDatabase(ctx, milvusclient.NewDropDatabaseOption("db1")), "not empty")
	require.Error(t, c.DropDatabase(ctx, milvusclient.NewDropDatabaseOption("default")))

	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	dbs, err = c.ListDatabase(ctx, milvusclient.NewListDatabaseOption())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"default", "db1"}, dbs)
	db, err := c.DescribeDatabase(ctx, milvusclient.NewDescribeDatabaseOption("db1"))
	require.NoError(t, err)
	require.Equal(t, "v", db.Properties["k"])
	require.NoError(t, c.UseDatabase(ctx, milvusclient.NewUseDatabaseOption("db1")))
	alias, err := c.DescribeAlias(ctx, milvusclient.NewDescribeAliasOption("movies"))
	require.NoError(t, err)
	require.Equal(t, "films", alias.CollectionName)
	names, err := c.ListAliases(ctx, milvusclient.NewListAliasesOption("films"))
	require.NoError(t, err)
	require.Equal(t, []string{"movies"}, names)
	has, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption("movies"))
	require.NoError(t, err)
	require.True(t, has)

	require.Error(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption("movies")))
	require.NoError(t, c.DropAlias(ctx, milvusclient.NewDropAliasOption("movies")))
	require.NoError(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption("films")))
	require.NoError(t, c.UseDatabase(ctx, milvusclient.NewUseDatabaseOption("default")))
	require.NoError(t, c.DropDatabase(ctx, milvusclient.NewDropDatabaseOption("db1")))
	dbs, err = c.ListDatabase(ctx, milvusclient.NewListDatabaseOption())
	require.NoError(t, err)
	require.Equal(t, []string{"default"}, dbs)
}

// TestNamesValidatedBeforeLookup: through the Go SDK, a malformed collection,
// partition or alias name is refused with 1100 and Milvus's reason before any
// lookup; a well-formed name that names nothing is still "not found" (or, for
// has_collection, false; drop_collection succeeds). A field named by a filter
// keyword is refused at create_collection with 1701.
func TestNamesValidatedBeforeLookup(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("films", dim)))

	const first = "Invalid collection name: 12-s. the first character of a collection name must be an underscore or letter: invalid parameter"
	for _, tc := range []struct {
		name string
		code int32
		msg  string
		call func() error
	}{
		{"describe", codeIllegalArgument, first, func() error {
			_, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("12-s"))
			return err
		}},
		{"has", codeIllegalArgument, first, func() error {
			_, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption("12-s"))
			return err
		}},
		{"load", codeIllegalArgument, first, func() error {
			_, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("12-s"))
			return err
		}},
		{"query", codeIllegalArgument, first, func() error {
			_, err := c.Query(ctx, milvusclient.NewQueryOption("12-s").WithFilter("id > 0"))
			return err
		}},
		{"create partition", codeIllegalArgument, "Invalid partition name: (mn). The first character of a partition name must be an underscore or letter.", func() error {
			return c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption("films", "(mn)"))
		}},
		{"create alias", codeIllegalArgument, "Invalid collection alias: a b. collection alias can only contain numbers, letters and underscores", func() error {
			return c.CreateAlias(ctx, milvusclient.NewCreateAliasOption("films", "a b"))
		}},
		{"describe missing", codeCollectionNotFound, "can't find collection[database=default][collection=nonexisted]", func() error {
			_, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("nonexisted"))
			return err
		}},
		{"keyword field", 1701, "Invalid field name: json_contains. json_contains is keyword in milvus.", func() error {
			schema := entity.NewSchema().WithName("kw").
				WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
				WithField(entity.NewField().WithName("json_contains").WithDataType(entity.FieldTypeFloatVector).WithDim(dim))
			return c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("kw", schema))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.Error(t, err)
			require.Equal(t, tc.code, merr.Code(err), "status code of %v", err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}

	has, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption("nonexisted"))
	require.NoError(t, err)
	require.False(t, has)
	require.NoError(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption("nonexisted")))
}
