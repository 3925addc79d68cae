package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
)

// Group is a privilege group and its privileges.
type Group struct {
	// Name is the group's name.
	Name string
	// Privileges are the group's privileges, in API spelling.
	Privileges []string
	// Builtin is true for Milvus's built-in groups.
	Builtin bool
}

func validGroupName(name string) error {
	if strings.TrimSpace(name) == "" {
		return errcode.InvalidParam("privilege group name should not be empty")
	}
	if c := name[0]; c != '_' && !isAlpha(c) {
		return errcode.New(CodeInvalidGroupName, "%s: invalid privilege group name[privilegeGroup=the first character of a privilege group name %%s must be an underscore or letter]", name)
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; c != '_' && !isAlpha(c) && !isDigit(c) {
			return errcode.InvalidParam("privilege group name %s can only contain numbers, letters and underscores", name)
		}
	}
	return nil
}

// CreateGroup adds an empty custom privilege group.
func (s *Store) CreateGroup(ctx context.Context, name string) error {
	if err := validGroupName(name); err != nil {
		return err
	}
	if _, ok := BuiltinGroups[name]; ok || IsPrivilege(name) {
		return errcode.InvalidParam("privilege group name [%s] is defined by built in privileges or privilege groups in system", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[name]; ok {
		return errcode.New(CodeInvalidGroupName, "privilege group [%s] already exists: invalid privilege group name", name)
	}
	if err := s.putGroupLocked(ctx, name, []string{}); err != nil {
		return err
	}
	return nil
}

func (s *Store) putGroupLocked(ctx context.Context, name string, privs []string) error {
	b, _ := json.Marshal(groupRecord{V: 1, Privileges: privs})
	if err := s.kv.Txn(ctx, metastore.Put(keyGroup+name, b)); err != nil {
		return fmt.Errorf("auth: privilege group %s: %w", name, err)
	}
	s.groups[name] = privs
	return nil
}

// DropGroup removes a custom privilege group that no grant uses; an absent
// group is not an error.
func (s *Store) DropGroup(ctx context.Context, name string) error {
	if err := validGroupName(name); err != nil {
		return err
	}
	if _, ok := BuiltinGroups[name]; ok {
		return errcode.New(CodeInvalidGroupName, "the privilege group [%s] is a built-in group, which can't be dropped: invalid privilege group name", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[name]; !ok {
		return nil
	}
	for role, gs := range s.grants {
		for _, g := range gs {
			if g.Privilege == name {
				return errcode.New(CodeInvalidGroupName, "privilege group [%s] is used by role [%s], Use REVOKE API to revoke it first: invalid privilege group name", name, role)
			}
		}
	}
	if err := s.kv.Txn(ctx, metastore.Delete(keyGroup+name)); err != nil {
		return fmt.Errorf("auth: drop privilege group %s: %w", name, err)
	}
	delete(s.groups, name)
	return nil
}

// OperateGroup adds privileges to or removes them from a custom group.
func (s *Store) OperateGroup(ctx context.Context, name string, privs []string, add bool) error {
	if err := validGroupName(name); err != nil {
		return err
	}
	if _, ok := BuiltinGroups[name]; ok {
		return errcode.New(CodeInvalidGroupName, "the privilege group [%s] is a built-in group, which can't be changed: invalid privilege group name", name)
	}
	for _, p := range privs {
		if !IsPrivilege(p) {
			return errcode.InvalidParam("not found the privilege name[%s]", p)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.groups[name]
	if !ok {
		return errcode.New(CodeInvalidGroupName, "there is no privilege group name [%s] to operate: invalid privilege group name", name)
	}
	next := slices.Clone(cur)
	for _, p := range privs {
		i := slices.Index(next, p)
		switch {
		case add && i < 0:
			next = append(next, p)
		case !add && i >= 0:
			next = slices.Delete(next, i, i+1)
		}
	}
	sort.Strings(next)
	return s.putGroupLocked(ctx, name, next)
}

// legacyGroups are the RBAC v1 groups: usable in grants, not listed.
var legacyGroups = map[string]bool{"ReadOnly": true, "ReadWrite": true, "Admin": true}

// Groups lists the built-in groups, then the custom ones, each sorted by name.
func (s *Store) Groups() []Group {
	var out []Group
	for n, ps := range BuiltinGroups {
		if !legacyGroups[n] {
			out = append(out, Group{Name: n, Privileges: ps, Builtin: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	s.mu.RLock()
	defer s.mu.RUnlock()
	var custom []Group
	for n, ps := range s.groups {
		custom = append(custom, Group{Name: n, Privileges: slices.Clone(ps)})
	}
	sort.Slice(custom, func(i, j int) bool { return custom[i].Name < custom[j].Name })
	return append(out, custom...)
}
