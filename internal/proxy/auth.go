package proxy

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/auth"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// SetAuth gives the proxy the users, roles and grants its credential and
// RBAC RPCs serve; it must be called before the proxy serves. Changes go
// to the guard's store unless SetRBACWriter names another writer.
func (p *Proxy) SetAuth(g *auth.Guard) { p.rbac = g }

// SetRBACWriter sends the changes of users, roles, grants and privilege
// groups to w (a proxy process: the coordinator, which owns them and tells
// every proxy to reload before a change returns) instead of the guard's
// store; the reads stay on the guard's store. Call it before serving.
func (p *Proxy) SetRBACWriter(w RBACWriter) { p.rbacW = w }

var errNoRBAC = errcode.New(errcode.Unexpected, "RBAC is not configured on this server")

// store returns the RBAC store, or an error when SetAuth was not called.
func (p *Proxy) store() (*auth.Store, error) {
	if p.rbac == nil {
		return nil, errNoRBAC
	}
	return p.rbac.Store(), nil
}

// writer returns what RBAC changes go to: the writer SetRBACWriter set,
// else the guard's store.
func (p *Proxy) writer() (RBACWriter, error) {
	if p.rbacW != nil {
		return p.rbacW, nil
	}
	s, err := p.store()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// decodePassword decodes a base64 password field (SDKs send passwords so).
func decodePassword(v, what string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", errcode.InvalidParam("decode %s failed: %v", what, err)
	}
	return string(b), nil
}

// CreateCredential creates a user.
func (p *Proxy) CreateCredential(ctx context.Context, req *milvuspb.CreateCredentialRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	pw, err := decodePassword(req.GetPassword(), "password")
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(s.CreateUser(ctx, req.GetUsername(), pw)), nil
}

// UpdateCredential changes a user's password; the old one must be right.
func (p *Proxy) UpdateCredential(ctx context.Context, req *milvuspb.UpdateCredentialRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	oldPw, err := decodePassword(req.GetOldPassword(), "old password")
	if err != nil {
		return errcode.Status(err), nil
	}
	newPw, err := decodePassword(req.GetNewPassword(), "password")
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(s.UpdatePassword(ctx, req.GetUsername(), oldPw, newPw)), nil
}

// DeleteCredential deletes a user (never root).
func (p *Proxy) DeleteCredential(ctx context.Context, req *milvuspb.DeleteCredentialRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(s.DeleteUser(ctx, req.GetUsername())), nil
}

