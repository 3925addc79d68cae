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
package etcd
