package auth

import (
	"context"
	"encoding/base64"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testConfig() Config {
	c := Defaults()
	c.BcryptCost = 4 // bcrypt.MinCost keeps tests fast
	return c
}

func openKV(t testing.TB, dir string) metastore.KV {
	t.Helper()
	kv, err := embedded.Open(filepath.Join(dir, "meta.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	return kv
}

func openStore(t testing.TB, kv metastore.KV, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), kv, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	return s
}

// newStore opens a store over a fresh meta store closed at the test's end.
func newStore(t testing.TB) *Store {
	t.Helper()
	kv := openKV(t, t.TempDir())
	t.Cleanup(func() { _ = kv.Close() })
	return openStore(t, kv, testConfig())
}

// withUserRole returns s with user "u1" (password "password") holding role "r1".
func withUserRole(t testing.TB, s *Store) *Store {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateUser(ctx, "u1", "password"))
	require.NoError(t, s.CreateRole(ctx, "r1"))
	require.NoError(t, s.OperateUserRole(ctx, "u1", "r1", true))
	return s
}

func ctxAs(user, password string) context.Context {
	tok := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", tok))
}

func TestRootCreatedOnceAndPersisted(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	kv := openKV(t, dir)
	cfg := testConfig()
	cfg.DefaultRootPassword = "first-secret"
	s := openStore(t, kv, cfg)
	require.True(t, s.Verify(RootUser, "first-secret"))
	require.False(t, s.Verify(RootUser, DefaultRootPassword))
	require.NoError(t, s.CreateUser(ctx, "alice", "alice-pw"))
	require.NoError(t, s.CreateRole(ctx, "reader"))
	require.NoError(t, s.OperateUserRole(ctx, "alice", "reader", true))
	require.NoError(t, s.OperateGrant(ctx, Grant{Role: "reader", ObjectType: ObjectCollection, ObjectName: "books", DB: "db1", Privilege: "Search"}, true))
	require.NoError(t, kv.Close())

	// A later start keeps the state and ignores a changed default password.
	kv = openKV(t, dir)
	defer kv.Close()
	cfg.DefaultRootPassword = "second-secret"
	s = openStore(t, kv, cfg)
	require.True(t, s.Verify(RootUser, "first-secret"))
	require.False(t, s.Verify(RootUser, "second-secret"))
	require.True(t, s.Verify("alice", "alice-pw"))
	require.Equal(t, []string{"reader"}, s.UserRoles("alice"))
	require.True(t, s.Permit("alice", ObjectCollection, "db1", "books", "Search"))
	require.False(t, s.Permit("alice", ObjectCollection, "default", "books", "Search"), "grants are scoped by database")
	require.False(t, s.Permit("alice", ObjectCollection, "db1", "books", "Insert"))
}

func TestCredentialRules(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for _, tc := range []struct {
		name, user, pw string
		code           int32
	}{
		{"short password", "bob", "12345", errcode.IllegalArgument},
		{"long password", "bob", strings.Repeat("p", 257), errcode.IllegalArgument},
		{"empty user", "", "password", errcode.IllegalArgument},
		{"digit first", "1bob", "password", errcode.IllegalArgument},
		{"bad char", "bo b", "password", errcode.IllegalArgument},
		{"exists", RootUser, "password", CodeLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.CreateUser(ctx, tc.user, tc.pw)
			require.Error(t, err)
			require.Equal(t, tc.code, errcode.CodeOf(err))
		})
	}
	// Passwords past bcrypt's 72 bytes count in full.
	long := strings.Repeat("p", 100)
	require.NoError(t, s.CreateUser(ctx, "long", long))
	require.True(t, s.Verify("long", long))
	require.False(t, s.Verify("long", long[:99]+"q"))
	err := s.CreateUser(ctx, "short", "12345")
	require.ErrorContains(t, err, "invalid password length: invalid parameter[5 out of range 6 <= value <= 256]")
	require.NoError(t, s.CreateUser(ctx, "bob.s-1_x", "password"))
	err = s.UpdatePassword(ctx, "bob.s-1_x", "wrong-old", "newpassword")
	require.Equal(t, CodeNotAuthenticated, errcode.CodeOf(err))
	require.Contains(t, err.Error(), "old password not correct for bob.s-1_x")
	require.NoError(t, s.UpdatePassword(ctx, "bob.s-1_x", "password", "newpassword"))
	require.False(t, s.Verify("bob.s-1_x", "password"), "the cached old password is forgotten")
	require.True(t, s.Verify("bob.s-1_x", "newpassword"))
	require.Equal(t, CodeNotPermitted, errcode.CodeOf(s.DeleteUser(ctx, RootUser)))
	require.NoError(t, s.DeleteUser(ctx, "bob.s-1_x"))
	require.NoError(t, s.DeleteUser(ctx, "nobody"))
	require.False(t, s.Verify("bob.s-1_x", "newpassword"))
}

