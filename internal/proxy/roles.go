package proxy

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/auth"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rgroup"
)

// The proxy's dependencies, cut into the roles it calls them for. Each role
// is a contract that cluster mode puts on the network as it stands; the
// standalone server passes one object for all the roles of a coordinator
// (CatalogOf, DataCoordOf, QueryNodeOf), cluster mode may pass a different
// client per role. Every method that may have to cross the network has an
// error result, even where the in-process component answers from memory:
// a remote failure must never read as an empty answer (no collections, no
// rows, not flushed, no replicas).

// CollectionResolver resolves collections by database and name (aliases
// included) from the root coordinator's catalog.
type CollectionResolver interface {
	Collection(db, name string) (*catalog.Collection, error)
	Collections(ctx context.Context, db string) ([]*catalog.Collection, error)
}

// CollectionDDL creates, drops, renames and alters collections and their
// schemas (root coordinator).
type CollectionDDL interface {
	CreateCollectionPartitions(ctx context.Context, db string, schema *schemapb.CollectionSchema, shards int,
		level commonpb.ConsistencyLevel, props map[string]string, numPartitions int) error
	DropCollection(ctx context.Context, db, name string) (*catalog.Collection, error)
	RenameCollection(ctx context.Context, db, oldName, newDB, newName string) error
	AlterProperties(ctx context.Context, db, coll string, set map[string]string, del []string) error
	AddField(ctx context.Context, db, coll string, f *schemapb.FieldSchema) (*catalog.Collection, error)
	AlterField(ctx context.Context, db, coll, field string, set map[string]string, del []string, loaded bool) error
	EnableDynamicField(ctx context.Context, db, coll string) (*catalog.Collection, error)
}

// PartitionDDL creates and drops partitions (root coordinator); DropPartition
// returns the dropped partition's ID.
type PartitionDDL interface {
	CreatePartition(ctx context.Context, db, coll, part string) error
	DropPartition(ctx context.Context, db, coll, part string) (int64, error)
}

// LoadRecorder records in the catalog whether a collection (or which of its
// partitions) is loaded, so that a restart loads it again (root coordinator).
type LoadRecorder interface {
	SetLoaded(ctx context.Context, db, coll string, loaded bool, parts []int64) error
}

// DatabaseCatalog owns databases (root coordinator).
type DatabaseCatalog interface {
	Database(name string) (*catalog.DatabaseInfo, error)
	Databases(ctx context.Context) ([]*catalog.DatabaseInfo, error)
	CreateDatabase(ctx context.Context, name string, props map[string]string) error
	AlterDatabase(ctx context.Context, name string, set map[string]string, deleteKeys []string) error
	DropDatabase(ctx context.Context, name string) error
}

// AliasCatalog owns collection aliases (root coordinator). CheckDropCollection
// refuses to drop a collection that aliases still point to.
type AliasCatalog interface {
	CreateAlias(ctx context.Context, db, alias, coll string) error
	AlterAlias(ctx context.Context, db, alias, coll string) error
	DropAlias(ctx context.Context, db, alias string) error
	DescribeAlias(db, alias string) (string, error)
	ListAliases(db, coll string) ([]string, error)
	AliasesOf(ctx context.Context, collectionID int64) ([]string, error)
	CheckDropCollection(db, name string) error
}

// Catalog is the root coordinator as the proxy uses it, one field per role.
type Catalog struct {
	CollectionResolver
	CollectionDDL
	PartitionDDL
	LoadRecorder
	DatabaseCatalog
	AliasCatalog
}

// RootCoord is every role of Catalog in one object, as the in-process root
// coordinator implements them.
type RootCoord interface {
	CollectionResolver
	CollectionDDL
	PartitionDDL
	LoadRecorder
	DatabaseCatalog
	AliasCatalog
}

// CatalogOf returns a Catalog whose every role is c.
func CatalogOf(c RootCoord) Catalog {
	return Catalog{CollectionResolver: c, CollectionDDL: c, PartitionDDL: c, LoadRecorder: c, DatabaseCatalog: c, AliasCatalog: c}
}

// SegmentAllocator assigns inserted rows to a growing segment of a
// vchannel (data coordinator), returning the segment's ID; LocalDML calls
// it under the pchannel locks.
type SegmentAllocator interface {
	AssignSegment(ctx context.Context, collectionID, partitionID int64, vchannel string, rows, rowSize int64) (int64, error)
}

// Flusher seals a collection's growing segments and reports when they are
// persisted (data coordinator): Flush returns the sealed segments and the
// flush timestamp, FlushState whether all of them are flushed.
type Flusher interface {
	Flush(ctx context.Context, collectionID int64, vchannels []string) ([]int64, uint64, error)
	FlushState(ctx context.Context, segIDs []int64, vchannels []string, flushTS uint64) (bool, error)
}

// SegmentLister reports a collection's segments and row count (data
// coordinator).
type SegmentLister interface {
	RowCount(ctx context.Context, collectionID int64, partitions []int64) (int64, error)
	Segments(collectionID int64) []catalog.SegmentInfo
}

// DataDropper drops or truncates the data of a collection or partition
// (data coordinator).
type DataDropper interface {
	DropCollection(ctx context.Context, collectionID int64, vchannels []string) error
	DropPartition(ctx context.Context, collectionID, partitionID int64) error
	Truncate(ctx context.Context, collectionID int64) error
}

// IndexCoord owns index definitions and reports build progress (data
// coordinator).
type IndexCoord interface {
	CreateIndex(ctx context.Context, idx catalog.IndexInfo) error
	Indexes(ctx context.Context, collectionID int64) ([]catalog.IndexInfo, error)
	IndexProgress(ctx context.Context, indexID int64) (catalog.IndexProgress, error)
	DropIndex(ctx context.Context, collectionID int64, name string) error
	AlterIndex(ctx context.Context, collectionID int64, name string, set map[string]string, deleteKeys []string) error
}