// ListCredUsers lists the user names.
func (p *Proxy) ListCredUsers(context.Context, *milvuspb.ListCredUsersRequest) (*milvuspb.ListCredUsersResponse, error) {
	s, err := p.store()
	if err != nil {
		return &milvuspb.ListCredUsersResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.ListCredUsersResponse{Status: ok(), Usernames: s.Users()}, nil
}

// CreateRole creates a custom role.
func (p *Proxy) CreateRole(ctx context.Context, req *milvuspb.CreateRoleRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(s.CreateRole(ctx, req.GetEntity().GetName())), nil
}

// DropRole drops a custom role.
func (p *Proxy) DropRole(ctx context.Context, req *milvuspb.DropRoleRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(s.DropRole(ctx, req.GetRoleName(), req.GetForceDrop())), nil
}

// OperateUserRole binds a role to a user or unbinds it.
func (p *Proxy) OperateUserRole(ctx context.Context, req *milvuspb.OperateUserRoleRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	add := req.GetType() == milvuspb.OperateUserRoleType_AddUserToRole
	return errcode.Status(s.OperateUserRole(ctx, req.GetUsername(), req.GetRoleName(), add)), nil
}

// SelectRole lists one role (or all), with their users on request.
func (p *Proxy) SelectRole(_ context.Context, req *milvuspb.SelectRoleRequest) (*milvuspb.SelectRoleResponse, error) {
	s, err := p.store()
	if err != nil {
		return &milvuspb.SelectRoleResponse{Status: errcode.Status(err)}, nil
	}
	roles := s.Roles()
	if r := req.GetRole(); r != nil {
		if err := auth.ValidRoleName(r.GetName()); err != nil {
			return &milvuspb.SelectRoleResponse{Status: errcode.Status(err)}, nil
		}
		roles = nil
		if s.RoleExists(r.GetName()) {
			roles = []string{r.GetName()}
		}
	}
	resp := &milvuspb.SelectRoleResponse{Status: ok()}
	for _, r := range roles {
		res := &milvuspb.RoleResult{Role: &milvuspb.RoleEntity{Name: r}}
		if req.GetIncludeUserInfo() {
			for _, u := range s.RoleUsers(r) {
				res.Users = append(res.Users, &milvuspb.UserEntity{Name: u})
			}
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}

// SelectUser lists one user (or all), with their roles on request.
func (p *Proxy) SelectUser(_ context.Context, req *milvuspb.SelectUserRequest) (*milvuspb.SelectUserResponse, error) {
	s, err := p.store()
	if err != nil {
		return &milvuspb.SelectUserResponse{Status: errcode.Status(err)}, nil
	}
	users := s.Users()
	if u := req.GetUser(); u != nil {
		users = nil
		if s.UserExists(u.GetName()) {
			users = []string{u.GetName()}
		}
	}
	resp := &milvuspb.SelectUserResponse{Status: ok()}
	for _, u := range users {
		res := &milvuspb.UserResult{User: &milvuspb.UserEntity{Name: u}}
		if req.GetIncludeRoleInfo() {
			for _, r := range s.UserRoles(u) {
				res.Roles = append(res.Roles, &milvuspb.RoleEntity{Name: r})
			}
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}

// operateGrants applies g (Load and Flush carry their watching privileges
// with them: auth's impliedBy).
func operateGrants(ctx context.Context, s RBACWriter, g auth.Grant, add bool) error {
	return s.OperateGrant(ctx, g, add)
}

// grantor is the user a grant is recorded as made by.
func grantor(ctx context.Context) string {
	if u := auth.UserFrom(ctx); u != "" {
		return u
	}
	return auth.RootUser
}

// OperatePrivilege grants or revokes a privilege on an object (RBAC v1).
func (p *Proxy) OperatePrivilege(ctx context.Context, req *milvuspb.OperatePrivilegeRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	e := req.GetEntity()
	switch {
	case e == nil:
		return errcode.Status(errcode.InvalidParam("the entity in the request is nil")), nil
	case e.GetGrantor().GetPrivilege() == nil:
		return errcode.Status(errcode.InvalidParam("the privilege entity in the grantor entity is nil")), nil
	case e.GetObject() == nil:
		return errcode.Status(errcode.InvalidParam("the resource entity in the grant entity is nil")), nil
	case e.GetRole() == nil:
		return errcode.Status(errcode.InvalidParam("the object entity in the grant entity is nil")), nil
	}
	g := auth.Grant{
		Role: e.GetRole().GetName(), ObjectType: e.GetObject().GetName(), ObjectName: e.GetObjectName(),
		DB: e.GetDbName(), Privilege: e.GetGrantor().GetPrivilege().GetName(), Grantor: grantor(ctx),
	}
	if g.ObjectType == auth.ObjectCollection {
		g.ObjectName = p.grantedCollection(g.DB, g.ObjectName)
	}
	if _, group := auth.BuiltinGroups[g.Privilege]; g.ObjectType == auth.ObjectGlobal && !group {
		// As Milvus's root coordinator: a Global privilege is on every
		// object, whatever name the request gave (a grant stored under
		// "c1" would never match a check, which asks for "*").
		g.ObjectName = auth.AnyWord
	}
	return errcode.Status(operateGrants(ctx, s, g, req.GetType() == milvuspb.OperatePrivilegeType_Grant)), nil
}

// OperatePrivilegeV2 grants or revokes a privilege or group by database and
// collection (RBAC v2): the object type follows the privilege's level.
func (p *Proxy) OperatePrivilegeV2(ctx context.Context, req *milvuspb.OperatePrivilegeV2Request) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	priv := req.GetGrantor().GetPrivilege().GetName()
	if priv == "" {
		return errcode.Status(errcode.InvalidParam("the privilege entity in the grantor entity is nil")), nil
	}
	db, coll := req.GetDbName(), req.GetCollectionName()
	if db != "" && db != auth.AnyWord {
		// As Milvus: a malformed name is refused (802); a database that
		// does not exist (yet) may be granted on.
		if err := catalog.ValidateName("database", db); err != nil {
			return errcode.Status(err), nil
		}
	}
	if db == "" {
		db = "default"
	}
	if coll == "" {
		coll = auth.AnyWord
	}
	coll = p.grantedCollection(db, coll)
	g := auth.Grant{Role: req.GetRole().GetName(), Privilege: priv, Grantor: grantor(ctx)}
	switch level := v2Level(priv); {
	case level == auth.LevelCluster:
		if db != auth.AnyWord || coll != auth.AnyWord {
			return errcode.Status(errcode.InvalidParam("dbName and collectionName should be * for the cluster level privilege: %s", priv)), nil
		}
		g.ObjectType, g.DB, g.ObjectName = auth.ObjectGlobal, auth.AnyWord, auth.AnyWord
	case level == auth.LevelDatabase:
		if coll != auth.AnyWord {
			return errcode.Status(errcode.InvalidParam("collectionName should be * for the database level privilege: %s", priv)), nil
		}
		g.ObjectType, g.DB, g.ObjectName = auth.ObjectGlobal, db, auth.AnyWord
	default:
		g.ObjectType, g.DB, g.ObjectName = auth.ObjectCollection, db, coll
	}
	return errcode.Status(operateGrants(ctx, s, g, req.GetType() == milvuspb.OperatePrivilegeType_Grant)), nil
}

// grantedCollection is the collection a grant on name is stored for: the
// collection of an alias (Milvus resolves aliases when granting, so that
// the grant follows the collection), else name itself.
func (p *Proxy) grantedCollection(db, name string) string {
	if name == "" || name == auth.AnyWord {
		return name
	}
	if db == "" {
		db = "default"
	}
	if c, err := p.meta.DescribeAlias(db, name); err == nil && c != "" {
		return c
	}
	return name
}

// v2Level is the level a V2 grant of priv is stored at: a built-in group's
// own level, a privilege's level, else collection.
func v2Level(priv string) string {
	for _, l := range []string{auth.LevelCluster, auth.LevelDatabase, auth.LevelCollection} {
		if strings.HasPrefix(priv, l) {
			if _, ok := auth.BuiltinGroups[priv]; ok {
				return l
			}
		}
	}
	if l := auth.PrivilegeLevel(priv); l != "" {
		return l
	}
	return auth.LevelCollection
}

// SelectGrant lists a role's grants, filtered by object and database: an
// empty database is the request's (the dbname metadata, else "default"), as
// Milvus's database interceptor fills it in; "*" lists every database's.
func (p *Proxy) SelectGrant(ctx context.Context, req *milvuspb.SelectGrantRequest) (*milvuspb.SelectGrantResponse, error) {
	s, err := p.store()
	if err != nil {
		return &milvuspb.SelectGrantResponse{Status: errcode.Status(err)}, nil
	}
	e := req.GetEntity()
	role := e.GetRole().GetName()
	if e == nil || role == "" {
		return &milvuspb.SelectGrantResponse{Status: errcode.Status(errcode.InvalidParam("the role entity in the grant entity is nil"))}, nil
	}
	if !s.RoleExists(role) {
		return &milvuspb.SelectGrantResponse{Status: errcode.Status(
			errcode.New(auth.CodeLegacy, "not found the role, maybe the role isn't existed or internal system error"))}, nil
	}
	if t := e.GetObject().GetName(); t != "" {
		if err := auth.ValidObjectType(t); err != nil {
			return &milvuspb.SelectGrantResponse{Status: errcode.Status(err)}, nil
		}
	}
	db := dbName(ctx, e.GetDbName())
	if db == auth.AnyWord {
		db = ""
	}
	resp := &milvuspb.SelectGrantResponse{Status: ok()}
	for _, g := range s.Grants(role, e.GetObject().GetName(), e.GetObjectName(), db) {
		resp.Entities = append(resp.Entities, grantEntity(g))
	}
	return resp, nil
}

func grantEntity(g auth.Grant) *milvuspb.GrantEntity {
	priv := g.Privilege
	if priv == auth.AnyWord {
		priv = "All" // as Milvus lists it
	}
	return &milvuspb.GrantEntity{
		Role: &milvuspb.RoleEntity{Name: g.Role}, Object: &milvuspb.ObjectEntity{Name: g.ObjectType},
		ObjectName: g.ObjectName, DbName: g.DB,
		Grantor: &milvuspb.GrantorEntity{User: &milvuspb.UserEntity{Name: g.Grantor}, Privilege: &milvuspb.PrivilegeEntity{Name: priv}},
	}
}

// CreatePrivilegeGroup creates an empty custom privilege group.
func (p *Proxy) CreatePrivilegeGroup(ctx context.Context, req *milvuspb.CreatePrivilegeGroupRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(s.CreateGroup(ctx, req.GetGroupName())), nil
}

// DropPrivilegeGroup drops a custom privilege group no grant uses.
func (p *Proxy) DropPrivilegeGroup(ctx context.Context, req *milvuspb.DropPrivilegeGroupRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(s.DropGroup(ctx, req.GetGroupName())), nil
}

// ListPrivilegeGroups lists the built-in and custom privilege groups.
func (p *Proxy) ListPrivilegeGroups(context.Context, *milvuspb.ListPrivilegeGroupsRequest) (*milvuspb.ListPrivilegeGroupsResponse, error) {
	s, err := p.store()
	if err != nil {
		return &milvuspb.ListPrivilegeGroupsResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.ListPrivilegeGroupsResponse{Status: ok()}
	for _, g := range s.Groups() {
		resp.PrivilegeGroups = append(resp.PrivilegeGroups, groupInfo(g.Name, g.Privileges))
	}
	return resp, nil
}

func groupInfo(name string, privs []string) *milvuspb.PrivilegeGroupInfo {
	info := &milvuspb.PrivilegeGroupInfo{GroupName: name}
	for _, p := range privs {
		info.Privileges = append(info.Privileges, &milvuspb.PrivilegeEntity{Name: p})
	}
	return info
}

// OperatePrivilegeGroup adds privileges to a custom group or removes them.
func (p *Proxy) OperatePrivilegeGroup(ctx context.Context, req *milvuspb.OperatePrivilegeGroupRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	var privs []string
	for _, e := range req.GetPrivileges() {
		privs = append(privs, e.GetName())
	}
	add := req.GetType() == milvuspb.OperatePrivilegeGroupType_AddPrivilegesToGroup
	return errcode.Status(s.OperateGroup(ctx, req.GetGroupName(), privs, add)), nil
}

// BackupRBAC returns every user (with its password hash), role, grant and
// custom privilege group.
func (p *Proxy) BackupRBAC(context.Context, *milvuspb.BackupRBACMetaRequest) (*milvuspb.BackupRBACMetaResponse, error) {
	s, err := p.store()
	if err != nil {
		return &milvuspb.BackupRBACMetaResponse{Status: errcode.Status(err)}, nil
	}
	snap := s.Backup()
	meta := &milvuspb.RBACMeta{}
	for _, u := range snap.Users {
		info := &milvuspb.UserInfo{User: u.Name, Password: u.Hash}
		for _, r := range u.Roles {
			info.Roles = append(info.Roles, &milvuspb.RoleEntity{Name: r})
		}
		meta.Users = append(meta.Users, info)
	}
	for _, r := range snap.Roles {
		meta.Roles = append(meta.Roles, &milvuspb.RoleEntity{Name: r})
	}
	for _, g := range snap.Grants {
		meta.Grants = append(meta.Grants, grantEntity(g))
	}
	for _, g := range snap.Groups {
		meta.PrivilegeGroups = append(meta.PrivilegeGroups, groupInfo(g.Name, g.Privileges))
	}
	return &milvuspb.BackupRBACMetaResponse{Status: ok(), RBACMeta: meta}, nil
}

// RestoreRBAC adds a backup's users, roles, grants and groups, all or none.
func (p *Proxy) RestoreRBAC(ctx context.Context, req *milvuspb.RestoreRBACMetaRequest) (*commonpb.Status, error) {
	s, err := p.writer()
	if err != nil {
		return errcode.Status(err), nil
	}
	m := req.GetRBACMeta()
	var snap auth.Snapshot
	for _, u := range m.GetUsers() {
		su := auth.SnapshotUser{Name: u.GetUser(), Hash: u.GetPassword()}
		for _, r := range u.GetRoles() {
			su.Roles = append(su.Roles, r.GetName())
		}
		snap.Users = append(snap.Users, su)
	}
	for _, r := range m.GetRoles() {
		snap.Roles = append(snap.Roles, r.GetName())
	}
	for _, e := range m.GetGrants() {
		snap.Grants = append(snap.Grants, auth.Grant{
			Role: e.GetRole().GetName(), ObjectType: e.GetObject().GetName(),
			ObjectName: e.GetObjectName(), DB: e.GetDbName(), Privilege: e.GetGrantor().GetPrivilege().GetName(),
			Grantor: e.GetGrantor().GetUser().GetName(),
		})
	}
	for _, g := range m.GetPrivilegeGroups() {
		grp := auth.Group{Name: g.GetGroupName()}
		for _, pe := range g.GetPrivileges() {
			grp.Privileges = append(grp.Privileges, pe.GetName())
		}
		snap.Groups = append(snap.Groups, grp)
	}
	return errcode.Status(s.Restore(ctx, snap)), nil
}

// visibleDatabases filters ListDatabases for a user that is not root or
// admin when authorization is on: only databases its roles have grants in.
func (p *Proxy) visibleDatabases(ctx context.Context, names []string) []string {
	if p.rbac == nil || !p.rbac.Enabled() {
		return names
	}
	return p.rbac.Store().VisibleDatabases(auth.UserFrom(ctx), names)
}

// collectionFilter is which collections of db ShowCollections lists for the
// caller: with authorization on, those its grants reach.
func (p *Proxy) collectionFilter(ctx context.Context, db string) func(string) bool {
	if p.rbac == nil || !p.rbac.Enabled() {
		return func(string) bool { return true }
	}
	return p.rbac.Store().CollectionFilter(auth.UserFrom(ctx), db)
}