func TestBackoffAfterFailures(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newCredentials(4, func() time.Time { return now })
	s := newStore(t)
	hash := s.hashOf(RootUser)
	for i := 0; i < failuresBeforeBackoff; i++ {
		require.False(t, c.verify(RootUser, "guess", hash))
	}
	require.False(t, c.verify(RootUser, DefaultRootPassword, hash), "locked: even the right password is refused")
	now = now.Add(backoffBase + time.Millisecond)
	require.True(t, c.verify(RootUser, DefaultRootPassword, hash))
	// Only consecutive failures count: a success, even from the cache of
	// verified passwords, starts the count again.
	for round := 0; round < 3; round++ {
		for i := 0; i < failuresBeforeBackoff-1; i++ {
			require.False(t, c.verify(RootUser, "guess", hash))
		}
		require.True(t, c.verify(RootUser, DefaultRootPassword, hash), "round %d", round)
	}
	// Unknown users are tracked and locked the same way.
	for i := 0; i < failuresBeforeBackoff; i++ {
		require.False(t, c.verify("ghost", "x", ""))
	}
	require.True(t, now.Before(c.fails["ghost"].until))
}

func TestRolesAndGroups(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	require.Equal(t, CodeNotPermitted, errcode.CodeOf(s.DropRole(ctx, RoleAdmin, false)))
	require.Contains(t, s.DropRole(ctx, "nope", false).Error(), "not found the role")
	require.NoError(t, s.CreateRole(ctx, "r1"))
	require.Contains(t, s.CreateRole(ctx, "r1").Error(), `role [name:"r1"] already exists`)
	require.NoError(t, s.CreateUser(ctx, "u1", "password"))
	require.Equal(t, CodeOperateUserRole, errcode.CodeOf(s.OperateUserRole(ctx, "ghost", "r1", true)))
	require.Equal(t, CodeOperateUserRole, errcode.CodeOf(s.OperateUserRole(ctx, "u1", "ghost", true)))
	require.NoError(t, s.OperateUserRole(ctx, "u1", "r1", true))
	require.NoError(t, s.OperateUserRole(ctx, "ghost", "r1", false), "removing a deleted user's binding succeeds")
	require.Error(t, s.OperateGrant(ctx, Grant{Role: "r1", ObjectType: ObjectGlobal, ObjectName: "*", Privilege: "Fly"}, true))

	// A custom group granted on every collection of db "default".
	require.NoError(t, s.CreateGroup(ctx, "readers"))
	require.NoError(t, s.OperateGroup(ctx, "readers", []string{"Query", "Search"}, true))
	require.NoError(t, s.OperateGrant(ctx, Grant{Role: "r1", ObjectType: ObjectCollection, ObjectName: "*", DB: "default", Privilege: "readers"}, true))
	require.True(t, s.Permit("u1", ObjectCollection, "default", "any", "Query"))
	require.False(t, s.Permit("u1", ObjectCollection, "default", "any", "Insert"))
	require.Error(t, s.DropGroup(ctx, "readers"), "a group in use cannot be dropped")
	require.NoError(t, s.OperateGroup(ctx, "readers", []string{"Query"}, false))
	require.False(t, s.Permit("u1", ObjectCollection, "default", "any", "Query"), "group changes apply at once")
	require.True(t, s.Permit("u1", ObjectCollection, "default", "any", "Search"))

	// A built-in group; cluster privileges ignore the database.
	require.NoError(t, s.OperateGrant(ctx, Grant{Role: "r1", ObjectType: ObjectGlobal, ObjectName: "*", DB: "*", Privilege: "ClusterAdmin"}, true))
	require.True(t, s.Permit("u1", ObjectGlobal, "*", "*", "CreateDatabase"))
	require.Error(t, s.DropRole(ctx, "r1", false), "a role with grants needs force")
	require.NoError(t, s.DropRole(ctx, "r1", true))
	require.Empty(t, s.UserRoles("u1"))
	require.False(t, s.Permit("u1", ObjectCollection, "default", "any", "Search"))

	// Admin holders and root are permitted everything; public has its defaults.
	require.NoError(t, s.OperateUserRole(ctx, "u1", RoleAdmin, true))
	require.True(t, s.Permit("u1", ObjectGlobal, "x", "*", "DropDatabase"))
	require.True(t, s.Permit(RootUser, ObjectGlobal, "x", "*", "DropDatabase"))
	require.True(t, s.Permit("nobody", ObjectCollection, "x", "c", "IndexDetail"))
	require.False(t, s.Permit("nobody", ObjectCollection, "x", "c", "Search"))
}

