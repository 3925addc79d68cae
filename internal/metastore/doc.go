// Package metastore is Strata's meta-store port: a small transactional
// key-value store that holds all coordinator metadata (collections, segments,
// channel checkpoints, index tasks, the TSO windows).
//
// Implementations: metastore/embedded (bbolt in the data directory, for
// standalone) and metastore/etcd (cluster). Every implementation passes the
// conformance suite in metastore/kvtest.
//
// # Contract
//
// Keys are non-empty UTF-8 strings, conventionally slash-separated
// ("root/collection/1/2"). Keys compare bytewise. Values are opaque bytes; an
// empty value is a valid value and is distinct from an absent key.
//
//   - Get returns ErrNotFound when the key is absent.
//   - Scan returns every key that starts with prefix, sorted by key. A prefix
//     is a plain byte prefix: Scan("a/1") matches "a/1" and "a/10"; callers
//     that mean a directory end the prefix with "/". Scan("") returns all keys.
//   - Txn applies a list of operations atomically: either all of them take
//     effect or none does. Guards (IfAbsent, IfEquals) are evaluated against
//     the state before the transaction; if any guard is false the transaction
//     changes nothing and returns an error wrapping ErrConflict. Mutations
//     (Put, Delete, DeletePrefix) are applied in order. A transaction must not
//     mutate the same key twice, nor Put or Delete a key covered by one of its
//     own DeletePrefix operations; such a transaction fails with
//     ErrInvalidTxn (etcd rejects them, so every implementation does).
//   - Txn returns only once the change is durable: fsynced to local disk
//     (embedded) or committed by a quorum (etcd). A Txn that returned nil
//     survives a crash; a Txn that returned an error may or may not have been
//     applied only if the error is a transport error (never for ErrConflict or
//     ErrInvalidTxn, which guarantee nothing was applied).
//   - A fenced KV (the coordinator's view of etcd while it leads; see
//     metastore/etcd.Fenced) fails every Txn with ErrFenced, applying
//     nothing, once the leadership term it was opened for has ended. Reads
//     are not fenced.
//   - Implementations may cap the number of operations in one Txn (etcd
//     defaults to 128); callers with more work split it.
//   - All methods are safe for concurrent use. Close is idempotent; every
//     other method returns ErrClosed afterwards.
//
// Damage: an implementation that finds stored data damaged (a checksum
// mismatch, a broken page) returns an error wrapping ErrCorrupt that names
// what is damaged; it never returns damaged data as a value, and never
// repairs or deletes anything by itself.
//
// Reads are linearizable with respect to Txn: a Get or Scan that starts after
// a Txn returned observes it.
package metastore
