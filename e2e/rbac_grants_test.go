package e2e

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
)

// TestAuthGrantListing: SelectGrant lists the grants of the request's
// database when the filter names none (the dbname metadata, else
// "default"), every database's for "*", with the object types and names v1
// and v2 grants are stored under; revoking each listed grant as listed
// (what Milvus's test teardown does with list_grants and revoke) leaves the
// role empty, so that it can be dropped. A v1 Global grant is stored on "*"
// whatever object name it gave, as Milvus stores it.
func TestAuthGrantListing(t *testing.T) {
	c := rawCallerFor(t, startServer(t, t.TempDir(), withAuth))
	c.must(t, "CreateDatabase", &milvuspb.CreateDatabaseRequest{DbName: "db2"})
	c.must(t, "CreateRole", &milvuspb.CreateRoleRequest{Entity: &milvuspb.RoleEntity{Name: "lister"}})
	v2 := func(priv, db, coll string) {
		c.must(t, "OperatePrivilegeV2", &milvuspb.OperatePrivilegeV2Request{
			Role: &milvuspb.RoleEntity{Name: "lister"}, Grantor: &milvuspb.GrantorEntity{Privilege: &milvuspb.PrivilegeEntity{Name: priv}},
			Type: milvuspb.OperatePrivilegeType_Grant, DbName: db, CollectionName: coll,
		})
	}
	v2("ClusterReadOnly", "*", "*")
	v2("DatabaseReadOnly", "db2", "*")
	v2("CollectionReadOnly", "db2", "c")
	v2("Search", "default", "c")
	c.must(t, "OperatePrivilege", &milvuspb.OperatePrivilegeRequest{
		Entity: grantEntity("lister", "Global", "c", "db2", "CreateCollection"), Type: milvuspb.OperatePrivilegeType_Grant,
	})

	// list returns the grants as "object/name/db/privilege", the request sent with metadata dbname.
	list := func(dbFilter, dbMeta string) []string {
		t.Helper()
		resp := &milvuspb.SelectGrantResponse{}
		req := &milvuspb.SelectGrantRequest{Entity: &milvuspb.GrantEntity{Role: &milvuspb.RoleEntity{Name: "lister"}, DbName: dbFilter}}
		require.NoError(t, c.call(ctxT(t), "root", "Milvus", dbMeta, "SelectGrant", req, resp))
		require.Zero(t, resp.GetStatus().GetCode(), "%v", resp.GetStatus())
		var out []string
		for _, e := range resp.GetEntities() {
			out = append(out, e.GetObject().GetName()+"/"+e.GetObjectName()+"/"+e.GetDbName()+"/"+e.GetGrantor().GetPrivilege().GetName())
		}
		return out
	}
	inDB2 := []string{"Global/*/*/ClusterReadOnly", "Global/*/db2/DatabaseReadOnly", "Collection/c/db2/CollectionReadOnly", "Global/*/db2/CreateCollection"}
	require.ElementsMatch(t, inDB2, list("", "db2"), "empty filter: the connection's database")
	require.ElementsMatch(t, inDB2, list("db2", ""), "the filter's database")
	require.ElementsMatch(t, []string{"Global/*/*/ClusterReadOnly", "Collection/c/default/Search"}, list("", ""),
		"no database anywhere: default")
	all := list("*", "")
	require.ElementsMatch(t, append(inDB2, "Collection/c/default/Search"), all, "\"*\": every database")

	// The teardown of Milvus's tests: revoke (v1) each grant as listed.
	resp := &milvuspb.SelectGrantResponse{}
	require.NoError(t, c.call(ctxT(t), "root", "Milvus", "", "SelectGrant",
		&milvuspb.SelectGrantRequest{Entity: &milvuspb.GrantEntity{Role: &milvuspb.RoleEntity{Name: "lister"}, DbName: "*"}}, resp))
	for _, e := range resp.GetEntities() {
		c.must(t, "OperatePrivilege", &milvuspb.OperatePrivilegeRequest{Entity: e, Type: milvuspb.OperatePrivilegeType_Revoke})
	}
	require.Empty(t, list("*", ""))
	c.must(t, "DropRole", &milvuspb.DropRoleRequest{RoleName: "lister"})
}
