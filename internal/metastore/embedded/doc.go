// Package embedded implements metastore.KV on a single bbolt file, for
// standalone mode.
//
// Format: one bbolt database file (conventionally "meta.db" in the data
// directory) with one bucket, "kv". Each metastore key is stored verbatim as
// the bbolt key (UTF-8 bytes) and each value verbatim as the bbolt value;
// bbolt keeps keys sorted bytewise, which gives Scan its order.
//
// Durability: every Txn is one bbolt read-write transaction, which fsyncs the
// file before Commit returns. Reads use bbolt read-only transactions and see
// every committed Txn. The file is locked exclusively while open; a second
// Open of the same path fails after a short timeout instead of blocking.
package embedded
