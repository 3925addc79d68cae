// Package wal is Strata's write-ahead-log port and the message layer above it.
//
// The port (Log) is an ordered, durable byte log per physical channel
// (pchannel). Messages (Message) are encoded into records; each belongs to a
// virtual channel (vchannel), one per collection shard, multiplexed onto a
// pchannel. Writer assigns hybrid timestamps at append time under a
// per-pchannel lock, so timestamps are monotonic in log order, and emits time
// ticks so consumers know how far time has advanced on idle channels.
//
// Channel names follow Milvus: pchannel "{prefix}-rootcoord-dml_{i}",
// vchannel "{pchannel}_{collectionID}v{shard}".
//
// Positions: a Position is (pchannel, offset, timetick). Checkpoints store it
// as msgpb.MsgPosition with msgID = offset as 8 bytes little-endian, as
// rocksmq and Kafka do in Milvus.
//
// Writing: Writer.Append takes the per-pchannel locks of every pchannel in
// its batch (in sorted name order, so overlapping batches cannot deadlock),
// allocates one timestamp from the Clock, stamps every message with it and
// calls Log.AppendAsync for each pchannel before releasing the locks. Since
// AppendAsync orders records like its calls, timestamps are non-decreasing
// in offset order on every pchannel, and a multi-pchannel batch (an upsert,
// say) carries the same timestamp everywhere. Append returns once every
// record is durable. Writer.Run appends TimeTick messages (VChannel "") to
// watched pchannels that have been idle for WriterConfig.TickInterval.
//
// Reading: a Scanner decodes the records of one pchannel into Entries
// (Position and Message); consumers filter by vchannel.
//
// Implementations of Log: wal/local (embedded files); the conformance suite
// every implementation passes is wal/waltest.
//
// Records: the messages one Writer append puts on one pchannel form a single
// record (EncodeRecord), so they are durable together or not at all — an
// upsert's delete never survives a crash without its insert. A record of one
// message is Message.Encode (first byte 1); a record of several is
// version 2 | count uint32 LE | count × (length uint32 LE | Message.Encode).
// The messages of a record share its offset.
package wal