func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	s := withUserRole(t, newStore(t))
	require.NoError(t, s.CreateGroup(ctx, "g1"))
	require.NoError(t, s.OperateGrant(ctx, Grant{Role: "r1", ObjectType: ObjectCollection, ObjectName: "c", DB: "default", Privilege: "g1"}, true))
	snap := s.Backup()

	s2 := newStore(t)
	require.NoError(t, s2.CreateRole(ctx, "r1"))
	require.Error(t, s2.Restore(ctx, Snapshot{Users: snap.Users[1:], Roles: snap.Roles, Grants: snap.Grants, Groups: snap.Groups}))
	require.False(t, s2.UserExists("u1"), "a failed restore applies nothing")
	require.NoError(t, s2.DropRole(ctx, "r1", false))
	snap.Users = snap.Users[1:] // root exists in both
	require.NoError(t, s2.Restore(ctx, snap))
	require.True(t, s2.Verify("u1", "password"))
	require.Equal(t, []string{"r1"}, s2.UserRoles("u1"))
	require.Len(t, s2.Grants("r1", "", "", ""), 1)
}

func TestGuard(t *testing.T) {
	ctx := context.Background()
	s := withUserRole(t, newStore(t))
	g := NewGuard(s, true)

	_, err := g.Authenticate(ctx)
	require.Equal(t, codes.Unauthenticated, status.Code(err))
	_, err = g.Authenticate(ctxAs("u1", "wrong"))
	require.Contains(t, err.Error(), "auth check failure, please check username and password are correct")
	_, err = g.Authenticate(ctxAs("ghost", "password"))
	require.Contains(t, err.Error(), "auth check failure, please check username and password are correct")
	tok := metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", base64.StdEncoding.EncodeToString([]byte("apikey"))))
	_, err = g.Authenticate(tok)
	require.Contains(t, err.Error(), "api key")

	search := &milvuspb.SearchRequest{DbName: "db1", CollectionName: "c1"}
	uctx, err := g.Check(ctxAs("u1", "password"), "Search", search)
	require.Equal(t, codes.PermissionDenied, status.Code(err))
	require.Equal(t, "PrivilegeSearch: permission deny to u1 in the `db1` database", status.Convert(err).Message())
	require.Equal(t, "u1", UserFrom(uctx))
	require.NoError(t, s.OperateGrant(ctx, Grant{Role: "r1", ObjectType: ObjectCollection, ObjectName: "c1", DB: "db1", Privilege: "Search"}, true))
	_, err = g.Check(ctxAs("u1", "password"), "Search", search)
	require.NoError(t, err)
	_, err = g.Check(ctxAs("u1", "password"), "Search", &milvuspb.SearchRequest{DbName: "db2", CollectionName: "c1"})
	require.Error(t, err, "the grant is for db1 only")
	// Flush names several collections: all must be permitted.
	_, err = g.Check(ctxAs("u1", "password"), "Flush", &milvuspb.FlushRequest{DbName: "db1", CollectionNames: []string{"c1"}})
	require.Error(t, err)
	// Users may update themselves, not others.
	_, err = g.Check(ctxAs("u1", "password"), "UpdateCredential", &milvuspb.UpdateCredentialRequest{Username: "u1"})
	require.NoError(t, err)
	_, err = g.Check(ctxAs("u1", "password"), "UpdateCredential", &milvuspb.UpdateCredentialRequest{Username: RootUser})
	require.Error(t, err)
	// RPCs outside the table need only authentication.
	_, err = g.Check(ctxAs("u1", "password"), "ListDatabases", &milvuspb.ListDatabasesRequest{})
	require.NoError(t, err)
	// Off, nothing is checked.
	_, err = NewGuard(s, false).Check(ctx, "DropDatabase", &milvuspb.DropDatabaseRequest{})
	require.NoError(t, err)
}

// TestRulesMatchProto holds the privilege table to the privilege
// annotations milvus.proto declares for every request message.
func TestRulesMatchProto(t *testing.T) {
	fd, err := protoregistry.GlobalFiles.FindFileByPath("milvus.proto")
	require.NoError(t, err)
	svc := fd.Services().ByName("MilvusService")
	for i := 0; i < svc.Methods().Len(); i++ {
		m := svc.Methods().Get(i)
		ext, _ := proto.GetExtension(m.Input().Options().(proto.Message), commonpb.E_PrivilegeExtObj).(*commonpb.PrivilegeExt)
		rule, ok := Rules[string(m.Name())]
		if ext == nil {
			require.False(t, ok, "%s has no privilege in milvus.proto", m.Name())
			continue
		}
		require.True(t, ok, "%s needs a rule", m.Name())
		require.Equal(t, ext.GetObjectType().String(), rule.ObjectType, m.Name())
		require.Equal(t, "Privilege"+rule.Privilege, ext.GetObjectPrivilege().String(), m.Name())
		named := ext.GetObjectNameIndex() > 0 || ext.GetObjectNameIndexs() > 0
		require.Equal(t, named, rule.Objects != nil, "%s object names", m.Name())
		if ext.GetObjectNameIndex() > 0 {
			// The rule reads the annotated field.
			msg := dynamicRequest(t, m.Input())
			f := m.Input().Fields().ByNumber(protoreflect.FieldNumber(ext.GetObjectNameIndex()))
			if f.Kind() == protoreflect.StringKind {
				msg.ProtoReflect().Set(f, protoreflect.ValueOfString("obj1"))
			} else {
				sub := msg.ProtoReflect().Mutable(f).Message()
				sub.Set(sub.Descriptor().Fields().ByName("name"), protoreflect.ValueOfString("obj1"))
			}
			require.Equal(t, []string{"obj1"}, rule.Objects(msg), m.Name())
		}
	}
}

