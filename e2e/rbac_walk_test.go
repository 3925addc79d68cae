package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/strata-db/strata/internal/auth"
)

// The names the privilege walk works on: a database, a collection in it
// (and one beside it, and one of the same name in "default"), the users
// that call, and the user that User-object RPCs name.
const (
	walkDB     = "walk"
	walkColl   = "c1"
	walkOther  = "other"
	walkTarget = "target"
)

// rawCaller invokes MilvusService RPCs by name with a user's
// `authorization` metadata, as the SDKs send it.
type rawCaller struct {
	conn *grpc.ClientConn
}

// rawCallerFor connects to s; the connection closes when the test ends.
func rawCallerFor(t *testing.T, s *server) rawCaller {
	t.Helper()
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return rawCaller{conn: conn}
}

func (c rawCaller) call(ctx context.Context, user, password, db, method string, req, resp proto.Message) error {
	ctx = metadata.AppendToOutgoingContext(ctx,
		"authorization", base64.StdEncoding.EncodeToString([]byte(user+":"+password)), "dbname", db)
	return c.conn.Invoke(ctx, "/milvus.proto.milvus.MilvusService/"+method, req, resp)
}

// must calls method as root and fails the test unless it succeeds.
func (c rawCaller) must(t *testing.T, method string, req proto.Message) {
	t.Helper()
	resp := newWalkMessage(t, method, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.call(ctx, "root", "Milvus", walkDB, method, req, resp), method)
	st := responseStatus(resp)
	require.Zero(t, st.GetCode(), "%s: %v", method, st)
	require.Equal(t, commonpb.ErrorCode_Success, st.GetErrorCode(), "%s: %v", method, st)
}

