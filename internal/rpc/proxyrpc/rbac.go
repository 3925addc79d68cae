package proxyrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/auth"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// RBACWriter changes users, roles, grants and privilege groups: the
// coordinator's auth.Store, whose writes tell every proxy to reload
// (proxy.RBACWriter is the same contract).
type RBACWriter interface {
	CreateUser(ctx context.Context, name, password string) error
	UpdatePassword(ctx context.Context, name, oldPassword, newPassword string) error
	DeleteUser(ctx context.Context, name string) error
	CreateRole(ctx context.Context, role string) error
	DropRole(ctx context.Context, role string, force bool) error
	OperateUserRole(ctx context.Context, user, role string, add bool) error
	OperateGrant(ctx context.Context, g auth.Grant, add bool) error
	CreateGroup(ctx context.Context, name string) error
	DropGroup(ctx context.Context, name string) error
	OperateGroup(ctx context.Context, name string, privs []string, add bool) error
	Restore(ctx context.Context, snap auth.Snapshot) error
}

// RBACServer serves RBACService from the coordinator's RBAC store.
type RBACServer struct {
	proxyv1.UnimplementedRBACServiceServer
	w RBACWriter
}

// NewRBACServer returns a server over the RBAC store (the app passes the
// one whose writes tell the proxies to reload).
func NewRBACServer(w RBACWriter) *RBACServer { return &RBACServer{w: w} }

// CreateUser implements RBACService.CreateUser.
func (s *RBACServer) CreateUser(ctx context.Context, req *proxyv1.CreateUserRequest) (*proxyv1.CreateUserResponse, error) {
	return &proxyv1.CreateUserResponse{}, s.w.CreateUser(ctx, req.GetName(), req.GetPassword())
}

// UpdatePassword implements RBACService.UpdatePassword.
func (s *RBACServer) UpdatePassword(ctx context.Context, req *proxyv1.UpdatePasswordRequest) (*proxyv1.UpdatePasswordResponse, error) {
	return &proxyv1.UpdatePasswordResponse{}, s.w.UpdatePassword(ctx, req.GetName(), req.GetOldPassword(), req.GetNewPassword())
}

// DeleteUser implements RBACService.DeleteUser.
func (s *RBACServer) DeleteUser(ctx context.Context, req *proxyv1.DeleteUserRequest) (*proxyv1.DeleteUserResponse, error) {
	return &proxyv1.DeleteUserResponse{}, s.w.DeleteUser(ctx, req.GetName())
}

// CreateRole implements RBACService.CreateRole.
func (s *RBACServer) CreateRole(ctx context.Context, req *proxyv1.CreateRoleRequest) (*proxyv1.CreateRoleResponse, error) {
	return &proxyv1.CreateRoleResponse{}, s.w.CreateRole(ctx, req.GetRole())
}

// DropRole implements RBACService.DropRole.
func (s *RBACServer) DropRole(ctx context.Context, req *proxyv1.DropRoleRequest) (*proxyv1.DropRoleResponse, error) {
	return &proxyv1.DropRoleResponse{}, s.w.DropRole(ctx, req.GetRole(), req.GetForce())
}

// OperateUserRole implements RBACService.OperateUserRole.
func (s *RBACServer) OperateUserRole(ctx context.Context, req *proxyv1.OperateUserRoleRequest) (*proxyv1.OperateUserRoleResponse, error) {
	return &proxyv1.OperateUserRoleResponse{}, s.w.OperateUserRole(ctx, req.GetUser(), req.GetRole(), req.GetAdd())
}

// OperateGrant implements RBACService.OperateGrant.
func (s *RBACServer) OperateGrant(ctx context.Context, req *proxyv1.OperateGrantRequest) (*proxyv1.OperateGrantResponse, error) {
	return &proxyv1.OperateGrantResponse{}, s.w.OperateGrant(ctx, decodeGrant(req.GetGrant()), req.GetAdd())
}

// CreatePrivilegeGroup implements RBACService.CreatePrivilegeGroup.
func (s *RBACServer) CreatePrivilegeGroup(ctx context.Context, req *proxyv1.CreatePrivilegeGroupRequest) (*proxyv1.CreatePrivilegeGroupResponse, error) {
	return &proxyv1.CreatePrivilegeGroupResponse{}, s.w.CreateGroup(ctx, req.GetName())
}

// DropPrivilegeGroup implements RBACService.DropPrivilegeGroup.
func (s *RBACServer) DropPrivilegeGroup(ctx context.Context, req *proxyv1.DropPrivilegeGroupRequest) (*proxyv1.DropPrivilegeGroupResponse, error) {
	return &proxyv1.DropPrivilegeGroupResponse{}, s.w.DropGroup(ctx, req.GetName())
}

// OperatePrivilegeGroup implements RBACService.OperatePrivilegeGroup.
func (s *RBACServer) OperatePrivilegeGroup(ctx context.Context, req *proxyv1.OperatePrivilegeGroupRequest) (*proxyv1.OperatePrivilegeGroupResponse, error) {
	return &proxyv1.OperatePrivilegeGroupResponse{}, s.w.OperateGroup(ctx, req.GetName(), req.GetPrivileges(), req.GetAdd())
}