// CompactionCoord starts manual compactions and reports their state (data
// coordinator).
type CompactionCoord interface {
	// ManualCompaction plans every compaction possible now; targetSize > 0
	// (bytes) is a force merge of each partition's L1 segments.
	ManualCompaction(ctx context.Context, collectionID, targetSize int64) (int64, error)
	CompactionState(ctx context.Context, triggerID int64) (executing, completed, failed int, plans []catalog.CompactionPlan, err error)
}

// DataCoord is the data coordinator as the proxy uses it, one field per
// role. Its segment allocator is the DML role's (LocalDML), not the
// proxy's.
type DataCoord struct {
	Flusher
	SegmentLister
	DataDropper
	IndexCoord
	CompactionCoord
}

// DataCoordinator is every role of DataCoord in one object, as the
// in-process data coordinator implements them.
type DataCoordinator interface {
	Flusher
	SegmentLister
	DataDropper
	IndexCoord
	CompactionCoord
}

// DataCoordOf returns a DataCoord whose every role is d.
func DataCoordOf(d DataCoordinator) DataCoord {
	return DataCoord{Flusher: d, SegmentLister: d, DataDropper: d, IndexCoord: d, CompactionCoord: d}
}

// Loader loads and releases collections and partitions on the query side
// and reports what is loaded: Loaded whether the collection is (and which
// partitions), LoadFailure why its last load failed (nil if it did not),
// Segments the sealed segments it serves. The status methods' errors are
// the query side failing to answer (a proxy process's coordinator out of
// reach): the handlers report them as such, never as "not loaded".
type Loader interface {
	// Load loads a collection (partitions nil = all) or more of its
	// partitions. replicaNumber is the request's replica_number (0: not
	// given, the default of one replica, or the number the collection is
	// loaded with); the query coordinator places that many replicas on
	// distinct query nodes, a single query node is one replica and ignores it.
	// resourceGroups is the request's resource_groups: none (the default
	// group), one for all the replicas, or one per replica.
	Load(ctx context.Context, collectionID int64, partitions []int64, replicaNumber int, resourceGroups []string) error
	Release(collectionID int64)
	ReleasePartitions(collectionID int64, partitions []int64)
	// Loaded reports whether the collection is loaded, and which
	// partitions (nil: all).
	Loaded(ctx context.Context, collectionID int64) (bool, []int64, error)
	// Loading reports whether a load of the collection is in progress.
	Loading(ctx context.Context, collectionID int64) (bool, error)
	// WaitLoad waits until no load of the collection is in progress, so
	// that Loaded says what it ended as.
	WaitLoad(ctx context.Context, collectionID int64) error
	// LoadProgress is how far a loaded or loading collection's load is
	// (percent; 100 when serving everything).
	LoadProgress(ctx context.Context, collectionID int64) (int64, error)
	// LoadFailure is why the collection's last load failed (nil if it did
	// not); err is the call's own failure (the query side could not say).
	LoadFailure(ctx context.Context, collectionID int64) (failure, err error)
	// Segments lists the sealed and growing segments the query side serves
	// for the collection.
	Segments(ctx context.Context, collectionID int64) ([]plan.SegmentInfo, error)
	// Replicas is where the collection's replicas run; nil when the query
	// side is a single query node (one replica on it).
	Replicas(ctx context.Context, collectionID int64) ([]plan.Replica, error)
}

// Reader serves searches and queries of loaded collections.
type Reader interface {
	Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error)
	Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error)
}

// QueryNode is the query side as the proxy uses it, one field per role.
type QueryNode struct {
	Loader
	Reader
}

// QueryServer is every role of QueryNode in one object, as the in-process
// query node implements them.
type QueryServer interface {
	Loader
	Reader
}

// QueryNodeOf returns a QueryNode whose every role is q.
func QueryNodeOf(q QueryServer) QueryNode { return QueryNode{Loader: q, Reader: q} }

// ResourceGroups keeps Milvus's resource groups and moves query nodes and
// replicas between them (query coordinator; package rgroup).
type ResourceGroups interface {
	CreateResourceGroup(ctx context.Context, name string, cfg *rgroup.Config) error
	UpdateResourceGroups(ctx context.Context, cfgs map[string]rgroup.Config) error
	DropResourceGroup(ctx context.Context, name string) error
	TransferNode(ctx context.Context, source, target string, n int) error
	TransferReplica(ctx context.Context, source, target string, collectionID int64, n int) error
	ListResourceGroups(ctx context.Context) ([]string, error)
	DescribeResourceGroup(ctx context.Context, name string) (rgroup.Info, error)
}

// RBACWriter changes users, roles, grants and privilege groups: the RBAC
// store (auth.Store) in process, the coordinator that owns it from a
// proxy process. The proxy checks the caller and resolves the request
// (passwords decoded, a grant's object, database and grantor) before it
// calls the writer; the proxy's reads use its own auth.Guard's store.
type RBACWriter interface {
	CreateUser(ctx context.Context, name, password string) error
	UpdatePassword(ctx context.Context, name, oldPassword, newPassword string) error
	DeleteUser(ctx context.Context, name string) error
	CreateRole(ctx context.Context, role string) error
	DropRole(ctx context.Context, role string, force bool) error
	OperateUserRole(ctx context.Context, user, role string, add bool) error
	OperateGrant(ctx context.Context, g auth.Grant, add bool) error
	CreateGroup(ctx context.Context, name string) error
	DropGroup(ctx context.Context, name string) error
	OperateGroup(ctx context.Context, name string, privs []string, add bool) error
	Restore(ctx context.Context, snap auth.Snapshot) error
}
