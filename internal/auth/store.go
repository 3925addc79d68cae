package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
)

// Built-in names.
const (
	// RootUser is the super user created at first start; it cannot be deleted
	// and is never checked against grants.
	RootUser = "root"
	// RoleAdmin is the built-in role that is permitted everything.
	RoleAdmin = "admin"
	// RolePublic is the built-in role every user holds.
	RolePublic = "public"
	// AnyWord is the wildcard object name and database name of a grant.
	AnyWord = "*"
)

// Milvus merr codes of this package's errors (besides errcode's).
const (
	// CodeNotAuthenticated is merr.ErrPrivilegeNotAuthenticated.
	CodeNotAuthenticated int32 = 1400
	// CodeNotPermitted is merr.ErrPrivilegeNotPermitted.
	CodeNotPermitted int32 = 1401
	// CodeInvalidGroupName is merr.ErrPrivilegeGroupInvalidName.
	CodeInvalidGroupName int32 = 1402
	// CodeNeedAuthenticate is merr.ErrNeedAuthenticate (REST's answer to a
	// missing or wrong credential).
	CodeNeedAuthenticate int32 = 1800
	// CodeLegacy is the code Milvus's root coordinator answers RBAC failures with.
	CodeLegacy int32 = 65535
	// CodeOperateUserRole is the code of OperateUserRole failures (Milvus
	// ErrorCode_OperateUserRoleFailure surfaced by pymilvus).
	CodeOperateUserRole int32 = 65536
)

const (
	keyPrefix   = "auth/"
	keyInit     = keyPrefix + "init"
	keyUser     = keyPrefix + "user/"
	keyRole     = keyPrefix + "role/"
	keyUserRole = keyPrefix + "user-role/"
	keyGrant    = keyPrefix + "grant/"
	keyGroup    = keyPrefix + "group/"
)

// Grant is one privilege granted to a role on an object.
type Grant struct {
	// Role is the grantee.
	Role string
	// ObjectType is "Global", "Collection" or "User".
	ObjectType string
	// ObjectName is the object's name or "*".
	ObjectName string
	// DB is the database the grant is scoped to, or "*".
	DB string
	// Privilege is the privilege or privilege group, in API spelling ("*" is All).
	Privilege string
	// Grantor is the user who granted it.
	Grantor string
}

func (g Grant) key() string {
	return keyGrant + g.Role + "/" + g.ObjectType + "/" + g.DB + "/" + g.ObjectName + "/" + g.Privilege
}

type userRecord struct {
	V       int    `json:"v"`
	Hash    string `json:"hash"`
	Created int64  `json:"created"`
}

type grantRecord struct {
	V       int    `json:"v"`
	Grantor string `json:"grantor"`
}

type groupRecord struct {
	V          int      `json:"v"`
	Privileges []string `json:"privileges"`
}

var emptyRecord = []byte(`{"v":1}`)

// Store is the durable RBAC state: users, roles, grants and privilege
// groups, kept in memory and written through to the meta store.
type Store struct {
	kv     metastore.KV
	cfg    Config
	logger *slog.Logger

	mu        sync.RWMutex // guards the maps below; writers hold it across the meta store write
	users     map[string]userRecord
	roles     map[string]bool
	userRoles map[string]map[string]bool
	grants    map[string]map[string]Grant // role → key → grant
	groups    map[string][]string

	creds *credentials
}

