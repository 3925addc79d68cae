package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
)

// Snapshot is the whole RBAC state as BackupRBAC returns it: users with
// their password hashes and roles, custom roles, grants and custom groups.
type Snapshot struct {
	// Users are the users; Hash is the bcrypt hash.
	Users []SnapshotUser
	// Roles are the custom roles.
	Roles []string
	// Grants are every role's grants.
	Grants []Grant
	// Groups are the custom privilege groups.
	Groups []Group
}

// SnapshotUser is one user of a Snapshot.
type SnapshotUser struct {
	Name  string
	Hash  string
	Roles []string
}

// Backup returns the RBAC state.
func (s *Store) Backup() Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var snap Snapshot
	for n, u := range s.users {
		snap.Users = append(snap.Users, SnapshotUser{Name: n, Hash: u.Hash, Roles: sortedKeys(s.userRoles[n])})
	}
	sort.Slice(snap.Users, func(i, j int) bool { return snap.Users[i].Name < snap.Users[j].Name })
	snap.Roles = sortedKeys(s.roles)
	for _, gs := range s.grants {
		for _, g := range gs {
			snap.Grants = append(snap.Grants, g)
		}
	}
	sort.Slice(snap.Grants, func(i, j int) bool { return snap.Grants[i].key() < snap.Grants[j].key() })
	for n, ps := range s.groups {
		snap.Groups = append(snap.Groups, Group{Name: n, Privileges: ps})
	}
	sort.Slice(snap.Groups, func(i, j int) bool { return snap.Groups[i].Name < snap.Groups[j].Name })
	return snap
}

// Restore adds a snapshot's users, roles, grants and groups in one
// transaction. Anything that already exists (a user, role or group of the
// same name) fails the whole restore; nothing is half-applied.
func (s *Store) Restore(ctx context.Context, snap Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ops []metastore.Op
	for _, r := range snap.Roles {
		if err := ValidRoleName(r); err != nil {
			return err
		}
		if s.roleExistsLocked(r) {
			return errcode.New(CodeLegacy, "role [%s] already exists", r)
		}
		ops = append(ops, metastore.IfAbsent(keyRole+r), metastore.Put(keyRole+r, emptyRecord))
	}
	newRole := map[string]bool{}
	for _, r := range snap.Roles {
		newRole[r] = true
	}
	roleOK := func(r string) bool { return s.roleExistsLocked(r) || newRole[r] }
	for _, g := range snap.Groups {
		if err := validGroupName(g.Name); err != nil {
			return err
		}
		if _, ok := s.groups[g.Name]; ok {
			return errcode.New(CodeInvalidGroupName, "privilege group [%s] already exists: invalid privilege group name", g.Name)
		}
		b, _ := json.Marshal(groupRecord{V: 1, Privileges: g.Privileges})
		ops = append(ops, metastore.IfAbsent(keyGroup+g.Name), metastore.Put(keyGroup+g.Name, b))
	}
	for _, u := range snap.Users {
		if err := s.validUsername(u.Name); err != nil {
			return err
		}
		if _, ok := s.users[u.Name]; ok {
			return errcode.New(CodeLegacy, "user [%s] already exists", u.Name)
		}
		b, _ := json.Marshal(userRecord{V: 1, Hash: u.Hash})
		ops = append(ops, metastore.IfAbsent(keyUser+u.Name), metastore.Put(keyUser+u.Name, b))
		for _, r := range u.Roles {
			if !roleOK(r) {
				return errRoleNotFound(CodeLegacy)
			}
			ops = append(ops, metastore.Put(keyUserRole+u.Name+"/"+r, emptyRecord))
		}
	}
	for _, g := range snap.Grants {
		if err := s.validGrant(&g); err != nil {
			return err
		}
		if !roleOK(g.Role) {
			return errRoleNotFound(CodeLegacy)
		}
		ops = append(ops, metastore.Put(g.key(), grantValue(g)))
	}
	if len(ops) == 0 {
		return nil
	}
	if err := s.kv.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("auth: restore RBAC: %w", err)
	}
	return s.loadLocked(ctx)
}
