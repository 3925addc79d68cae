// Package auth holds Strata's users, roles, grants and privilege groups, and
// decides whether a request is authenticated and permitted, as Milvus's
// authentication and RBAC do (common.security.authorizationEnabled).
//
// # What it decides
//
// Authenticate checks the `authorization` gRPC metadata — base64 of
// "user:password", which every SDK sends for user/password and for a
// "user:password" token — and returns the user. Authorize looks the RPC up in
// the privilege table (Rules, privileges.go: one entry per MilvusService RPC
// that Milvus checks, with its object type and privilege) and permits it when
// the user is root, holds the admin role, or one of its roles (public
// included) has a grant that covers the object: same object type, database
// equal or "*", object name equal or "*", and privilege equal, "All"/"*", or a
// privilege group (built-in or custom) that contains it.
//
// # Durable format
//
// Everything lives in the meta store under the prefix "auth/"; values are
// JSON objects, so fields can be added without breaking older data:
//
//	auth/init                                        {"v":1}  written once, at first start
//	auth/user/{name}                                 {"v":1,"hash":"<bcrypt>","created":<unix ms>}
//	auth/role/{name}                                 {"v":1}  custom roles only (admin, public are built in)
//	auth/user-role/{user}/{role}                     {"v":1}
//	auth/grant/{role}/{objectType}/{db}/{object}/{privilege}  {"v":1,"grantor":"<user>"}
//	auth/group/{name}                                {"v":1,"privileges":["Query",…]}  custom privilege groups
//
// Names are validated before they are stored and never contain "/": user
// names are letters, digits, "_", "-", "." (first a letter); role, group,
// database and object names are letters, digits, "_" and "$", or "*".
// Privileges are stored in Milvus's API spelling ("Search", "CreateCollection",
// a group name, or "*" for All). "auth/init" is written in the same
// transaction as the root user and the public role's default grants
// (DescribeCollection and ListAliases on Global "*", IndexDetail on
// Collection "*", all in every database), so a revoked default grant stays
// revoked after a restart.
//
// # Passwords
//
// Passwords are stored as bcrypt hashes (golang.org/x/crypto/bcrypt, cost
// Config.BcryptCost) of the password, or, for one longer than bcrypt's 72
// bytes (Milvus allows 256), of "\x00sha256:" followed by the base64 of its
// SHA-256. A successful check caches SHA-256(user, password) in
// memory so later requests cost one hash, not a bcrypt; the entry is dropped
// when the password changes or the user is deleted. An unknown user is
// compared against a dummy hash, so it costs the same as a wrong password. After
// five consecutive failures a user name is refused without a check for a
// back-off that doubles per further failure (1 s up to 60 s).
package auth