// newWalkMessage returns a new request (or response) of method.
func newWalkMessage(t *testing.T, method string, request bool) proto.Message {
	t.Helper()
	m := milvuspb.File_milvus_proto.Services().ByName("MilvusService").Methods().ByName(protoreflect.Name(method))
	require.NotNil(t, m, "MilvusService has no RPC %s", method)
	d := m.Output()
	if request {
		d = m.Input()
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
	require.NoError(t, err)
	return mt.New().Interface()
}

// responseStatus is a response's status (the response itself for the RPCs
// that answer a bare commonpb.Status).
func responseStatus(resp proto.Message) *commonpb.Status {
	if st, ok := resp.(*commonpb.Status); ok {
		return st
	}
	if r, ok := resp.(interface{ GetStatus() *commonpb.Status }); ok {
		return r.GetStatus()
	}
	return nil
}

// walkRequest builds method's request as the walk sends it: the names the
// rule checks point at the walk's objects (the collection, the target
// user), and every other name at something that does not exist, so that a
// permitted call changes nothing the walk relies on.
func walkRequest(t *testing.T, method string, rule auth.Rule) proto.Message {
	t.Helper()
	req := newWalkMessage(t, method, true)
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	setString := func(name, v string) {
		if f := fields.ByName(protoreflect.Name(name)); f != nil && f.Kind() == protoreflect.StringKind && !f.IsList() {
			m.Set(f, protoreflect.ValueOfString(v))
		}
	}
	db := walkDB
	if auth.PrivilegeLevel(rule.Privilege) == auth.LevelCluster {
		// The database does not matter to a cluster-level privilege: name
		// one that is not there, so that DropDatabase drops nothing.
		db = "absent_db"
	}
	setString("db_name", db)
	coll := "absent_coll"
	if rule.ObjectType == auth.ObjectCollection {
		coll = walkColl
	}
	setString("collection_name", coll)
	setString("collectionName", coll) // LoadBalanceRequest's spelling
	if f := fields.ByName("collection_names"); f != nil && f.IsList() && f.Kind() == protoreflect.StringKind {
		l := m.Mutable(f).List()
		l.Append(protoreflect.ValueOfString(coll))
	}
	user := "absent_user"
	if rule.ObjectType == auth.ObjectUser {
		user = walkTarget
	}
	for _, name := range []string{"username", "user_name"} {
		setString(name, user)
	}
	if f := fields.ByName("user"); f != nil && f.Kind() == protoreflect.MessageKind {
		m.Set(f, protoreflect.ValueOfMessage((&milvuspb.UserEntity{Name: user}).ProtoReflect()))
	}
	for name, v := range map[string]string{
		"partition_name": "absent_p", "index_name": "absent_idx", "role_name": "absent_role",
		"group_name": "absent_group", "resource_group": "absent_rg", "alias": "absent_alias",
		"old_name": "absent_coll", "new_name": "absent_coll2", "field_name": "absent_field",
	} {
		setString(name, v)
	}
	return req
}

// grantFor is the grant of exactly rule's privilege on the object the walk's
// request of it names.
func grantFor(role string, rule auth.Rule) *milvuspb.GrantEntity {
	name := auth.AnyWord
	switch {
	case rule.ObjectType == auth.ObjectCollection:
		name = walkColl
	case rule.ObjectType == auth.ObjectUser && rule.Objects != nil:
		name = walkTarget
	}
	return grantEntity(role, rule.ObjectType, name, walkDB, rule.Privilege)
}

// nearMisses are grants of rule's privilege that must not permit the walk's
// request: on another collection, the same collection in another database,
// another database (database-level privileges), another user.
func nearMisses(role string, rule auth.Rule) []*milvuspb.GrantEntity {
	switch {
	case rule.ObjectType == auth.ObjectCollection && auth.PrivilegeLevel(rule.Privilege) == auth.LevelCluster:
		// (row policies: a cluster-level privilege is granted for every
		// database, as Milvus stores it under db "*")
		return []*milvuspb.GrantEntity{grantEntity(role, auth.ObjectCollection, walkOther, walkDB, rule.Privilege)}
	case rule.ObjectType == auth.ObjectCollection:
		return []*milvuspb.GrantEntity{
			grantEntity(role, auth.ObjectCollection, walkOther, walkDB, rule.Privilege),
			grantEntity(role, auth.ObjectCollection, walkColl, "default", rule.Privilege),
		}
	case rule.ObjectType == auth.ObjectUser && rule.Objects != nil:
		return []*milvuspb.GrantEntity{grantEntity(role, auth.ObjectUser, "nobody", walkDB, rule.Privilege)}
	case rule.ObjectType == auth.ObjectGlobal && auth.PrivilegeLevel(rule.Privilege) != auth.LevelCluster:
		return []*milvuspb.GrantEntity{grantEntity(role, auth.ObjectGlobal, auth.AnyWord, "default", rule.Privilege)}
	}
	return nil // a cluster-level privilege is the same in every database
}

func grantEntity(role, objectType, name, db, privilege string) *milvuspb.GrantEntity {
	return &milvuspb.GrantEntity{
		Role: &milvuspb.RoleEntity{Name: role}, Object: &milvuspb.ObjectEntity{Name: objectType},
		ObjectName: name, DbName: db,
		Grantor: &milvuspb.GrantorEntity{Privilege: &milvuspb.PrivilegeEntity{Name: privilege}},
	}
}

// TestAuthPrivilegeWalk walks every RPC of the privilege table auth.Rules:
// a user without the privilege (or with it on another object or database)
// is refused with Milvus's PERMISSION_DENIED and message, and a user whose
// one role holds exactly that privilege on the request's object is not.
// A new entry in the table is walked without a change here.
func TestAuthPrivilegeWalk(t *testing.T) {
	c := rawCallerFor(t, startServer(t, t.TempDir(), withAuth))

	c.must(t, "CreateDatabase", &milvuspb.CreateDatabaseRequest{DbName: walkDB})
	schema := func(name string) []byte {
		b, err := proto.Marshal(&schemapb.CollectionSchema{Name: name, Fields: []*schemapb.FieldSchema{
			{FieldID: 100, Name: "id", IsPrimaryKey: true, DataType: schemapb.DataType_Int64},
			{
				FieldID: 101, Name: "vector", DataType: schemapb.DataType_FloatVector,
				TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}},
			},
		}})
		require.NoError(t, err)
		return b
	}
	for _, cc := range []struct{ db, name string }{{walkDB, walkColl}, {walkDB, walkOther}, {"default", walkColl}} {
		c.must(t, "CreateCollection", &milvuspb.CreateCollectionRequest{DbName: cc.db, CollectionName: cc.name, Schema: schema(cc.name)})
	}
	pw := base64.StdEncoding.EncodeToString([]byte("walk-password"))
	for _, u := range []string{"nobody", "near", "granted", walkTarget} {
		c.must(t, "CreateCredential", &milvuspb.CreateCredentialRequest{Username: u, Password: pw})
	}
	// The public role's default grants would permit three RPCs to anyone.
	public := &milvuspb.SelectGrantResponse{}
	require.NoError(t, c.call(ctxT(t), "root", "Milvus", walkDB, "SelectGrant",
		&milvuspb.SelectGrantRequest{Entity: &milvuspb.GrantEntity{Role: &milvuspb.RoleEntity{Name: auth.RolePublic}, DbName: auth.AnyWord}}, public))
	require.NotEmpty(t, public.GetEntities())
	for _, g := range public.GetEntities() {
		c.must(t, "OperatePrivilege", &milvuspb.OperatePrivilegeRequest{Entity: g, Type: milvuspb.OperatePrivilegeType_Revoke})
	}

	methods := make([]string, 0, len(auth.Rules))
	for m := range auth.Rules {
		methods = append(methods, m)
	}
	slices.Sort(methods)
	for i, method := range methods {
		rule := auth.Rules[method]
		t.Run(method, func(t *testing.T) {
			// Each RPC gets fresh roles, bound only while it is walked.
			grantRole, nearRole := fmt.Sprintf("walk_g%d", i), fmt.Sprintf("walk_n%d", i)
			c.must(t, "CreateRole", &milvuspb.CreateRoleRequest{Entity: &milvuspb.RoleEntity{Name: grantRole}})
			c.must(t, "CreateRole", &milvuspb.CreateRoleRequest{Entity: &milvuspb.RoleEntity{Name: nearRole}})
			// (maxRoleNum is 10: drop them after.)
			defer c.must(t, "DropRole", &milvuspb.DropRoleRequest{RoleName: grantRole, ForceDrop: true})
			defer c.must(t, "DropRole", &milvuspb.DropRoleRequest{RoleName: nearRole, ForceDrop: true})
			c.must(t, "OperatePrivilege", &milvuspb.OperatePrivilegeRequest{Entity: grantFor(grantRole, rule), Type: milvuspb.OperatePrivilegeType_Grant})
			near := nearMisses(nearRole, rule)
			for _, g := range near {
				c.must(t, "OperatePrivilege", &milvuspb.OperatePrivilegeRequest{Entity: g, Type: milvuspb.OperatePrivilegeType_Grant})
			}
			bind := func(user, role string, typ milvuspb.OperateUserRoleType) {
				c.must(t, "OperateUserRole", &milvuspb.OperateUserRoleRequest{Username: user, RoleName: role, Type: typ})
			}
			bind("granted", grantRole, milvuspb.OperateUserRoleType_AddUserToRole)
			bind("near", nearRole, milvuspb.OperateUserRoleType_AddUserToRole)
			defer bind("granted", grantRole, milvuspb.OperateUserRoleType_RemoveUserFromRole)
			defer bind("near", nearRole, milvuspb.OperateUserRoleType_RemoveUserFromRole)

			req := walkRequest(t, method, rule)
			db := walkDB
			if r, ok := req.(interface{ GetDbName() string }); ok && r.GetDbName() != "" {
				db = r.GetDbName()
			}
			invoke := func(user string) (*commonpb.Status, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				resp := newWalkMessage(t, method, false)
				err := c.call(ctx, user, "walk-password", walkDB, method, proto.Clone(req), resp)
				return responseStatus(resp), err
			}
			denied := []string{"nobody"}
			if len(near) > 0 {
				denied = append(denied, "near")
			}
			for _, user := range denied {
				_, err := invoke(user)
				require.Equal(t, codes.PermissionDenied, status.Code(err), "%s as %s: %v", method, user, err)
				require.Equal(t, fmt.Sprintf("Privilege%s: permission deny to %s in the `%s` database", rule.Privilege, user, db),
					status.Convert(err).Message())
			}
			st, err := invoke("granted")
			if err != nil {
				require.NotContains(t, []codes.Code{codes.PermissionDenied, codes.Unauthenticated}, status.Code(err),
					"%s with %s granted: %v", method, rule.Privilege, err)
			}
			require.NotContains(t, st.GetReason(), "permission deny", "%s with %s granted", method, rule.Privilege)
		})
	}
	// The walk left the objects it relies on in place.
	has := &milvuspb.BoolResponse{}
	require.NoError(t, c.call(ctxT(t), "root", "Milvus", walkDB, "HasCollection",
		&milvuspb.HasCollectionRequest{DbName: walkDB, CollectionName: walkColl}, has))
	require.True(t, has.GetValue())
}
