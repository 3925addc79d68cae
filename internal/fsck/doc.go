// Package fsck checks a standalone data directory offline and accepts
// losses in it on the operator's word: the engine behind `strata check` and
// `strata repair`.
//
// # Check
//
// Check runs a list of Checkers over a data directory that no server holds
// and collects every Damage they find into a Report. A Checker looks at one
// part of the directory (the meta store's records, the WAL, the files the
// metadata references) and returns the damage it found; an error from a
// Checker means that part could not be checked at all (the report then says
// the check is incomplete). Nothing is ever written.
//
// The catalog checker (Catalog) opens the meta store read-only (a shared
// bbolt lock, so it refuses to run while the server holds the file), decodes
// every collection, segment, index and index-task record, and verifies every
// file that a live (not Dropped) segment or a finished index build
// references in object storage ({data-dir}/storage):
//
//   - insert binlogs: the file exists, its size equals the recorded size,
//     it decodes (descriptor, every event and its Parquet payload), its
//     descriptor names the segment's collection, partition, segment and
//     field, its row count equals the recorded entry count, and the rows of
//     a field's binlogs add up to the segment's row count (Flushed segments);
//   - stats logs: exist, size, decode as PK statistics;
//   - delta logs: exist, size, decode, entry count;
//   - index files: exist, decode with the reader of their index type (every
//     index file carries a CRC-32C), and index as many rows as the build
//     task recorded.
//
// # Repair
//
// DropSegment marks one segment Dropped through the same record update the
// data coordinator makes (state Dropped, DroppedAt now), so the coordinator's
// garbage collection removes its files after the retention period; it
// returns what is lost (rows, collection). It is never run automatically.
package fsck
