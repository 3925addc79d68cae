package auth

import (
	"context"
	"log/slog"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestAuthorizeResolvesAliases: a grant on a collection covers requests
// that name one of its aliases (Milvus's resolveAliasForPrivilege), and
// only in the alias's database.
func TestAuthorizeResolvesAliases(t *testing.T) {
	s := withUserRole(t, newStore(t))
	ctx := context.Background()
	require.NoError(t, s.OperateGrant(ctx, Grant{Role: "r1", ObjectType: ObjectCollection, ObjectName: "books", DB: "default", Privilege: "Query"}, true))
	g := NewGuard(s, true)
	user := ctxAs("u1", "password")
	query := func(name string) error {
		return g.Authorize(WithUser(user, "u1"), "Query", &milvuspb.QueryRequest{CollectionName: name})
	}
	require.NoError(t, query("books"))
	require.Equal(t, codes.PermissionDenied, status.Code(query("novels")), "no alias resolver yet: the alias is its own object")

	g.SetAliases(func(db, name string) (string, bool) {
		if db == "default" && name == "novels" {
			return "books", true
		}
		return "", false
	})
	require.NoError(t, query("novels"), "novels is an alias of books")
	require.Equal(t, codes.PermissionDenied, status.Code(query("magazines")))
	err := g.Authorize(WithUser(user, "u1"), "Query", &milvuspb.QueryRequest{DbName: "other", CollectionName: "novels"})
	require.Equal(t, codes.PermissionDenied, status.Code(err), "the alias is resolved in the request's database")
}

// TestRootShouldBindRole: root passes every check, unless
// rootShouldBindRole makes it hold roles like anyone else.
func TestRootShouldBindRole(t *testing.T) {
	kv := openKV(t, t.TempDir())
	t.Cleanup(func() { _ = kv.Close() })
	ctx := context.Background()
	s := openStore(t, kv, testConfig())
	require.True(t, s.Permit(RootUser, ObjectCollection, "default", "c", "Insert"))
	require.Equal(t, []string{"a", "b"}, s.VisibleDatabases(RootUser, []string{"a", "b"}))

	cfg := testConfig()
	cfg.RootShouldBindRole = true
	bound, err := Open(ctx, kv, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.False(t, bound.Permit(RootUser, ObjectCollection, "default", "c", "Insert"), "root holds no role")
	require.Empty(t, bound.VisibleDatabases(RootUser, []string{"a", "b"}))
	require.False(t, bound.CollectionFilter(RootUser, "default")("c"))
	require.NoError(t, bound.OperateUserRole(ctx, RootUser, RoleAdmin, true))
	require.True(t, bound.Permit(RootUser, ObjectCollection, "default", "c", "Insert"), "root bound to admin")
}
