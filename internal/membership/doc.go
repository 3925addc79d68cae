// Package membership keeps cluster membership in etcd: which nodes of which
// role are alive, their never-reused node IDs, and which node is the elected
// coordinator.
//
// # Sessions
//
// A node joins with Registry.Register(ctx, role, address). It grants an etcd
// lease of Config.SessionTTL, keeps it alive from the etcd client (which
// multiplexes every lease's keep-alives on one stream), and in one
// transaction allocates the next node ID and writes its session key
// attached to that lease. The returned
// Member is the node's membership: Member.Run blocks until its context ends
// (the node then leaves: the lease is revoked and its keys vanish at once) or
// until the lease is lost (Run returns ErrSessionLost; Member.Done is closed).
// A lease is lost when etcd expires it: the process died, hung, or could not
// reach etcd for a whole TTL. A lost membership is never renewed: the node
// must Register again and gets a new ID, so every incarnation of a node has
// its own ID and its own session key.
//
// A node is dead exactly when its session key is gone, which etcd does when
// the lease expires or is revoked; Registry.List and Registry.Watch report
// the live nodes of a role from those keys, and Watch turns their creation
// and deletion into Added and Removed events.
//
// # Node IDs
//
// IDs come from a counter key that is not attached to any lease. Register
// reads it and commits, in one transaction guarded by the counter's
// mod revision, the incremented counter and the new session key; a
// concurrent registration makes the guard fail and the loser retries with
// the new value. IDs therefore start at 1, are unique, and are never reused:
// not after a node dies, a process restarts, or etcd restarts (the counter
// is durable in etcd like any key). Deleting the counter by hand would
// restart the sequence; nothing in Strata deletes it.
//
// # Key layout
//
// Every key starts with Config.Root (default "strata/cluster/"), so several
// deployments or tests can share one etcd. Under it:
//
//	session/id                    decimal node-ID counter: the last ID handed out (no lease)
//	session/node/<role>/<id>      a live node: JSON Node, attached to the node's lease
//	session/election/<name>/<lease-hex>
//	                              a candidate in election <name> (concurrency.Election's
//	                              layout): JSON Node of the candidate, attached to its lease
//
// Roles and election names are lowercase ASCII letters, digits, '-' and '_'.
// The value of a session key is the JSON of Node without its Revision (the
// key's own create revision), for example
// {"id":7,"role":"querynode","address":"10.0.0.5:19531","lease":7587883}; a
// candidate key's value is the same JSON with "revision" (the candidate's
// session key's create revision) added.
// This follows Milvus's sessionutil in spirit (a "session/id" counter and
// one leased key per server under "session/") with a "/" between role and
// ID so that a role's prefix never matches another role.
//
// # Election
//
// Member.Election(name) runs concurrency.Election over the member's session:
// Campaign writes the candidate key and blocks until every key created before
// it is gone, then the member leads. The leader is the candidate key with the
// lowest create revision. Leadership ends when the leader resigns
// (Election.Resign, or Member.Close, which revokes the lease) — the next
// candidate leads at once — or when the leader's lease expires, within one
// SessionTTL of its death. The create revision of the leader's key is the
// term's fencing token (Term.Revision): it grows with every new leader, so
// a component that records the revision it last obeyed can reject a stale
// leader that has not yet noticed that it lost its lease. A leader learns
// that it lost leadership from Member.Done (its lease is gone) or, after an
// explicit Resign, from the return of Resign.
//
// # Lifecycle
//
// New wraps an etcd client that the caller owns and has already found
// reachable (in a Strata process, the meta store's client, so a process
// holds one etcd connection). The Registry has no goroutines; the leases
// are kept alive by the client, the Watcher and Observe goroutines end with
// their contexts. Members must be closed before the client: closing the
// client first leaves their leases to expire after their TTL, which to the
// rest of the cluster is indistinguishable from a crash (tests use exactly
// that to kill a node).
package membership
