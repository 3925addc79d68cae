package auth

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

type userKey struct{}

// WithUser returns ctx carrying the authenticated user.
func WithUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

// UserFrom returns the user Authenticate put into ctx, else the user named
// by its credentials (not verified: authorization is off), else "".
func UserFrom(ctx context.Context) string {
	if u, ok := ctx.Value(userKey{}).(string); ok {
		return u
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("authorization"); len(v) > 0 {
		if raw, err := base64.StdEncoding.DecodeString(v[0]); err == nil {
			if u, _, ok := strings.Cut(string(raw), ":"); ok {
				return u
			}
		}
	}
	return ""
}

// Guard authenticates and authorizes requests against a Store when
// authorization is enabled; disabled, it lets everything through.
type Guard struct {
	store   *Store
	enabled bool
	// aliases resolves a collection alias to its collection's name
	// (SetAliases); nil: names are checked as given.
	aliases func(db, name string) (string, bool)
}

// SetAliases makes privilege checks on a collection named by an alias check
// the alias's collection, as Milvus's proxy.resolveAliasForPrivilege does:
// a grant on collection X covers a request that names an alias of X.
// resolve returns the collection an alias points to, false for a name that
// is no alias.
func (g *Guard) SetAliases(resolve func(db, name string) (string, bool)) { g.aliases = resolve }

// NewGuard returns a Guard over store.
func NewGuard(store *Store, enabled bool) *Guard { return &Guard{store: store, enabled: enabled} }

// Store returns the store the guard checks against.
func (g *Guard) Store() *Store { return g.store }

// Enabled reports whether authorization is on.
func (g *Guard) Enabled() bool { return g.enabled }

// Authenticate verifies the `authorization` metadata of ctx and returns ctx
// carrying the user. Its errors are gRPC Unauthenticated statuses worded as
// Milvus's.
func (g *Guard) Authenticate(ctx context.Context) (context.Context, error) {
	if !g.enabled {
		return ctx, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 || vals[0] == "" {
		return ctx, status.Error(codes.Unauthenticated, "missing authorization in header")
	}
	raw, err := base64.StdEncoding.DecodeString(vals[0])
	if err != nil {
		return ctx, status.Error(codes.Unauthenticated, "invalid token format")
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		// An API key: Milvus verifies those only through a plugin; none is configured.
		return ctx, status.Error(codes.Unauthenticated, "auth check failure, please check api key is correct")
	}
	if !g.store.Verify(user, password) {
		return ctx, status.Error(codes.Unauthenticated, "auth check failure, please check username and password are correct")
	}
	return WithUser(ctx, user), nil
}

// Authorize checks that the user of ctx may call method (an RPC name such
// as "Search") with req, by the privilege table Rules.
func (g *Guard) Authorize(ctx context.Context, method string, req any) error {
	if !g.enabled {
		return nil
	}
	rule, ok := Rules[method]
	if !ok {
		return nil
	}
	user := UserFrom(ctx)
	reqDB := requestDB(ctx, req)
	db := reqDB
	if PrivilegeLevel(rule.Privilege) == LevelCluster {
		db = AnyWord
	}
	names := []string{AnyWord}
	if rule.Objects != nil {
		names = rule.Objects(req)
	}
	if rule.ObjectType == ObjectCollection && g.aliases != nil {
		resolved := make([]string, len(names))
		for i, n := range names {
			resolved[i] = n
			if c, ok := g.aliases(db, n); ok && n != AnyWord && n != "" {
				resolved[i] = c
			}
		}
		names = resolved
	}
	if rule.ObjectType == ObjectUser && len(names) == 1 && names[0] == user {
		return nil // users may read and update themselves
	}
	if r, ok := req.(*milvuspb.SelectGrantRequest); ok && g.holdsRole(user, r.GetEntity().GetRole().GetName()) {
		return nil // and read their own roles' grants
	}
	permitted := len(names) > 0
	for _, n := range names {
		if !g.store.Permit(user, rule.ObjectType, db, n, rule.Privilege) {
			permitted = false
			break
		}
	}
	if permitted {
		return nil
	}
	// Worded as Milvus's proxy words it: the privilege's enum name
	// (commonpb.ObjectPrivilege, "PrivilegeSearch") and the request's
	// database, also for a cluster-level privilege.
	return status.Error(codes.PermissionDenied,
		fmt.Sprintf("Privilege%s: permission deny to %s in the `%s` database", rule.Privilege, user, reqDB))
}

func (g *Guard) holdsRole(user, role string) bool {
	if role == RolePublic {
		return true
	}
	for _, r := range g.store.UserRoles(user) {
		if r == role {
			return true
		}
	}
	return false
}

// requestDB is the database a request operates on: its db_name, else the
// dbname metadata, else "default".
func requestDB(ctx context.Context, req any) string {
	if r, ok := req.(interface{ GetDbName() string }); ok && r.GetDbName() != "" {
		return r.GetDbName()
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("dbname"); len(v) > 0 && v[0] != "" {
		return v[0]
	}
	return "default"
}

// Check authenticates ctx and authorizes method with req; it returns the
// context carrying the user.
func (g *Guard) Check(ctx context.Context, method string, req any) (context.Context, error) {
	ctx, err := g.Authenticate(ctx)
	if err != nil {
		return ctx, err
	}
	return ctx, g.Authorize(ctx, method, req)
}

// UnaryInterceptor checks every unary RPC.
func (g *Guard) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, err := g.Check(ctx, path.Base(info.FullMethod), req)
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor authenticates every streaming RPC (Milvus checks no
// privilege on them).
func (g *Guard) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, err := g.Authenticate(ss.Context())
		if err != nil {
			return err
		}
		return handler(srv, &userStream{ServerStream: ss, ctx: ctx})
	}
}

type userStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *userStream) Context() context.Context { return s.ctx }
