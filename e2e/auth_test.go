package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/app"
)

func withAuth(c *app.Config) {
	c.Security.AuthorizationEnabled = true
	c.Security.BcryptCost = 4
}

// login connects the Go SDK as user.
func (s *server) login(t *testing.T, user, password, db string) (*milvusclient.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: s.addr, Username: user, Password: password, DBName: db})
	if err == nil {
		t.Cleanup(func() { _ = c.Close(context.Background()) })
	}
	return c, err
}

func TestAuthLoginAndPrivileges(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, withAuth)
	ctx := ctxT(t)

	// No credentials at all: a raw gRPC call is refused as Milvus refuses it.
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	raw := milvuspb.NewMilvusServiceClient(conn)
	_, err = raw.ListDatabases(ctx, &milvuspb.ListDatabasesRequest{})
	require.Equal(t, codes.Unauthenticated, status.Code(err))
	require.Contains(t, err.Error(), "missing authorization in header")
	bad := metadata.AppendToOutgoingContext(ctx, "authorization", base64.StdEncoding.EncodeToString([]byte("root:nope")))
	_, err = raw.ListDatabases(bad, &milvuspb.ListDatabasesRequest{})
	require.Equal(t, codes.Unauthenticated, status.Code(err))

	_, err = s.login(t, "root", "wrong-password", "")
	require.ErrorContains(t, err, "auth check failure")
	_, err = s.login(t, "nobody", "Milvus", "")
	require.ErrorContains(t, err, "auth check failure")
	root, err := s.login(t, "root", "Milvus", "")
	require.NoError(t, err)

	require.NoError(t, root.CreateDatabase(ctx, milvusclient.NewCreateDatabaseOption("db2")))
	require.NoError(t, root.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("c1", 4)))
	root2, err := s.login(t, "root", "Milvus", "db2")
	require.NoError(t, err)
	require.NoError(t, root2.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("c1", 4)))

	require.NoError(t, root.CreateUser(ctx, milvusclient.NewCreateUserOption("alice", "alice-pw")))
	require.NoError(t, root.CreateRole(ctx, milvusclient.NewCreateRoleOption("analyst")))
	require.NoError(t, root.GrantRole(ctx, milvusclient.NewGrantRoleOption("alice", "analyst")))
	users, err := root.ListUsers(ctx, milvusclient.NewListUserOption())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"root", "alice"}, users)

	alice, err := s.login(t, "alice", "alice-pw", "")
	require.NoError(t, err)
	alice2, err := s.login(t, "alice", "alice-pw", "db2")
	require.NoError(t, err)
	dbs, err := alice.ListDatabase(ctx, milvusclient.NewListDatabaseOption())
	require.NoError(t, err)
	require.Empty(t, dbs, "a user without grants sees no database")

	// Denied without the privilege, allowed with it.
	err = alice.DropCollection(ctx, milvusclient.NewDropCollectionOption("c1"))
	require.ErrorContains(t, err, "DropCollection: permission deny to alice in the `default` database")
	_, err = alice2.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
	require.ErrorContains(t, err, "permission deny")

	// A collection grant in db2 only: cross-database isolation.
	require.NoError(t, root.GrantPrivilege(ctx, milvusclient.NewGrantPrivilegeOption("analyst", "Collection", "GetStatistics", "c1").WithDbName("db2")))
	_, err = alice2.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
	require.NoError(t, err)
	_, err = alice.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
	require.ErrorContains(t, err, "permission deny to alice in the `default` database")
	dbs, err = alice.ListDatabase(ctx, milvusclient.NewListDatabaseOption())
	require.NoError(t, err)
	require.Equal(t, []string{"db2"}, dbs)
	colls, err := alice2.ListCollections(ctx, milvusclient.NewListCollectionOption())
	require.NoError(t, err)
	require.Equal(t, []string{"c1"}, colls)
	colls, err = alice.ListCollections(ctx, milvusclient.NewListCollectionOption())
	require.NoError(t, err)
	require.Empty(t, colls, "no grant in default: its collections are not listed")

	// The public role's defaults: everyone may describe a collection.
	_, err = alice.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("c1"))
	require.NoError(t, err)
	// Users manage only themselves.
	err = alice.DropUser(ctx, milvusclient.NewDropUserOption("root"))
	require.ErrorContains(t, err, "permission deny")
	require.NoError(t, alice.UpdatePassword(ctx, milvusclient.NewUpdatePasswordOption("alice", "alice-pw", "alice-pw2")))
	_, err = s.login(t, "alice", "alice-pw", "")
	require.ErrorContains(t, err, "auth check failure", "the old password no longer works")

	// V2 grant of a built-in group, then a restart: everything persists.
	require.NoError(t, root.GrantV2(ctx, milvusclient.NewGrantV2Option("analyst", "DatabaseAdmin", "default", "*")))
	s.stop()
	s = startServer(t, dir, withAuth)
	alice, err = s.login(t, "alice", "alice-pw2", "")
	require.NoError(t, err)
	require.NoError(t, alice.DropCollection(ctx, milvusclient.NewDropCollectionOption("c1")))
	alice2, err = s.login(t, "alice", "alice-pw2", "db2")
	require.NoError(t, err)
	_, err = alice2.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("c1"))
	require.NoError(t, err)
	err = alice2.DropCollection(ctx, milvusclient.NewDropCollectionOption("c1"))
	require.ErrorContains(t, err, "permission deny to alice in the `db2` database")
	root, err = s.login(t, "root", "Milvus", "")
	require.NoError(t, err)
	err = root.DropUser(ctx, milvusclient.NewDropUserOption("root"))
	require.ErrorContains(t, err, "root user cannot be deleted")
}