func dynamicRequest(t *testing.T, d protoreflect.MessageDescriptor) proto.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
	require.NoError(t, err)
	return mt.New().Interface()
}

// TestEveryRuleDeniedThenAllowed checks each entry of the privilege table
// through the Guard: a role without the privilege is denied, the same role
// granted exactly that privilege on the request's object is allowed, and the
// grant does not leak to another database.
func TestEveryRuleDeniedThenAllowed(t *testing.T) {
	ctx := context.Background()
	s := withUserRole(t, newStore(t))
	g := NewGuard(s, true)
	for _, pg := range s.Grants(RolePublic, "", "", "") { // public's defaults would allow a few
		require.NoError(t, s.OperateGrant(ctx, pg, false))
	}
	fd, err := protoregistry.GlobalFiles.FindFileByPath("milvus.proto")
	require.NoError(t, err)
	svc := fd.Services().ByName("MilvusService")
	for method, rule := range Rules {
		t.Run(method, func(t *testing.T) {
			m := svc.Methods().ByName(protoreflect.Name(method))
			require.NotNil(t, m)
			req := dynamicRequest(t, m.Input())
			fields := req.ProtoReflect().Descriptor().Fields()
			if f := fields.ByName("db_name"); f != nil {
				req.ProtoReflect().Set(f, protoreflect.ValueOfString("db1"))
			}
			object := AnyWord
			if rule.Objects != nil {
				object = "obj1"
				setObjectName(t, req, "obj1")
			}
			user := ctxAs("u1", "password")
			reqDB := requestDB(metadata.NewIncomingContext(ctx, metadata.Pairs("dbname", "db1")), req)
			user = metadata.NewIncomingContext(user, metadata.Join(mdOf(user), metadata.Pairs("dbname", "db1")))
			if PrivilegeLevel(rule.Privilege) == LevelCluster {
				reqDB = AnyWord
			}
			_, err := g.Check(user, method, req)
			require.Equal(t, codes.PermissionDenied, status.Code(err), "%s without %s", method, rule.Privilege)
			grant := Grant{Role: "r1", ObjectType: rule.ObjectType, ObjectName: object, DB: reqDB, Privilege: rule.Privilege}
			if reqDB == AnyWord {
				grant.DB = "other"
			}
			require.NoError(t, s.OperateGrant(ctx, grant, true))
			_, err = g.Check(user, method, req)
			require.NoError(t, err, "%s with %s on %s", method, rule.Privilege, object)
			require.NoError(t, s.OperateGrant(ctx, grant, false))
			if reqDB != AnyWord {
				grant.DB = "db2"
				require.NoError(t, s.OperateGrant(ctx, grant, true))
				_, err = g.Check(user, method, req)
				require.Error(t, err, "%s: a grant in db2 does not cover db1", method)
				require.NoError(t, s.OperateGrant(ctx, grant, false))
			}
		})
	}
}

func mdOf(ctx context.Context) metadata.MD {
	md, _ := metadata.FromIncomingContext(ctx)
	return md
}

// setObjectName sets the request's object name field(s) to name.
func setObjectName(t *testing.T, req proto.Message, name string) {
	t.Helper()
	r := req.ProtoReflect()
	fields := r.Descriptor().Fields()
	for _, n := range []protoreflect.Name{"collection_name", "collectionName", "username", "user_name"} {
		if f := fields.ByName(n); f != nil {
			r.Set(f, protoreflect.ValueOfString(name))
			return
		}
	}
	if f := fields.ByName("collection_names"); f != nil {
		l := r.Mutable(f).List()
		l.Append(protoreflect.ValueOfString(name))
		return
	}
	if f := fields.ByName("user"); f != nil {
		sub := r.Mutable(f).Message()
		sub.Set(sub.Descriptor().Fields().ByName("name"), protoreflect.ValueOfString(name))
		return
	}
	t.Fatalf("%s: no object name field", r.Descriptor().Name())
}
