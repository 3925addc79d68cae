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
// The WAL checker (WALChecker) verifies every record of the local WAL
// ({data-dir}/wal, with wal/local.Verify) and reads the meta store
// read-only to say what each damage affects: the collections with
// vchannels on the pchannel, and for each whether the damaged record is
// before its checkpoint (its rows are in binlogs: nothing lost from
// storage, though a cut also loses what follows the checkpoint) or after it
// (rows not flushed yet). A torn tail — the unfinished last write of a
// crash, never acknowledged, which the server truncates when it starts —
// and an overlapping sealed segment (readers ignore the extra records) are
// notes, not damage: they are printed ("NOTE wal: …") and the exit status
// stays 0. It also reports as damage a pchannel whose end is before an
// offset the meta store requires (a checkpoint or collection start offset,
// or one past a synced, delta-synced or segment start offset): records
// appended there would be skipped by the consumers as already persisted.
// A cut without padding, or a WAL restored from an older copy, leaves that.
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
//
// CutWAL (`strata repair --cut-wal PCHANNEL`) accepts the loss of a damaged
// WAL tail. Holding the meta store's write lock for the whole repair (so it
// refuses while the server runs), it
//
//  1. reads every offset and timestamp the meta store references for the
//     vchannels on the pchannel (collection start offsets, checkpoints and
//     delta-synced offsets, segment start positions and synced offsets;
//     seal and binlog timestamps);
//  2. cuts the pchannel at its first damage (wal/local.Cut: the removed
//     bytes stay in .damaged files);
//  3. pads it with filler time ticks (wal/local.Pad) until its end is past
//     the largest referenced offset and at least the end before the cut,
//     so that no record appended later gets an offset a consumer has
//     already passed (a data node would skip it as persisted: silent
//     loss); the fillers carry the largest referenced timestamp, or the
//     last kept record's if larger (see wal/local, "Checking and cutting");
//  4. appends one Flush message for the segments still Sealed on the
//     pchannel's vchannels, whose Flush message the cut may have removed
//     (a second Flush of a segment is ignored by the data node);
//
// and returns (and logs) what was cut, the fillers and why, and per
// collection what was lost: the records after the damage that were not
// flushed (the rows and deletes after the vchannel's checkpoint).
// Everything flushed stays served. Run on an undamaged pchannel it cuts
// nothing and only pads, so it completes an interrupted repair.
package fsck
