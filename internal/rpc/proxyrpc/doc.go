// Package proxyrpc puts the proxy apart from the coordinator (`strata run
// proxy`): servers of strata.proxy.v1 (proto/strata/proxy/v1) that adapt
// the coordinator's in-process components, and clients that implement
// exactly the proxy's role interfaces over them, so that a proxy process
// is built the same way over in-process coordinators or over these
// (internal/app runProxy). A remote failure is returned as the error,
// never read as an answer.
//
//	CatalogService  NewCatalogServer(RootCoord)          Catalog: every role of proxy.Catalog, cached
//	DataService     NewDataServer(DataCoord)             Data: proxy.DataCoord
//	DmlService      NewDMLServer(DML, CollectionByID)    DMLClient: proxy.DML
//	ImportService   NewImportServer(Importer)            ImportClient: proxy.Importer
//	RBACService     NewRBACServer(RBACWriter)            RBAC: proxy.RBACWriter
//	ResourceGroupService NewResourceGroupServer(ResourceGroups) ResourceGroupClient: proxy.ResourceGroups
//	ProxyService    NewProxyServer(Invalidator)          Notifier (the coordinator's side)
//
// The query side is the coordinator's query coordinator served as a
// strata.querynode.v1.QueryNodeService (queryrpc.Client is the proxy's
// Loader and Reader; a proxy-side reader going to the shard leaders can
// replace the Reader alone). IDs and timestamps come from
// strata.coord.v1.ClockService through IDs and Timestamps.
//
// # Writes
//
// The proxy validates and routes rows as in process and builds the WAL
// messages; the coordinator, the WAL writer's owner (as Milvus 2.6's
// streaming node), appends them with one timestamp, assigning segments
// under the pchannel locks (proxy.LocalDML). AppendDml is sent once
// (rpc.NoRetry): a retry after the coordinator applied it would store the
// rows twice. A failed append is never acknowledged; as with any failed
// write it may or may not have landed.
//
// # The metadata cache
//
// Catalog caches collections (by database and name or alias) and
// databases. The coordinator wraps its root coordinator with Notifying:
// every DDL that changes collections, databases, aliases or load records
// calls Notifier.Invalidate before it returns, which lists the live
// "proxy" sessions and calls ProxyService.InvalidateMetaCache on each in
// parallel, within NotifierConfig.Bound; a proxy that does not answer in
// time is taken for dead and skipped. Invalidate drops the whole cache
// and bumps a generation, so that a lookup in flight during the
// invalidation does not store what it read. "Not found" is never cached.
// A proxy whose session is lost drops its cache and stops (app). DDL
// itself is ordered by the root coordinator's queue, whichever proxy it
// came through.
//
// # IDs and timestamps
//
// IDs are served from blocks the proxy fetches (IDs). Timestamps are
// never fetched ahead, since a read's guarantee timestamp must follow
// every write acknowledged before it: concurrent requests are coalesced
// into one AllocateTimestamps call (Timestamps), one call at a time, so
// they only grow; a coordinator failover keeps them growing (the new
// oracle starts beyond what the old one persisted, internal/tso).
//
// # Status methods
//
// The roles' status methods have error results although the in-process
// components answer them from memory (Collections, Databases, AliasesOf,
// FlushState, RowCount, IndexProgress, CompactionState, an import Job and
// Jobs, and the Loader's Loaded, Loading, LoadProgress, LoadFailure and
// Segments, which queryrpc carries): a failed call is the error (code 2,
// retriable, when the coordinator cannot be reached), never an empty
// answer or "not loaded". The data side's Segments still has none: when
// the call fails the error is logged and the answer is the empty one.
//
// # RBAC and resource groups
//
// A proxy checks the caller of an RBAC change and resolves the request,
// then the coordinator's RBAC store makes it (RBACService; the store's
// writes tell every proxy to reload before the call returns). Resource
// groups are the coordinator's query coordinator's (ResourceGroupService);
// TransferNode and TransferReplica are sent once (rpc.NoRetry).
package proxyrpc
