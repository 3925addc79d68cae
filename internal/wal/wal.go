package wal

import (
	"context"
	"errors"
)

// Sentinel errors shared by every Log implementation.
var (
	// ErrClosed is returned by operations on a closed Log or Reader.
	ErrClosed = errors.New("wal: closed")
	// ErrTruncated is returned when reading from an offset that was truncated away.
	ErrTruncated = errors.New("wal: offset truncated")
)

// Log is the write-ahead-log port: a set of named physical channels
// (pchannels), each an ordered, durable sequence of opaque records addressed
// by a dense offset (0, 1, 2, …). Implementations: wal/local (embedded
// segmented files) and, in cluster mode, Kafka (one topic partition per
// pchannel). Every implementation passes the conformance suite in wal/waltest.
//
// Contract:
//   - AppendAsync enqueues the records in call order: if call A returns
//     before call B starts, A's records precede B's on the channel. The
//     records of one call are contiguous. The result arrives on the returned
//     channel once the records are durable (fsynced, or acknowledged by the
//     broker), or failed; nothing is delivered to readers before it is durable.
//   - Records are non-empty; an implementation may reject empty records or
//     records above its size limit (the call's result carries the error).
//   - A pchannel exists once it has been appended to or named in Open's config;
//     reading an unknown pchannel yields nothing until it is written.
//   - Read returns records at offsets ≥ from, in order, blocking for new ones.
//   - Truncate(ch, before) lets the implementation drop records with offset <
//     before; it may keep them longer (segment granularity). Reading a dropped
//     offset fails with ErrTruncated.
type Log interface {
	// AppendAsync enqueues records on pchannel and reports the offset of the
	// first one when they are durable. The returned channel receives exactly one result.
	AppendAsync(pchannel string, records [][]byte) <-chan AppendResult
	// Read opens a reader at offset from (inclusive).
	Read(ctx context.Context, pchannel string, from int64) (Reader, error)
	// Truncate allows records with offset < before to be deleted.
	Truncate(ctx context.Context, pchannel string, before int64) error
	// End returns the offset the next appended record will get (the durable end).
	End(ctx context.Context, pchannel string) (int64, error)
	// Close stops the log; pending appends fail or complete before it returns.
	Close() error
}

// AppendResult is the outcome of one AppendAsync call.
type AppendResult struct {
	// Offset is the offset of the first record of the call.
	Offset int64
	// Err is non-nil when the records are not durable.
	Err error
}

// Record is one record read back from a Log.
type Record struct {
	// Offset is the record's position on its pchannel.
	Offset int64
	// Data is the record's bytes, exactly as appended.
	Data []byte
}

// Reader reads one pchannel in offset order.
type Reader interface {
	// Next blocks until the next durable record is available or ctx ends.
	Next(ctx context.Context) (Record, error)
	// Close releases the reader; it is idempotent.
	Close() error
}
