package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// TestAuthAliasPrivileges: a grant on a collection covers requests that
// name it by an alias, a grant on an alias is stored for its collection,
// and grants v2 check the database name's form (802) but not its
// existence, as Milvus.
func TestAuthAliasPrivileges(t *testing.T) {
	s := startServer(t, t.TempDir(), withAuth)
	ctx := ctxT(t)
	root, err := s.login(t, "root", "Milvus", "")
	require.NoError(t, err)
	require.NoError(t, root.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("books", 2)))
	require.NoError(t, root.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("other", 2)))
	require.NoError(t, root.CreateAlias(ctx, milvusclient.NewCreateAliasOption("books", "novels")))
	require.NoError(t, root.CreateUser(ctx, milvusclient.NewCreateUserOption("bob", "bob-password")))
	require.NoError(t, root.CreateRole(ctx, milvusclient.NewCreateRoleOption("reader")))
	require.NoError(t, root.GrantRole(ctx, milvusclient.NewGrantRoleOption("bob", "reader")))
	require.NoError(t, root.GrantV2(ctx, milvusclient.NewGrantV2Option("reader", "Query", "default", "books")))
	bob, err := s.login(t, "bob", "bob-password", "")
	require.NoError(t, err)

	query := func(coll string) error {
		_, err := bob.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id > 0").WithLimit(1))
		return err
	}
	require.NoError(t, query("books"))
	require.NoError(t, query("novels"), "the grant on books covers its alias")
	require.ErrorContains(t, query("other"), "permission deny")

	insert := func(coll string) error {
		_, err := bob.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithFloatVectorColumn("vector", 2, [][]float32{{1, 0}}))
		return err
	}
	require.ErrorContains(t, insert("books"), "permission deny")
	require.NoError(t, root.GrantV2(ctx, milvusclient.NewGrantV2Option("reader", "Insert", "default", "novels")))
	require.NoError(t, insert("books"), "a grant on an alias is a grant on its collection")

	err = root.GrantV2(ctx, milvusclient.NewGrantV2Option("reader", "Query", "n%$#@!", "books"))
	require.Equal(t, int32(802), merr.Code(err), "%v", err)
	require.ErrorContains(t, err, "database name can only contain numbers, letters and underscores: invalid database name[database=n%$#@!]")
	require.NoError(t, root.GrantV2(ctx, milvusclient.NewGrantV2Option("reader", "Query", "not_exist_db", "c")))
	require.NoError(t, root.RevokeV2(ctx, milvusclient.NewRevokePrivilegeV2Option("reader", "Query", "c").WithDbName("not_exist_db")))
}
