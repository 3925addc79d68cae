// Package embedded implements metastore.KV on a single bbolt file, for
// standalone mode.
//
// # Engine
//
// bbolt (go.etcd.io/bbolt, already a dependency through etcd) keeps the
// store: one file, copy-on-write B+tree pages, fsync per transaction, no
// background work, open in about a millisecond. It has no checksums except
// on its two meta pages, and it panics (or faults) on a page it cannot make
// sense of, so this package adds what it lacks rather than trusting it with
// a damaged file:
//
//   - every value carries a CRC-32C over its key and payload (the envelope
//     below), so a flipped bit in a key or value is a named error, never a
//     value;
//   - Open maps the file read-only under its lock and checks every page that
//     bbolt would read before bbolt opens it (see Verify), so bbolt is only
//     ever handed a sound file;
//   - every call into bbolt runs under recover with SetPanicOnFault, so
//     damage that appears while the file is open becomes a *CorruptError,
//     after which the store refuses every further call instead of writing
//     over a damaged file.
//
// An engine with block checksums (pebble) was the alternative. It is not in
// go.sum and would bring a large new dependency tree into the binary, and an
// LSM (compactions, background goroutines, a directory of files, a
// manifest, a WAL replayed at start-up) for a store that holds a few MiB of
// metadata. bbolt with the checks here keeps start-up in milliseconds (the
// check reads and checksums the file once: about 0.6 ms for 1,000 keys and
// 11 ms for 20,000 keys of 256 bytes, a 6 MiB file, on a 2-core VM), and
// the unit tests flip bits
// across a whole file: each flip is refused with a named damage, or lies
// where bbolt never reads (a freed page, the unused end of a meta page) and
// the data read back is exactly what was written.
// bbolt's own tx.Check was not used: it runs in a goroutine of its own, so a
// panic inside it cannot be recovered.
//
// # On-disk format
//
// One bbolt file (conventionally "meta.db" in the data directory), bbolt
// format version 2, little-endian. The root holds exactly two buckets:
//
//   - "kv": one entry per metastore key. The bbolt key is the metastore key
//     verbatim (UTF-8 bytes); bbolt keeps keys sorted bytewise, which gives
//     Scan its order. The bbolt value is the envelope:
//
//     byte 0     envelope version, 1
//     bytes 1-4  CRC-32C (Castagnoli), big-endian, over key || payload
//     bytes 5-   payload: the metastore value (may be empty)
//
//   - "strata": one key, "format", whose value is an envelope (the same CRC
//     over "format" || payload) around the file format version as a 4-byte
//     big-endian integer, 1. Its presence says every value in "kv" is in the
//     envelope.
//
// Strata never uses bucket sequences; they are 0.
//
// # Upgrading older files
//
// Files written before checksums (no "strata" bucket; values verbatim)
// are read as legacy: Open checks their structure (every page, as above;
// values cannot be checked), then, in one bbolt transaction, wraps every
// value in the envelope and writes the format record, and logs how many
// values it rewrote. The transaction is atomic: a crash leaves either the
// legacy file or the upgraded one, never a mix, and nothing is dropped. An
// upgraded file cannot be read by a Strata build from before the upgrade.
// Verify never upgrades.
//
// # Damage
//
// A file that fails the check is never repaired, truncated or re-created:
// Open returns a *CorruptError naming the file and each damage (the page, or
// the key whose checksum failed, and what is wrong) and leaves the file
// byte for byte as it was. An empty or truncated file is damage too (bbolt
// would silently initialise an empty one). Any invalid meta page is
// damage: bbolt writes the 64-byte meta within one sector after syncing
// what it points to, so an invalid one is not a torn write and falling back
// to the other one (as bbolt does) could silently drop the last committed
// transaction.
//
// Damage that appears while the store is open is reported the same way: a
// value whose checksum fails is an error naming the key (other keys still
// read and write), and a bbolt panic on a damaged page breaks the store for
// good. Problems lists both for the server's health detail.
//
// Verify (for `strata check`) runs the same check read-only under a shared
// lock: it fails, changing nothing, while a server holds the file.
//
// # Durability
//
// Every Txn is one bbolt read-write transaction, which fsyncs the file
// before Commit returns. Reads use bbolt read-only transactions and see
// every committed Txn. The file is locked exclusively while open; a second
// Open of the same path fails after a short timeout instead of blocking.
package embedded