// Open loads the RBAC state from kv, creating the root user and the public
// role's default grants at first start.
func Open(ctx context.Context, kv metastore.KV, cfg Config, logger *slog.Logger) (*Store, error) {
	if cfg.BcryptCost == 0 {
		cfg.BcryptCost = bcrypt.DefaultCost
	}
	s := &Store{kv: kv, cfg: cfg, logger: logger}
	s.creds = newCredentials(cfg.BcryptCost, time.Now)
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	if _, err := kv.Get(ctx, keyInit); errors.Is(err, metastore.ErrNotFound) {
		if err := s.initialize(ctx); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return s, nil
}

// initialize writes the first start's state in one transaction.
func (s *Store) initialize(ctx context.Context) error {
	pw := s.cfg.DefaultRootPassword
	if pw == "" {
		pw = DefaultRootPassword
	}
	hash, err := hashPassword(pw, s.cfg.BcryptCost)
	if err != nil {
		return fmt.Errorf("auth: hash root password: %w", err)
	}
	rec, _ := json.Marshal(userRecord{V: 1, Hash: hash, Created: time.Now().UnixMilli()})
	ops := []metastore.Op{metastore.IfAbsent(keyInit), metastore.Put(keyInit, emptyRecord), metastore.Put(keyUser+RootUser, rec)}
	var defaults []Grant
	for _, p := range []string{"DescribeCollection", "ListAliases"} {
		defaults = append(defaults, Grant{Role: RolePublic, ObjectType: ObjectGlobal, ObjectName: AnyWord, DB: AnyWord, Privilege: p, Grantor: RootUser})
	}
	defaults = append(defaults, Grant{Role: RolePublic, ObjectType: ObjectCollection, ObjectName: AnyWord, DB: AnyWord, Privilege: "IndexDetail", Grantor: RootUser})
	for _, g := range defaults {
		ops = append(ops, metastore.Put(g.key(), grantValue(g)))
	}
	if err := s.kv.Txn(ctx, ops...); err != nil && !errors.Is(err, metastore.ErrConflict) {
		return fmt.Errorf("auth: initialize: %w", err)
	}
	if s.cfg.DefaultRootPassword == "" {
		s.logger.Warn("auth: the root user has Milvus's default password; set security.defaultRootPassword or STRATA_ROOT_PASSWORD before the first start, or change it")
	}
	return s.load(ctx)
}

func grantValue(g Grant) []byte {
	b, _ := json.Marshal(grantRecord{V: 1, Grantor: g.Grantor})
	return b
}

// Reload replaces the in-memory users, roles, grants and privilege groups
// with the meta store's: a store whose meta store other processes write
// (a proxy process's, whose coordinator makes the changes) reloads when it
// is told they changed.
func (s *Store) Reload(ctx context.Context) error { return s.load(ctx) }

// load replaces the in-memory state with the meta store's.
func (s *Store) load(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loadLocked(ctx)
}

func (s *Store) loadLocked(ctx context.Context) error {
	kvs, err := s.kv.Scan(ctx, keyPrefix)
	if err != nil {
		return fmt.Errorf("auth: load: %w", err)
	}
	users := map[string]userRecord{}
	roles := map[string]bool{}
	userRoles := map[string]map[string]bool{}
	grants := map[string]map[string]Grant{}
	groups := map[string][]string{}
	for _, e := range kvs {
		switch k := e.Key; {
		case strings.HasPrefix(k, keyUserRole):
			user, role, ok := strings.Cut(strings.TrimPrefix(k, keyUserRole), "/")
			if !ok {
				return fmt.Errorf("auth: malformed key %q: %w", k, metastore.ErrCorrupt)
			}
			if userRoles[user] == nil {
				userRoles[user] = map[string]bool{}
			}
			userRoles[user][role] = true
		case strings.HasPrefix(k, keyUser):
			var r userRecord
			if err := json.Unmarshal(e.Value, &r); err != nil {
				return fmt.Errorf("auth: key %q: %w: %w", k, metastore.ErrCorrupt, err)
			}
			users[strings.TrimPrefix(k, keyUser)] = r
		case strings.HasPrefix(k, keyRole):
			roles[strings.TrimPrefix(k, keyRole)] = true
		case strings.HasPrefix(k, keyGrant):
			parts := strings.Split(strings.TrimPrefix(k, keyGrant), "/")
			var r grantRecord
			if len(parts) != 5 || json.Unmarshal(e.Value, &r) != nil {
				return fmt.Errorf("auth: malformed grant %q: %w", k, metastore.ErrCorrupt)
			}
			g := Grant{Role: parts[0], ObjectType: parts[1], DB: parts[2], ObjectName: parts[3], Privilege: parts[4], Grantor: r.Grantor}
			if grants[g.Role] == nil {
				grants[g.Role] = map[string]Grant{}
			}
			grants[g.Role][k] = g
		case strings.HasPrefix(k, keyGroup):
			var r groupRecord
			if err := json.Unmarshal(e.Value, &r); err != nil {
				return fmt.Errorf("auth: key %q: %w: %w", k, metastore.ErrCorrupt, err)
			}
			groups[strings.TrimPrefix(k, keyGroup)] = r.Privileges
		}
	}
	s.users, s.roles, s.userRoles, s.grants, s.groups = users, roles, userRoles, grants, groups
	s.creds.reset()
	return nil
}

// hashOf returns the stored hash of user ("" when there is no such user).
func (s *Store) hashOf(user string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.users[user].Hash
}

// Verify reports whether password is user's password. Unknown users and
// wrong passwords cost the same; repeated failures back off (see package doc).
func (s *Store) Verify(user, password string) bool {
	return s.creds.verify(user, password, s.hashOf(user))
}

// validUsername applies Milvus's user name rules.
func (s *Store) validUsername(name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return errcode.InvalidParam("username must be not empty")
	}
	if len(name) > s.cfg.MaxUsernameLength {
		return errcode.InvalidParam("invalid username %s with length %d, the length of username must be less than %d",
			name, len(name), s.cfg.MaxUsernameLength)
	}
	if !isAlpha(name[0]) {
		return errcode.InvalidParam("invalid user name %s, the first character must be a letter, but got %s", name, string(name[0]))
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; c != '_' && c != '-' && c != '.' && !isAlpha(c) && !isDigit(c) {
			return errcode.InvalidParam("invalid user name %s, username must contain only numbers, letters, underscores, dots, and hyphens, but got %s",
				name, string(c))
		}
	}
	return nil
}

