// Package queryrpc puts the query node on the network: Server serves
// strata.querynode.v1.QueryNodeService (proto/strata/querynode/v1) from an
// in-process query node, and Client implements the proxy's query-side
// roles (proxy.Loader and proxy.Reader) over that service, so the proxy
// reads through a remote query node exactly as through the in-process
// one: the same plan requests in, the same results and the same Milvus
// error codes and messages out (internal/rpc carries errors across).
//
// # Messages
//
// Requests mirror internal/plan field for field (codec.go); results travel
// in Milvus's own messages: a search result as schemapb.SearchResultData,
// a query's columns as schemapb.FieldData, converted with the column
// package's FieldData codec, so every data type the API serves crosses
// the hop. TestCodecCoversPlan fails when a field is added to a plan type
// and not to the codec.
//
// # Shard leaders
//
// A LoadRequest may name some of the collection's vchannels: the node loads
// and serves only those, as the shard leader of a replica whose other
// vchannels other nodes lead (the query coordinator, internal/querycoord,
// calls Client.LoadVChannels). Its replica_number is the client's
// replica_number, which a node, one replica by itself, ignores.
//
// # Idempotency
//
// internal/rpc retries a call that failed retriably, so each method must be
// safe to repeat: Load of a loaded or loading collection joins that load,
// Release of a released collection does nothing, reads have no effects.
//
// # The status methods
//
// Loaded, Loading, LoadProgress, LoadFailure and Segments take the
// caller's context and return the call's error (logged too) when it fails
// after its retries: a proxy process whose coordinator is out of reach
// reports that failure (code 2 at the Milvus API), never "not loaded", 0 %
// or no segments. LoadFailure keeps the load's own failure (the result the
// node reports, with its Milvus code) apart from the call's error. Release
// and ReleasePartitions have no error result: a failure is logged, and the
// call has the transport's default deadline (rpc.ClientConfig.Timeout).
package queryrpc