// RestoreRBAC implements RBACService.RestoreRBAC.
func (s *RBACServer) RestoreRBAC(ctx context.Context, req *proxyv1.RestoreRBACRequest) (*proxyv1.RestoreRBACResponse, error) {
	snap := auth.Snapshot{Roles: req.GetRoles()}
	for _, u := range req.GetUsers() {
		snap.Users = append(snap.Users, auth.SnapshotUser{Name: u.GetName(), Hash: u.GetPasswordHash(), Roles: u.GetRoles()})
	}
	for _, g := range req.GetGrants() {
		snap.Grants = append(snap.Grants, decodeGrant(g))
	}
	for _, g := range req.GetGroups() {
		snap.Groups = append(snap.Groups, auth.Group{Name: g.GetName(), Privileges: g.GetPrivileges()})
	}
	return &proxyv1.RestoreRBACResponse{}, s.w.Restore(ctx, snap)
}

func encodeGrant(g auth.Grant) *proxyv1.Grant {
	return &proxyv1.Grant{
		Role: g.Role, ObjectType: g.ObjectType, ObjectName: g.ObjectName, Db: g.DB, Privilege: g.Privilege, Grantor: g.Grantor,
	}
}

func decodeGrant(m *proxyv1.Grant) auth.Grant {
	return auth.Grant{
		Role: m.GetRole(), ObjectType: m.GetObjectType(), ObjectName: m.GetObjectName(), DB: m.GetDb(),
		Privilege: m.GetPrivilege(), Grantor: m.GetGrantor(),
	}
}

// RBAC is the coordinator's RBAC store over RBACService, as a proxy
// process writes it (proxy.RBACWriter). Each change returns once the
// coordinator stored it and told every proxy to reload; a failure is the
// error with the coordinator's Milvus code.
type RBAC struct {
	c proxyv1.RBACServiceClient
}

// NewRBAC returns a client of RBACService over conn.
func NewRBAC(conn grpc.ClientConnInterface) *RBAC {
	return &RBAC{c: proxyv1.NewRBACServiceClient(conn)}
}

// CreateUser implements proxy.RBACWriter.
func (r *RBAC) CreateUser(ctx context.Context, name, password string) error {
	_, err := r.c.CreateUser(ctx, &proxyv1.CreateUserRequest{Name: name, Password: password})
	return err
}

// UpdatePassword implements proxy.RBACWriter.
func (r *RBAC) UpdatePassword(ctx context.Context, name, oldPassword, newPassword string) error {
	_, err := r.c.UpdatePassword(ctx, &proxyv1.UpdatePasswordRequest{Name: name, OldPassword: oldPassword, NewPassword: newPassword})
	return err
}

// DeleteUser implements proxy.RBACWriter.
func (r *RBAC) DeleteUser(ctx context.Context, name string) error {
	_, err := r.c.DeleteUser(ctx, &proxyv1.DeleteUserRequest{Name: name})
	return err
}

// CreateRole implements proxy.RBACWriter.
func (r *RBAC) CreateRole(ctx context.Context, role string) error {
	_, err := r.c.CreateRole(ctx, &proxyv1.CreateRoleRequest{Role: role})
	return err
}

// DropRole implements proxy.RBACWriter.
func (r *RBAC) DropRole(ctx context.Context, role string, force bool) error {
	_, err := r.c.DropRole(ctx, &proxyv1.DropRoleRequest{Role: role, Force: force})
	return err
}

// OperateUserRole implements proxy.RBACWriter.
func (r *RBAC) OperateUserRole(ctx context.Context, user, role string, add bool) error {
	_, err := r.c.OperateUserRole(ctx, &proxyv1.OperateUserRoleRequest{User: user, Role: role, Add: add})
	return err
}

// OperateGrant implements proxy.RBACWriter.
func (r *RBAC) OperateGrant(ctx context.Context, g auth.Grant, add bool) error {
	_, err := r.c.OperateGrant(ctx, &proxyv1.OperateGrantRequest{Grant: encodeGrant(g), Add: add})
	return err
}

// CreateGroup implements proxy.RBACWriter.
func (r *RBAC) CreateGroup(ctx context.Context, name string) error {
	_, err := r.c.CreatePrivilegeGroup(ctx, &proxyv1.CreatePrivilegeGroupRequest{Name: name})
	return err
}

// DropGroup implements proxy.RBACWriter.
func (r *RBAC) DropGroup(ctx context.Context, name string) error {
	_, err := r.c.DropPrivilegeGroup(ctx, &proxyv1.DropPrivilegeGroupRequest{Name: name})
	return err
}

// OperateGroup implements proxy.RBACWriter.
func (r *RBAC) OperateGroup(ctx context.Context, name string, privs []string, add bool) error {
	_, err := r.c.OperatePrivilegeGroup(ctx, &proxyv1.OperatePrivilegeGroupRequest{Name: name, Privileges: privs, Add: add})
	return err
}

// Restore implements proxy.RBACWriter.
func (r *RBAC) Restore(ctx context.Context, snap auth.Snapshot) error {
	req := &proxyv1.RestoreRBACRequest{Roles: snap.Roles}
	for _, u := range snap.Users {
		req.Users = append(req.Users, &proxyv1.RestoredUser{Name: u.Name, PasswordHash: u.Hash, Roles: u.Roles})
	}
	for _, g := range snap.Grants {
		req.Grants = append(req.Grants, encodeGrant(g))
	}
	for _, g := range snap.Groups {
		req.Groups = append(req.Groups, &proxyv1.PrivilegeGroup{Name: g.Name, Privileges: g.Privileges})
	}
	_, err := r.c.RestoreRBAC(ctx, req)
	return err
}