func (s *Store) validPassword(pw string) error {
	if len(pw) < s.cfg.MinPasswordLength || len(pw) > s.cfg.MaxPasswordLength {
		return errcode.New(errcode.IllegalArgument, "invalid password length: invalid parameter[%d out of range %d <= value <= %d]",
			len(pw), s.cfg.MinPasswordLength, s.cfg.MaxPasswordLength)
	}
	return nil
}

// validName applies Milvus's rules for role, group and object names
// (letters, digits, "_" and the extra allowed characters; first a letter or "_").
func validName(entity, kind, extra string) error {
	entity = strings.TrimSpace(entity)
	if entity == "" {
		return errcode.InvalidParam("%s should be not empty", kind)
	}
	if len(entity) > 255 {
		return errcode.InvalidParam("the length of %s must be not greater than limit 255, got %d", kind, len(entity))
	}
	if c := entity[0]; c != '_' && !isAlpha(c) {
		return errcode.InvalidParam("the first character of %s must be an underscore or letter, got %s", kind, string(c))
	}
	for i := 1; i < len(entity); i++ {
		if c := entity[i]; c != '_' && !isAlpha(c) && !isDigit(c) && !strings.ContainsRune(extra, rune(c)) {
			return errcode.InvalidParam("%s can only contain numbers, letters, underscores, and allowed characters (%s), found %c at %d",
				kind, extra, c, i)
		}
	}
	return nil
}

