// Package coordrpc serves the coordinator's roles over internal RPC
// (proto/strata/coord/v1): what a query node or a data node running in its
// own process asks of the coordinator process, and the shard leaders a
// proxy running apart reads.
//
// Servers adapt in-process components to the four services; they declare
// the role interfaces they serve and never import a component (the app
// hands them the coordinators):
//
//	DataCoordService  NewDataCoordServer(segs SegmentMeta, idx IndexMeta, syncs SyncReporter, builds IndexBuilds, compactions Compactions)
//	RootCoordService  NewRootCoordServer(colls Collections)
//	ClockService      NewClockServer(ids, timestamps IDAllocator, ticker Ticker)
//	QueryCoordService NewQueryCoordServer(leaders ShardLeaders)
//	WALPinService     NewWALPinServer(pins PinReports)
//
// Clients implement exactly the Go interfaces the nodes consume, so a node
// is built the same way over in-process coordinators or over these:
//
//	DataCoord  querynode.Segments, datanode.Coord, datanode.IndexCoord, datanode.CompactionCoord
//	RootCoord  querynode.Collections, datanode.Collections
//	Clock      datanode.Allocator, querynode.Ticker
//	QueryCoord querycoord.LeaderSource (a proxy's querycoord.Router)
//	WALPins    the query node process's WAL pin reports (wal.RemotePins at the coordinator)
//
// Their connection comes from rpc.Pool (or any connection made with
// rpc.DialOptions), which gives every call its deadline, retries and
// decoded errors. A call that fails returns its error: a coordinator that
// cannot be reached is never read as "no such segment", "no collections"
// or an empty recovery.
//
// Catalog records travel as bytes holding their catalog JSON
// (catalog.Marshal, the meta store's own encoding, whose field names are
// durable); a collection travels as its stored record, CollectionInfo with
// the serialized schema (catalog.DecodeCollection reads it). Claims
// (ClaimIndexTask, ClaimCompaction) carry their wait; a claim whose context
// has no deadline gets the wait plus Config.ClaimSlack. ReportSync is sent
// once (rpc.NoRetry): applying a sync twice would count its rows twice.
package coordrpc
