// Package querycoord is the query coordinator of cluster mode: it places
// loaded collections on the live query nodes and serves the proxy's
// query-side roles (proxy.Loader and proxy.Reader) over them, so the proxy
// reads a cluster exactly as it reads the standalone's one query node.
//
// # Placement
//
// A load with replica_number N splits the live query nodes (a membership
// watch of role "querynode") into N replicas with distinct nodes
// (placement.SpawnReplicas, Milvus's "resource group node not enough" error,
// code 304, when there are fewer nodes than replicas) and gives each
// vchannel of each replica a shard leader (placement.Assign). Each leader
// loads the collection for its vchannels only (Node.LoadVChannels): it
// tails them and serves every sealed and growing segment of them, unless
// Config.SpreadSegments is on (below). The replicas are saved
// with placement.Store (the coordinator's fenced meta store in cluster
// mode) and reused by the next load of the collection (a restart), healed
// first. A loaded collection loaded again with another replica number gets
// that many replicas (resize.go: new ones on free nodes of their group, or
// nodes taken from the group's replicas with more than one; extra ones
// dropped from the placement, then released).
//
// # Reads
//
// A search or query goes to one replica, round-robin over the replicas
// that serve (none of their leaders is dead or being moved). The request
// goes to each shard leader node of the replica in parallel, and the
// results are merged with plan.MergeSearch and plan.MergeQuery, the reduce
// a query node applies to its own segments, so the answer is the one a
// single node holding every vchannel gives: per query the best hit of each
// primary key, best first, TopK of them (the proxy's offset is inside
// TopK and applied by the proxy); grouped searches are asked without
// strict_group_size, which the merge applies; a query is asked for
// offset+limit rows from offset 0 (with the primary key among its output
// fields), and the merge orders by primary key, then applies offset and
// limit; count(*) is summed. A grouped search asks a node again for more
// groups while it may hold hits of a merged group that it did not rank
// among its own TopK groups (group.go), so groups and group sizes are
// exact too. Each leader is asked for the vchannels it leads only
// (plan.Read.VChannels), so a node that still holds a shard being moved
// away does not answer for it twice. A replica whose leaders are all one
// node gets the request unchanged (but for the vchannels) and its answer
// as is (the single-node case pays nothing).
//
// A full-text (BM25) search fanned out to several nodes first asks each
// for its statistics over the shards it leads (BM25Stater: the number of
// live documents, their total length and each query term's document
// frequency at its read timestamp), sums them and sends the search with
// the sum (plan.BM25.Stats), which every node weighs the terms by: the
// scores are those of one node holding every shard. Rows written between
// the two calls may be counted in the statistics and not scored, or the
// reverse, as a single node's statistics and scoring share one timestamp
// only.
//
// A read that fails on one replica because a node is gone (the node left
// the membership, or answered "channel not available", "collection not
// loaded", "service not ready" or gRPC Unavailable) is tried on the next
// replica; when none is left it fails with Milvus's retriable code 503,
// "channel not available", unless the placement changed meanwhile (a
// shard moved under the read): then the read is tried again on the new
// placement, up to three times.
//
// # Reads from a proxy apart: the Router
//
// The fan-out, merge and retries above run over a readPath: the
// Coordinator's own (its live nodes, in process) or a Router's. A proxy
// running in its own process reads through a Router (NewRouter), which
// fetches a collection's shard leaders on its first read
// (Coordinator.ShardLeaders, across processes
// strata.coord.v1.QueryCoordService.GetShardLeaders through
// coordrpc.QueryCoord: the replicas, each shard's leader node and
// address, whether each replica serves, the placement's version, the
// primary key and the TTL), caches them and sends each read straight to
// the leaders, with the TTL cut-off computed from the cached TTL (so no
// node asks the coordinator for it). Cached leaders are fetched again in
// the background every RouterConfig.RefreshInterval and after a read
// found a node gone; a read never waits for that fetch. A replica on
// which a read found a node gone is tried last until the placement
// changes. When every replica of a read failed so, the leaders are fetched
// at once and, if they changed (a shard moved, a replica healed), the
// read is tried again on them (up to three times). While the coordinator
// cannot be reached the cached leaders serve; a collection not cached
// fails within RouterConfig.FetchTimeout with Milvus's retriable code 2.
// Invalidate drops a collection's leaders (a release, a drop). A
// collection that is not loaded is code 101, from the coordinator or from
// the nodes. The single-node case costs a map lookup over the
// Coordinator's read.
//
// # Sealed segments spread over a replica's nodes
//
// With Config.SpreadSegments (spread.go) the sealed segments of each
// vchannel are placed on the replica's nodes by rows (placement.Assign):
// the shard leader keeps some and a distribution of the others, which
// worker nodes serve (SegmentServer, the in-process query node). A read
// still goes to the leaders only; each leader reads its own segments and
// asks its workers for theirs at its read timestamp, and merges them
// (package fanout, the merge above). Each move is load (the worker) →
// switch (the leader's distribution, which waits for the reads of the old
// one) → release (the old holder). It runs after a load, in a heal (a
// dead worker's segments move before its replica serves again), after a
// rebalance and every HealInterval (the segments of flushes and
// compactions). A replica with a node that cannot spread gathers its
// segments on its leaders.
//
// # Failover
//
// Run follows the membership watch. When a query node leaves, every
// replica that used it stops serving (reads go to the other replicas or
// get 503) while placement.Heal drops the node (a replica left empty gets
// a free live node) and placement.Assign moves its shard leaderships to
// the replica's other nodes; each node whose vchannels changed loads its
// new set (a query node builds it beside the set it serves and swaps them
// at once, so the shards it keeps have no gap), the replicas are saved,
// and the replica serves again. A heal that cannot complete (no node left,
// a load failed) is tried again every Config.HealInterval and on every
// membership change. With replica_number=1, reads of a dead node's shards
// fail with 503 until its session ends (membership's sessionTTL) and the
// heal has reloaded its vchannels: that is the recovery bound.
//
// # Rebalance
//
// A node that joins takes shard leaderships over once the heals are done
// (Coordinator.Rebalance, also the explicit trigger): placement.Rebalance
// plans the moves (nodes of a replica within one leadership of each
// other; a free node joins a replica whose nodes each lead more than one
// shard), and each move is a handoff reads do not see: the new leader
// loads the shard beside its own, reads switch to it (the replicas are
// saved), then the old leader drops it, once its reads in progress end.
package querycoord
