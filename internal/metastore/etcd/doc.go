// Package etcd implements metastore.KV on etcd, for cluster mode.
//
// Key scheme: every metastore key k is stored as the etcd key Root+k, so
// several deployments (or tests) can share one etcd cluster under distinct
// roots; Root conventionally ends with "/" (e.g. "strata/meta/"). Values are
// stored verbatim.
//
// Mapping: Get and Scan are linearizable range reads (Scan pages through
// large ranges at one revision, so a scan is a consistent snapshot). Txn is
// one etcd transaction: IfAbsent compares the key's create revision with 0,
// IfEquals compares its value (a compare on an absent key is false), and the
// mutations are the transaction's success branch. A transaction whose
// compares fail returns metastore.ErrConflict. etcd limits a transaction to
// --max-txn-ops operations (default 128). Durability is etcd's: a Txn returns
// once a quorum has committed it to its WAL.
//
// Fencing: Store.Fenced returns the view an elected coordinator writes
// through. Each of its Txns is one etcd transaction whose only compare is
// CreateRevision(leaderKey) == revision (the leader's election key and its
// create revision, membership.Term's Key and Revision) and whose success
// branch is the Txn's own transaction, nested (its guards and mutations as
// above). The leader key vanishes when the leader resigns or its lease
// expires, and a new leader's key has a larger create revision, so a
// coordinator that lost its term cannot write even if it has not noticed
// yet: etcd refuses the write (metastore.ErrFenced), the view refuses every
// later one, and its onFenced callback tells the coordinator to step down.
// A false nested guard is still metastore.ErrConflict.
package etcd