// ValidRoleName checks a role name.
func ValidRoleName(name string) error { return validName(name, "role name", "$") }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// CreateUser adds a user with a password.
func (s *Store) CreateUser(ctx context.Context, name, password string) error {
	if err := s.validUsername(name); err != nil {
		return err
	}
	if err := s.validPassword(password); err != nil {
		return err
	}
	hash, err := hashPassword(password, s.cfg.BcryptCost)
	if err != nil {
		return fmt.Errorf("auth: hash password: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[name]; ok {
		return errcode.New(CodeLegacy, "user already exists: %s", name)
	}
	if len(s.users) >= s.cfg.MaxUserNum {
		return errcode.New(CodeLegacy, "unable to add user because the number of users has reached the limit %d", s.cfg.MaxUserNum)
	}
	rec := userRecord{V: 1, Hash: hash, Created: time.Now().UnixMilli()}
	b, _ := json.Marshal(rec)
	if err := s.kv.Txn(ctx, metastore.IfAbsent(keyUser+name), metastore.Put(keyUser+name, b)); err != nil {
		return fmt.Errorf("auth: create user %s: %w", name, err)
	}
	s.users[name] = rec
	return nil
}

// UpdatePassword changes user's password after checking the old one.
func (s *Store) UpdatePassword(ctx context.Context, name, oldPassword, newPassword string) error {
	if err := s.validPassword(newPassword); err != nil {
		return err
	}
	if !s.Verify(name, oldPassword) {
		return errcode.New(CodeNotAuthenticated, "old password not correct for %s: not authenticated", name)
	}
	hash, err := hashPassword(newPassword, s.cfg.BcryptCost)
	if err != nil {
		return fmt.Errorf("auth: hash password: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.users[name]
	if !ok {
		return errcode.New(CodeNotAuthenticated, "old password not correct for %s: not authenticated", name)
	}
	rec := userRecord{V: 1, Hash: hash, Created: old.Created}
	b, _ := json.Marshal(rec)
	if err := s.kv.Txn(ctx, metastore.Put(keyUser+name, b)); err != nil {
		return fmt.Errorf("auth: update user %s: %w", name, err)
	}
	s.users[name] = rec
	s.creds.forget(name)
	return nil
}

// DeleteUser removes a user and its role bindings; an absent user is not an error.
func (s *Store) DeleteUser(ctx context.Context, name string) error {
	if name == RootUser {
		return errcode.New(CodeNotPermitted, "root user cannot be deleted: privilege not permitted")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.kv.Txn(ctx, metastore.Delete(keyUser+name), metastore.DeletePrefix(keyUserRole+name+"/")); err != nil {
		return fmt.Errorf("auth: delete user %s: %w", name, err)
	}
	delete(s.users, name)
	delete(s.userRoles, name)
	s.creds.forget(name)
	return nil
}

// Users lists the user names, sorted.
func (s *Store) Users() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.users))
	for u := range s.users {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// UserExists reports whether the user exists.
func (s *Store) UserExists(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.users[name]
	return ok
}

// UserRoles lists the roles bound to user, sorted (public is implicit and not listed).
func (s *Store) UserRoles(user string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedKeys(s.userRoles[user])
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// IsBuiltinRole reports whether role is admin or public.
func IsBuiltinRole(role string) bool { return role == RoleAdmin || role == RolePublic }

func (s *Store) roleExistsLocked(role string) bool { return IsBuiltinRole(role) || s.roles[role] }

// RoleExists reports whether the role exists.
func (s *Store) RoleExists(role string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.roleExistsLocked(role)
}

// Roles lists every role: admin, public, then the custom roles sorted.
func (s *Store) Roles() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]string{RoleAdmin, RolePublic}, sortedKeys(s.roles)...)
}

// RoleUsers lists the users bound to role, sorted.
func (s *Store) RoleUsers(role string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for u, rs := range s.userRoles {
		if rs[role] {
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}

func errRoleNotFound(code int32) error {
	return errcode.New(code, "not found the role, maybe the role isn't existed or internal system error")
}

// CreateRole adds a custom role.
func (s *Store) CreateRole(ctx context.Context, role string) error {
	if err := ValidRoleName(role); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.roleExistsLocked(role) {
		return errcode.New(CodeLegacy, "role [name:%q] already exists", role)
	}
	if len(s.roles) >= s.cfg.MaxRoleNum {
		return errcode.New(CodeLegacy, "unable to create role because the number of roles has reached the limit %d", s.cfg.MaxRoleNum)
	}
	if err := s.kv.Txn(ctx, metastore.Put(keyRole+role, emptyRecord)); err != nil {
		return fmt.Errorf("auth: create role %s: %w", role, err)
	}
	s.roles[role] = true
	return nil
}

// DropRole removes a custom role and its user bindings. A role that still
// has grants is refused unless force, which removes the grants too.
func (s *Store) DropRole(ctx context.Context, role string, force bool) error {
	if err := ValidRoleName(role); err != nil {
		return err
	}
	if IsBuiltinRole(role) {
		return errcode.New(CodeNotPermitted, "the role[%s] is a default role, which can't be dropped: privilege not permitted", role)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.roles[role] {
		return errRoleNotFound(CodeLegacy)
	}
	if len(s.grants[role]) > 0 && !force {
		return errcode.New(CodeLegacy, "fail to drop the role that it has privileges. Use REVOKE API to revoke privileges")
	}
	ops := []metastore.Op{metastore.Delete(keyRole + role), metastore.DeletePrefix(keyGrant + role + "/")}
	for u, rs := range s.userRoles {
		if rs[role] {
			ops = append(ops, metastore.Delete(keyUserRole+u+"/"+role))
		}
	}
	if err := s.kv.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("auth: drop role %s: %w", role, err)
	}
	delete(s.roles, role)
	delete(s.grants, role)
	for _, rs := range s.userRoles {
		delete(rs, role)
	}
	return nil
}

// OperateUserRole binds (add) or unbinds a role to a user. Unbinding a
// role the user does not hold is not an error.
func (s *Store) OperateUserRole(ctx context.Context, user, role string, add bool) error {
	if err := s.validUsername(user); err != nil {
		return err
	}
	if err := ValidRoleName(role); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[user]; !ok && add { // a deleted user's bindings may still be removed
		return errcode.New(CodeOperateUserRole, "not found the user, maybe the user isn't existed or internal system error")
	}
	if !s.roleExistsLocked(role) {
		return errRoleNotFound(CodeOperateUserRole)
	}
	key := keyUserRole + user + "/" + role
	if add {
		if s.userRoles[user][role] {
			return nil
		}
		if err := s.kv.Txn(ctx, metastore.Put(key, emptyRecord)); err != nil {
			return fmt.Errorf("auth: bind role: %w", err)
		}
		if s.userRoles[user] == nil {
			s.userRoles[user] = map[string]bool{}
		}
		s.userRoles[user][role] = true
		return nil
	}
	if !s.userRoles[user][role] {
		return nil
	}
	if err := s.kv.Txn(ctx, metastore.Delete(key)); err != nil {
		return fmt.Errorf("auth: unbind role: %w", err)
	}
	delete(s.userRoles[user], role)
	return nil
}

// OperateGrant grants (add) or revokes g. Granting an existing grant and
// revoking an absent one are not errors.
func (s *Store) OperateGrant(ctx context.Context, g Grant, add bool) error {
	if err := s.validGrant(&g); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.roleExistsLocked(g.Role) {
		return errRoleNotFound(CodeLegacy)
	}
	if !s.privilegeKnownLocked(g.Privilege) {
		return errcode.New(CodeLegacy, "not found the privilege name[%s]", g.Privilege)
	}
	key := g.key()
	_, exists := s.grants[g.Role][key]
	if add == exists {
		return nil
	}
	var op metastore.Op
	if add {
		op = metastore.Put(key, grantValue(g))
	} else {
		op = metastore.Delete(key)
	}
	if err := s.kv.Txn(ctx, op); err != nil {
		return fmt.Errorf("auth: operate privilege: %w", err)
	}
	if add {
		if s.grants[g.Role] == nil {
			s.grants[g.Role] = map[string]Grant{}
		}
		s.grants[g.Role][key] = g
	} else {
		delete(s.grants[g.Role], key)
	}
	return nil
}

// validGrant checks and normalizes a grant's names.
func (s *Store) validGrant(g *Grant) error {
	if err := ValidRoleName(g.Role); err != nil {
		return err
	}
	if err := ValidObjectType(g.ObjectType); err != nil {
		return err
	}
	if g.DB == "" {
		g.DB = "default"
	}
	if g.Privilege == "All" {
		g.Privilege = AnyWord
	}
	for _, n := range []struct{ v, kind string }{{g.ObjectName, "object name"}, {g.DB, "database name"}} {
		if n.v != AnyWord {
			if err := validName(n.v, n.kind, "$"); err != nil {
				return err
			}
		}
	}
	if g.Privilege != AnyWord {
		if err := validName(g.Privilege, "privilege name", ""); err != nil {
			return err
		}
	}
	return nil
}

// ValidObjectType checks a grant's object type (Global, Collection or User).
func ValidObjectType(t string) error {
	switch t {
	case ObjectGlobal, ObjectCollection, ObjectUser:
		return nil
	}
	return errcode.New(CodeLegacy, "not found the object type[name: %s], supported the object types: [Global User Collection]", t)
}

// privilegeKnownLocked reports whether name is a privilege, a built-in
// group or a custom group.
func (s *Store) privilegeKnownLocked(name string) bool {
	if name == AnyWord || IsPrivilege(name) {
		return true
	}
	if _, ok := BuiltinGroups[name]; ok {
		return true
	}
	_, ok := s.groups[name]
	return ok
}

// Grants lists role's grants matching the filters ("" matches anything; a
// database filter also matches grants on every database), sorted.
func (s *Store) Grants(role, objectType, objectName, db string) []Grant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Grant
	for _, g := range s.grants[role] {
		if (objectType == "" || g.ObjectType == objectType) && (objectName == "" || g.ObjectName == objectName) && (db == "" || g.DB == db || g.DB == AnyWord) {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// Permit reports whether user may exercise privilege on the object: root
// and admin holders always may; otherwise one of the user's roles (public
// included) must have a covering grant.
func (s *Store) Permit(user, objectType, db, objectName, privilege string) bool {
	if s.unchecked(user) {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	roles := s.userRoles[user]
	if roles[RoleAdmin] {
		return true
	}
	cluster := PrivilegeLevel(privilege) == LevelCluster
	check := func(role string) bool {
		for _, g := range s.grants[role] {
			// A grant on every object ("*") covers the privilege whatever
			// object type it was granted on (OperatePrivilegeV2 and groups
			// mix levels); a named object must match in type too.
			if (g.ObjectType == objectType || g.ObjectName == AnyWord) && (cluster || g.DB == AnyWord || g.DB == db) &&
				(g.ObjectName == AnyWord || g.ObjectName == objectName) && s.coversLocked(g.Privilege, privilege) {
				return true
			}
		}
		return false
	}
	if check(RolePublic) {
		return true
	}
	for r := range roles {
		if check(r) {
			return true
		}
	}
	return false
}

// impliedBy are the privileges a privilege carries with it, as Milvus grants
// them together: loading lets one watch the load, flushing the flush.
var impliedBy = map[string][]string{
	"Load":  {"GetLoadState", "GetLoadingProgress"},
	"Flush": {"GetFlushState"},
}

// coversLocked reports whether a granted privilege (or group) includes privilege.
func (s *Store) coversLocked(granted, privilege string) bool {
	if granted == AnyWord || granted == privilege || slices.Contains(impliedBy[granted], privilege) {
		return true
	}
	if ps, ok := BuiltinGroups[granted]; ok {
		return slices.Contains(ps, privilege)
	}
	return slices.Contains(s.groups[granted], privilege)
}

// unchecked reports whether user passes every privilege check whatever its
// roles: root, unless rootShouldBindRole is set.
func (s *Store) unchecked(user string) bool {
	return user == RootUser && !s.cfg.RootShouldBindRole
}

// VisibleDatabases filters dbs to those user's own roles (not public) have
// any grant in: what ListDatabases shows a user that is not root or admin.
func (s *Store) VisibleDatabases(user string, dbs []string) []string {
	if s.unchecked(user) {
		return dbs
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.userRoles[user][RoleAdmin] {
		return dbs
	}
	seen := map[string]bool{}
	for r := range s.userRoles[user] {
		for _, g := range s.grants[r] {
			seen[g.DB] = true
		}
	}
	if seen[AnyWord] {
		return dbs
	}
	out := []string{}
	for _, d := range dbs {
		if seen[d] {
			out = append(out, d)
		}
	}
	return out
}

// CollectionFilter returns which collections of db user sees in
// ShowCollections: all for root, admin holders and roles (public aside)
// with a grant on every object of the database; otherwise those named by a
// Collection grant of the user's roles.
func (s *Store) CollectionFilter(user, db string) func(name string) bool {
	all := func(string) bool { return true }
	if s.unchecked(user) {
		return all
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.userRoles[user][RoleAdmin] {
		return all
	}
	named := map[string]bool{}
	for r := range s.userRoles[user] {
		for _, g := range s.grants[r] {
			if g.DB != AnyWord && g.DB != db {
				continue
			}
			if g.ObjectName == AnyWord {
				return all
			}
			if g.ObjectType == ObjectCollection {
				named[g.ObjectName] = true
			}
		}
	}
	return func(name string) bool { return named[name] }
}
