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
package wal
