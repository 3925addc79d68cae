// Package datanoderpc puts the data node's channel ownership on the
// network: Server serves strata.datanode.v1.DataNodeService
// (proto/strata/datanode/v1) from an in-process data node (a ChannelOwner:
// *datanode.Node in its watched mode), and Client implements ChannelOwner
// over that service, so the coordinator's channel applier
// (placement.ChannelApplier) tells a remote data node what to consume
// exactly as it would an in-process one, with the same errors (the
// transport carries their Milvus codes and messages).
//
// # Idempotency
//
// internal/rpc retries a call that failed retriably, so each method is
// safe to repeat: WatchChannel of a vchannel watched under the same epoch
// does nothing, ReleaseChannel of a vchannel the node does not watch does
// nothing, ListChannels has no effect.
//
// # Deadlines
//
// ReleaseChannel waits for the vchannel's last sync, which lasts as long
// as its object-storage writes: the caller gives it a deadline to match
// (placement.ApplierConfig.ReleaseTimeout, 1m). A call without a deadline
// gets the transport's default (rpc.ClientConfig.Timeout).
package datanoderpc
