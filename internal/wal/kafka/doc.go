// Package kafka is the cluster-mode implementation of the wal.Log port on
// Apache Kafka (any broker speaking the Kafka protocol), using franz-go.
// It passes the same conformance suite as wal/local (wal/waltest); its tests
// run it against franz-go's in-process kfake cluster.
//
// # Topics
//
// Open fails unless a broker answers within Config.RequestTimeout.
//
// Each pchannel is one topic named Config.TopicPrefix + pchannel (by default
// exactly the pchannel name, "by-dev-rootcoord-dml_0", as Milvus names its
// Kafka topics) with a single partition, 0. The Log creates a topic the
// first time its pchannel is appended to or read, with
//
//	partitions         1
//	replication factor Config.ReplicationFactor (-1: broker default)
//	max.message.bytes  Config.MaxRecordBytes + 4096
//	retention.ms       -1, retention.bytes -1 (no time or size retention)
//	cleanup.policy     delete (never compact: offsets must stay dense)
//
// A topic that already exists is used as is if it has one partition (the
// Log refuses one with more). An operator who creates topics by hand must
// also give them cleanup.policy=delete and a retention longer than any
// checkpoint lag, or records not yet flushed to segments would be lost.
//
// # Records and offsets
//
// A WAL record (wal.EncodeRecord: every message one Writer append puts on a
// pchannel, so an upsert's delete and insert are durable together) is the
// value of exactly one Kafka record, with no key and no headers. The WAL
// offset of a record is its Kafka offset in partition 0: the producer is
// idempotent and not transactional and topics are never compacted, so
// offsets are dense from 0 like the port requires (a reader that meets a gap
// fails instead of skipping). Checkpoints therefore keep the same form as in
// standalone mode and in Milvus: msgpb.MsgPosition.MsgID = the offset as 8
// bytes little-endian (see wal.Position).
//
// # Appends and ordering
//
// AppendAsync validates the records (non-empty, at most MaxRecordBytes),
// then, holding the pchannel's lock, hands them to the producer one by one.
// The producer (acks=all, idempotent, manual partitioning to partition 0)
// keeps a partition's records in buffer order across retries, so calls on a
// pchannel land in call order and a call's records are contiguous. The
// result is delivered when every record of the call is acknowledged by all
// in-sync replicas, and carries the offset of the first, or when it fails
// (after Config.DeliveryTimeout at the latest: in-flight records may be
// canceled, so a failed append may still be durable, as wal.Writer.Append
// already tells its callers). wal.Writer takes its
// per-pchannel lock around timestamp allocation and AppendAsync, so
// timestamps are non-decreasing in offset order exactly as with wal/local,
// and time ticks are ordinary records. End is the partition's high
// watermark.
//
// # Reading
//
// Each Reader is a franz-go consumer of its own assigned partition 0 at the
// requested offset, without consumer groups and without offset reset: a
// read below the log start fails with wal.ErrTruncated; a read past the end
// waits for the offset to be written.
//
// # Truncation and retention
//
// Truncate(ch, before) issues DeleteRecords, moving the partition's log start
// offset to before (capped at the high watermark); the broker then deletes
// whole segments below it, so truncation is exact for readers and
// segment-granular for disk space. Nothing else deletes records.
package kafka
