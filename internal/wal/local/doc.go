// Package local is the embedded implementation of wal.Log: one directory
// of segment files per pchannel, with group-commit fsync, CRC-checked
// records and torn-tail repair.
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
// tail never decodes as records). crc is the CRC-32 of data with the
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
// A failed write or fsync fails every call of the group, and the pchannel
// then fails every later append with the same error until the Log is
// reopened (after a failed fsync the state of the page cache is unknown;
// reopening repairs the tail from what is on disk).
//
// # Reading
//
// A Reader reads segment files through its own buffered reader, normally
// from the OS page cache, and returns only records below the durable end.
// It takes the pchannel mutex only when it has consumed every record it
// knew to be durable, and then blocks on a notification channel (no
// polling) until the writer publishes more, its context ends or the Log is
// closed. A record whose CRC or length is wrong, or a sealed segment that
// ends before the next segment begins, is reported as *CorruptionErr with
// the segment path and the byte offset of the bad frame.
//
// # Recovery
//
// Open scans the last segment of every pchannel from its start. The first
// frame that is cut short, has an impossible length or a wrong CRC, and
// everything after it, is a torn tail: the file is truncated to the end of
// the last good frame (logged as a warning with both the byte and record
// offsets) and fsynced, and appends continue at the next offset. Sealed
// segments are not read at Open unless Config.VerifySealed is set, in which
// case damage or missing records in one fail Open with *CorruptionErr;
// damage in a sealed segment is never repaired automatically.
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