func TestAuthRootPasswordAtFirstStart(t *testing.T) {
	s := startServer(t, t.TempDir(), withAuth, func(c *app.Config) { c.Security.DefaultRootPassword = "s3cret-root" })
	_, err := s.login(t, "root", "Milvus", "")
	require.ErrorContains(t, err, "auth check failure")
	_, err = s.login(t, "root", "s3cret-root", "")
	require.NoError(t, err)
}

func TestAuthOffAcceptsAnyone(t *testing.T) {
	s := startServer(t, t.TempDir())
	c, err := s.login(t, "whoever", "whatever", "")
	require.NoError(t, err)
	ctx := ctxT(t)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("c1", 4)))
	users, err := c.ListUsers(ctx, milvusclient.NewListUserOption())
	require.NoError(t, err)
	require.Equal(t, []string{"root"}, users)
}

func TestAuthREST(t *testing.T) {
	s := startServer(t, t.TempDir(), withAuth)
	root, err := s.login(t, "root", "Milvus", "")
	require.NoError(t, err)
	ctx := ctxT(t)
	require.NoError(t, root.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("c1", 4)))
	require.NoError(t, root.CreateUser(ctx, milvusclient.NewCreateUserOption("bob", "bob-password")))

	post := func(path, token, body string) (int, map[string]any) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.addr+"/v2/vectordb/"+path, strings.NewReader(body))
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(b, &out), string(b))
		return resp.StatusCode, out
	}
	code, out := post("collections/list", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, code)
	require.EqualValues(t, 1800, out["code"])
	require.Equal(t, "user hasn't authenticated", out["message"])
	code, out = post("collections/list", "root:wrong", `{}`)
	require.Equal(t, http.StatusUnauthorized, code)
	require.EqualValues(t, 1800, out["code"])
	code, out = post("collections/list", "root:Milvus", `{}`)
	require.Equal(t, http.StatusOK, code)
	require.EqualValues(t, 0, out["code"])
	require.Equal(t, []any{"c1"}, out["data"])
	code, out = post("collections/drop", "bob:bob-password", `{"collectionName":"c1"}`)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, out["message"], "DropCollection: permission deny to bob")
	code, out = post("collections/describe", "bob:bob-password", `{"collectionName":"c1"}`)
	require.Equal(t, http.StatusOK, code, out)
	require.EqualValues(t, 0, out["code"])

	// Users and roles through REST v2.
	for _, c := range []struct{ path, body string }{
		{"roles/create", `{"roleName":"dropper"}`},
		{"users/grant_role", `{"userName":"bob","roleName":"dropper"}`},
		{"roles/grant_privilege", `{"roleName":"dropper","objectType":"Global","objectName":"*","privilege":"DropCollection"}`},
	} {
		_, out = post(c.path, "root:Milvus", c.body)
		require.EqualValues(t, 0, out["code"], "%s: %v", c.path, out)
	}
	_, out = post("users/describe", "root:Milvus", `{"userName":"bob"}`)
	require.Equal(t, []any{"dropper"}, out["data"])
	_, out = post("roles/describe", "root:Milvus", `{"roleName":"dropper"}`)
	require.Len(t, out["data"], 1)
	_, out = post("users/list", "root:Milvus", `{}`)
	require.ElementsMatch(t, []any{"root", "bob"}, out["data"])
	_, out = post("users/create", "root:Milvus", `{"userName":"x"}`)
	require.EqualValues(t, 1802, out["code"], "password is required")
	_, out = post("collections/drop", "bob:bob-password", `{"collectionName":"c1"}`)
	require.EqualValues(t, 0, out["code"], out)
}
