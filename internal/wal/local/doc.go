// Package local is the embedded implementation of wal.Log: one directory
// of segment files per pchannel, with group-commit fsync, CRC-checked
// records, torn-tail repair that never mistakes damage for a torn tail,
// recovery from failed writes (a full disk) without a restart, and the
// operator's tools Verify and Cut.
//
// # Layout
//
// Under Config.Dir every pchannel has a directory named after it (a plain
// file name: no separators, not starting with '.'). The directory holds
// segment files named after the offset of their first record, zero-padded to
// 20 decimal digits so that names sort like offsets:
//
//	by-dev-rootcoord-dml_0/
//	    00000000000000000000.wal   records 0 … 4095
//	    00000000000000004096.wal   records 4096 … 9011
//	    00000000000000009012.wal   active segment
//
// The records of a segment are dense: a segment named N holds records N,
// N+1, … up to (not including) the name of the next segment. Only the last
// segment (the active one) is appended to. It is sealed, and a new segment
// created, when it has reached Config.SegmentSize bytes and holds at least
// one record, so a segment exceeds SegmentSize by at most one record. A
// directory without segment files is an empty pchannel.
//
// # Record framing
//
// A segment file has no header; it is a sequence of frames:
//
//	+----------------+----------------+---------------------+
//	| length uint32  | crc uint32     | data [length]byte   |
//	| little-endian  | little-endian  |                     |
//	+----------------+----------------+---------------------+
//
// length is the byte length of data, 1 ≤ length ≤ Config.MaxRecordBytes
// (zero-length records are rejected by AppendAsync, so that a zero-filled
// region never decodes as records: its first header reads length 0, which
// is never valid). crc is the CRC-32 of data with the
// Castagnoli polynomial. A record's offset is not stored: it is the
// segment's first offset plus the record's index in the file.
//
// # Writing and durability
//
// AppendAsync validates the records and queues the call on its pchannel
// under the pchannel's mutex, so calls are ordered as they were made and the
// records of one call are contiguous. One writer goroutine per pchannel
// takes all queued calls (up to Config.MaxBatchBytes, at least one call),
// writes their frames through a buffered writer, then fsyncs the segment
// once; when it created a segment file it also fsyncs the pchannel
// directory (and Config.Dir when it created the pchannel directory). Only
// then does it advance the durable end, wake readers and complete every
// call of the group. When a segment is sealed mid-group it is flushed and
// fsynced before the next one is created.
//
// A call larger than MaxBatchBytes is still one group, but the writer
// fsyncs inside it whenever the bytes written since the last fsync would
// pass MaxBatchBytes. So at any moment the bytes of a segment file after
// its last successful fsync are at most MaxBatchBytes, or a single frame
// larger than that: this bounds what a crash can leave half-written (see
// Recovery).
//
// A failed write or fsync (a full disk, an I/O error) fails every call of
// the group; none of its records is acknowledged and none becomes visible.
// The pchannel does not latch the failure. The rule it follows is that
// only bytes covered by a successful fsync are trusted: after a failed
// fsync the kernel may have dropped the dirty pages and will not report it
// again, so what is in the page cache after the durable end proves nothing.
// For Config.RetryBackoff (doubling after each failed try, up to 32 times,
// reset by a success) further appends fail at once with the cause; the next
// append after that repairs the active segment — it closes it, removes the
// segment files the failed commits created (fsyncing the directory),
// reopens the active segment, truncates it to its size at the durable end
// (the end of the last acknowledged record), fsyncs it — and then writes
// its group. Records a failed commit wrote, even ones a mid-call fsync
// made durable, are cut away, so a caller that retries a failed append
// never finds it twice. While appends fail, Log.Problems reports the
// pchannel (WritesUnavailable, with the error); the first success clears it.
//
// # Reading
//
// A Reader reads segment files through its own buffered reader, normally
// from the OS page cache, and returns only records below the durable end.
// It takes the pchannel mutex only when it has consumed every record it
// knew to be durable, and then blocks on a notification channel (no
// polling) until the writer publishes more, its context ends or the Log is
// closed. A record whose CRC or length is wrong, a sealed segment that ends
// before the next segment begins, or a segment file that is missing without
// having been truncated (ErrMissingSegment), is reported as *CorruptionErr
// with the segment path and the byte offset of the bad frame; the first
// such find per pchannel is also logged and reported by Log.Problems. A
// reader of a damaged pchannel (see Recovery) that reaches the damage gets
// its *CorruptionErr instead of waiting for records that cannot come.
//
// # Recovery
//
// Open scans the last segment of every pchannel from its start and stops
// at the first frame that is cut short, has an impossible length or a
// wrong CRC. A torn tail is only ever the last, partially written group
// commit; what an unfinished write leaves is a prefix of its bytes, cut by
// the end of the file, with blocks that were never written back reading
// as zeros. So the bad frame at byte p of a file of size s starts a torn
// tail only when all of these hold:
//
//  1. s − p is at most one group commit's unsynced bytes (MaxBatchBytes),
//     or the frame at p has a plausible length, is larger than
//     MaxBatchBytes (so it was written on its own) and reaches the end of
//     the file;
//  2. no valid frame (plausible length, matching CRC) starts anywhere in
//     (p, s): the frame after p's own length is tried first, then every
//     byte offset (resync), within a budget of CRC-checked bytes beyond
//     which a valid frame is assumed;
//  3. the frame itself has the shape of an unfinished write: its header is
//     cut short, or zero-filled (length 0 and CRC 0), or its length is
//     plausible and it is cut short by the end of the file (and its data is
//     not intact under the stored CRC, which would mean a damaged length),
//     or it is whole but part of it in a 512-byte-aligned block reads as
//     zeros (a block never written back).
//
// A torn tail is truncated to the end of the last good frame (logged as a
// warning with the byte and record offsets and the bytes removed) and
// fsynced, and appends continue at the next offset. Everything else — a
// flipped bit in any record, the last one included, zeros that start
// inside a record away from a block boundary, garbage after the last
// record, damage followed by valid records or further from the end than a
// group commit reaches — is corruption: the file is kept byte-identical,
// the pchannel serves every record before the damage, a reader reaching it
// gets *CorruptionErr (path and byte offset), appends fail with ErrDamaged
// wrapping it, and Log.Problems reports the pchannel (WritesUnavailable).
// Appending after the damage would bury acknowledged records behind new
// ones, so the decision is left to the operator (Cut). Open never fails
// because of one pchannel: one that cannot be read at all is reported the
// same way, and every other pchannel works.
//
// The rule errs towards reporting: a crash on a file system that writes
// back pages out of order can leave zeros followed by a later record of
// the same unfinished group, which is reported as corruption although
// nothing acknowledged is lost; lowering MaxBatchBytes across such a crash
// does the same. Cut accepts the loss explicitly.
//
// Sealed segments are not read at Open unless Config.VerifySealed is set,
// in which case the first damaged or short sealed segment is logged and
// reported by Log.Problems (Open does not fail). Damage in a sealed segment
// is never repaired automatically, and never stops appends: it does not
// touch the active segment.
//
// # Checking and cutting (operator tools)
//
// Verify walks a WAL directory without opening anything for writing and
// returns every Damage it finds: per segment the first bad record (a
// "corrupt record", or a "torn tail" for the last segment when Open would
// truncate it), a sealed segment that ends before the next begins
// ("missing segment"), one that holds more records than the next name
// implies ("overlapping segment"), and unreadable files. End reads a
// pchannel's end the same way. Cut, Pad and Append run only on the
// operator's word while no Log has the directory open (`strata repair
// --cut-wal` holds the meta store's lock, which the server holds while it
// runs) and touch only the pchannel named.
//
// Cut cuts one pchannel at its first damage: the bytes from the damage on
// move to <segment>.damaged, the segment is truncated there, and every
// later segment file is renamed to <name>.damaged; nothing is deleted and
// every change is fsynced. Files ending in .damaged are ignored by Open.
// CutResult says what was removed and OldEnd, a lower bound of the end
// before the cut.
//
// After a cut the pchannel's end moves back to the damage, so offsets past
// it would be given again to new records. Consumers keep offsets in the
// meta store (channel checkpoints, delta-synced offsets, segment start and
// synced offsets, collection start offsets), and a data node skips every
// record below its checkpoint, or at or below a segment's synced offset,
// as already persisted: acknowledged writes after the repair would be lost
// without a trace. Pad(dir, ch, end, ts, …) closes that gap: it appends
// filler records until the pchannel's end is at least end (the caller
// passes one past the largest offset the meta store references, and at
// least OldEnd), so that every later record gets an offset no consumer has
// passed. It refuses a damaged pchannel, writes in the normal framing
// (starting a new segment at DefaultSegmentSize), fsyncs at least every
// DefaultMaxBatchBytes/2 bytes (a crash leaves at most a torn tail) and at
// the end, and is idempotent: a second Pad to the same end writes nothing.
//
// A filler is a pchannel-wide time tick: wal.Message{Type: TimeTick,
// VChannel: ""}, encoded by Message.Encode, one per record. It is a no-op
// for every consumer: the data node hands a tick to each vchannel, which
// ignores it below its checkpoint and otherwise only notes the offset and
// timestamp (and may save an idle checkpoint there); the query node's
// delegator only advances its next offset and its safe timestamp, which
// never decreases; no data, segment or state changes. Its timestamp is the
// larger of the caller's (the largest timestamp the meta store records for
// the pchannel's vchannels: checkpoints, segment positions, seals, binlog
// ranges, collection creation) and that of the last record kept. Every one
// of those was allocated by the TSO before the repair, so each record
// appended afterwards has a larger one and the tick's promise holds; and
// no consumer's time moves backwards: a checkpoint saved at a filler keeps
// a timestamp at least as large as every earlier checkpoint's, which
// matters because the data coordinator compares checkpoint timestamps
// with flush timestamps (FlushState) and the query node starts its delete
// watermark from the checkpoint's. A tick carrying only the last kept
// record's timestamp could be older than a checkpoint past the cut; any
// other message type would change state (a Flush seals, an Insert needs a
// segment).
//
// Append writes given records the same way (the repair uses it to announce
// again the seal of segments that are still Sealed, whose Flush message
// the cut may have removed).
//
// # Truncation
//
// Truncate(ch, before) deletes, oldest first, every sealed segment whose
// records all have offsets < before, that is, whose successor's name is
// ≤ before. The active segment is never deleted, so End survives any
// truncation. Reading below the first remaining segment fails with
// wal.ErrTruncated; a Reader that already has a deleted segment open keeps
// reading it. The deletions are not fsynced: after a crash a deleted
// segment may reappear, which the wal.Log contract allows.
//
// # Closing
//
// Close stops accepting appends (they fail with wal.ErrClosed), lets each
// writer goroutine commit what was already queued, closes the active
// segments and wakes blocked readers, which return wal.ErrClosed.
package local
