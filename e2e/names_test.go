package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
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
