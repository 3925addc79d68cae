package rest

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
)

// rbacBody is the union of the users/*, roles/* and privilege_groups/*
// request bodies (Milvus REST v2 field names).
type rbacBody struct {
	UserName           string   `json:"userName"`
	Password           string   `json:"password"`
	NewPassword        string   `json:"newPassword"`
	RoleName           string   `json:"roleName"`
	ObjectType         string   `json:"objectType"`
	ObjectName         string   `json:"objectName"`
	Privilege          string   `json:"privilege"`
	DBName             string   `json:"dbName"`
	CollectionName     string   `json:"collectionName"`
	PrivilegeGroupName string   `json:"privilegeGroupName"`
	Privileges         []string `json:"privileges"`
}

// decodeRBAC decodes the body and checks that the named fields are set.
func decodeRBAC(r *request, required ...string) (*rbacBody, error) {
	var b rbacBody
	if err := r.decode(&b); err != nil {
		return nil, err
	}
	values := map[string]string{
		"userName": b.UserName, "password": b.Password, "roleName": b.RoleName,
		"objectType": b.ObjectType, "objectName": b.ObjectName, "privilege": b.Privilege,
		"privilegeGroupName": b.PrivilegeGroupName,
	}
	for _, f := range required {
		if values[f] == "" {
			return nil, missing(f)
		}
	}
	return &b, nil
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// rbacAction is one users/roles/privilege_groups route: which fields it
// needs and the call it makes.
type rbacAction struct {
	required []string
	call     func(ctx context.Context, r *request, b *rbacBody) (any, error)
}

func (h *Handler) rbacRoutes() {
	status := func(resp any, err error) (any, error) { return nil, check(resp, err) }
	userRole := func(t milvuspb.OperateUserRoleType) rbacAction {
		return rbacAction{[]string{"userName", "roleName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.OperateUserRole(ctx, &milvuspb.OperateUserRoleRequest{Username: b.UserName, RoleName: b.RoleName, Type: t}))
		}}
	}
	grantV1 := func(t milvuspb.OperatePrivilegeType) rbacAction {
		return rbacAction{[]string{"roleName", "objectType", "objectName", "privilege"}, func(ctx context.Context, r *request, b *rbacBody) (any, error) {
			return status(h.svc.OperatePrivilege(ctx, &milvuspb.OperatePrivilegeRequest{Type: t, Entity: &milvuspb.GrantEntity{
				Role: &milvuspb.RoleEntity{Name: b.RoleName}, Object: &milvuspb.ObjectEntity{Name: b.ObjectType},
				ObjectName: b.ObjectName, DbName: r.db,
				Grantor: &milvuspb.GrantorEntity{Privilege: &milvuspb.PrivilegeEntity{Name: b.Privilege}},
			}}))
		}}
	}
	grantV2 := func(t milvuspb.OperatePrivilegeType) rbacAction {
		return rbacAction{[]string{"roleName", "privilege"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.OperatePrivilegeV2(ctx, &milvuspb.OperatePrivilegeV2Request{
				Type: t,
				Role: &milvuspb.RoleEntity{Name: b.RoleName}, DbName: b.DBName, CollectionName: b.CollectionName,
				Grantor: &milvuspb.GrantorEntity{Privilege: &milvuspb.PrivilegeEntity{Name: b.Privilege}},
			}))
		}}
	}
	groupOp := func(t milvuspb.OperatePrivilegeGroupType) rbacAction {
		return rbacAction{[]string{"privilegeGroupName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			req := &milvuspb.OperatePrivilegeGroupRequest{GroupName: b.PrivilegeGroupName, Type: t}
			for _, p := range b.Privileges {
				req.Privileges = append(req.Privileges, &milvuspb.PrivilegeEntity{Name: p})
			}
			return status(h.svc.OperatePrivilegeGroup(ctx, req))
		}}
	}
	actions := map[string]rbacAction{
		"users/list": {nil, func(ctx context.Context, _ *request, _ *rbacBody) (any, error) {
			resp, err := h.svc.ListCredUsers(ctx, &milvuspb.ListCredUsersRequest{})
			if err := check(resp, err); err != nil {
				return nil, err
			}
			return nonNil(resp.GetUsernames()), nil
		}},
		"users/describe": {[]string{"userName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			resp, err := h.svc.SelectUser(ctx, &milvuspb.SelectUserRequest{User: &milvuspb.UserEntity{Name: b.UserName}, IncludeRoleInfo: true})
			if err := check(resp, err); err != nil {
				return nil, err
			}
			roles := []string{}
			for _, u := range resp.GetResults() {
				for _, role := range u.GetRoles() {
					roles = append(roles, role.GetName())
				}
			}
			return roles, nil
		}},
		"users/create": {[]string{"userName", "password"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.CreateCredential(ctx, &milvuspb.CreateCredentialRequest{Username: b.UserName, Password: b64(b.Password)}))
		}},
		"users/update_password": {[]string{"userName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.UpdateCredential(ctx, &milvuspb.UpdateCredentialRequest{
				Username:    b.UserName,
				OldPassword: b64(b.Password), NewPassword: b64(b.NewPassword),
			}))
		}},
		"users/drop": {[]string{"userName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.DeleteCredential(ctx, &milvuspb.DeleteCredentialRequest{Username: b.UserName}))
		}},
		"users/grant_role":  userRole(milvuspb.OperateUserRoleType_AddUserToRole),
		"users/revoke_role": userRole(milvuspb.OperateUserRoleType_RemoveUserFromRole),
		"roles/list": {nil, func(ctx context.Context, _ *request, _ *rbacBody) (any, error) {
			resp, err := h.svc.SelectRole(ctx, &milvuspb.SelectRoleRequest{})
			if err := check(resp, err); err != nil {
				return nil, err
			}
			names := []string{}
			for _, r := range resp.GetResults() {
				names = append(names, r.GetRole().GetName())
			}
			return names, nil
		}},
		"roles/describe": {[]string{"roleName"}, func(ctx context.Context, r *request, b *rbacBody) (any, error) {
			resp, err := h.svc.SelectGrant(ctx, &milvuspb.SelectGrantRequest{Entity: &milvuspb.GrantEntity{
				Role: &milvuspb.RoleEntity{Name: b.RoleName}, DbName: r.db,
			}})
			if err := check(resp, err); err != nil {
				return nil, err
			}
			out := []map[string]string{}
			for _, g := range resp.GetEntities() {
				out = append(out, map[string]string{
					"objectType": g.GetObject().GetName(), "objectName": g.GetObjectName(),
					"privilege": g.GetGrantor().GetPrivilege().GetName(), "dbName": g.GetDbName(),
					"grantor": g.GetGrantor().GetUser().GetName(),
				})
			}
			return out, nil
		}},
		"roles/create": {[]string{"roleName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.CreateRole(ctx, &milvuspb.CreateRoleRequest{Entity: &milvuspb.RoleEntity{Name: b.RoleName}}))
		}},
		"roles/drop": {[]string{"roleName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.DropRole(ctx, &milvuspb.DropRoleRequest{RoleName: b.RoleName}))
		}},
		"roles/grant_privilege":     grantV1(milvuspb.OperatePrivilegeType_Grant),
		"roles/revoke_privilege":    grantV1(milvuspb.OperatePrivilegeType_Revoke),
		"roles/grant_privilege_v2":  grantV2(milvuspb.OperatePrivilegeType_Grant),
		"roles/revoke_privilege_v2": grantV2(milvuspb.OperatePrivilegeType_Revoke),
		"privilege_groups/create": {[]string{"privilegeGroupName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.CreatePrivilegeGroup(ctx, &milvuspb.CreatePrivilegeGroupRequest{GroupName: b.PrivilegeGroupName}))
		}},
		"privilege_groups/drop": {[]string{"privilegeGroupName"}, func(ctx context.Context, _ *request, b *rbacBody) (any, error) {
			return status(h.svc.DropPrivilegeGroup(ctx, &milvuspb.DropPrivilegeGroupRequest{GroupName: b.PrivilegeGroupName}))
		}},
		"privilege_groups/list": {nil, func(ctx context.Context, _ *request, _ *rbacBody) (any, error) {
			resp, err := h.svc.ListPrivilegeGroups(ctx, &milvuspb.ListPrivilegeGroupsRequest{})
			if err := check(resp, err); err != nil {
				return nil, err
			}
			groups := []map[string]any{}
			for _, g := range resp.GetPrivilegeGroups() {
				var ps []string
				for _, p := range g.GetPrivileges() {
					ps = append(ps, p.GetName())
				}
				groups = append(groups, map[string]any{"privilegeGroupName": g.GetGroupName(), "privileges": strings.Join(ps, ",")})
			}
			return map[string]any{"privilegeGroups": groups}, nil
		}},
		"privilege_groups/add_privileges_to_group":      groupOp(milvuspb.OperatePrivilegeGroupType_AddPrivilegesToGroup),
		"privilege_groups/remove_privileges_from_group": groupOp(milvuspb.OperatePrivilegeGroupType_RemovePrivilegesFromGroup),
	}
	for path, a := range actions {
		h.add(path, false, func(ctx context.Context, r *request) (any, error) {
			b, err := decodeRBAC(r, a.required...)
			if err != nil {
				return nil, err
			}
			return a.call(ctx, r, b)
		})
	}
}
