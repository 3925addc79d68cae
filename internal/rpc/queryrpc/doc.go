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
// The proxy's Loader role asks Loaded, Loading, LoadProgress, Segments,
// Release and ReleasePartitions without a context and without an error
// result, as the in-process node answers them from memory. Client gives
// each call the transport's default deadline (rpc.ClientConfig.Timeout);
// when the call fails after its retries the error is logged and the answer
// is the empty one (not loaded, no progress, no segments), so reads of the
// collection fail with "collection not loaded" rather than hang.
// LoadFailure returns the call's error itself. Giving these methods a
// context and an error is the next step once cluster mode has a query
// coordinator between the proxy and the nodes.
package queryrpc
