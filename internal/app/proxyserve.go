package app

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/rpc/proxyrpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
	"github.com/strata-db/strata/internal/wal"
)

// The coordinator's side of the proxy processes: what it serves them
// (strata.proxy.v1 and its query coordinator as a QueryNodeService), and
// the root coordinator whose every DDL tells them to drop their caches.

// notifyingRoot is the root coordinator as the API sees it in the
// coordinator role: each DDL that changes collections, databases, aliases
// or load records tells every live proxy process to drop its metadata
// cache before it returns (whether it failed or not: a failed DDL may
// have applied part of itself). Reads pass through.
type notifyingRoot struct {
	proxy.RootCoord
	notify func(ctx context.Context, db, coll, ddl string)
}

func (r notifyingRoot) CreateCollectionPartitions(ctx context.Context, db string, schema *schemapb.CollectionSchema, shards int,
	level commonpb.ConsistencyLevel, props map[string]string, numPartitions int,
) error {
	defer r.notify(ctx, db, schema.GetName(), "CreateCollection")
	return r.RootCoord.CreateCollectionPartitions(ctx, db, schema, shards, level, props, numPartitions)
}

func (r notifyingRoot) DropCollection(ctx context.Context, db, name string) (*catalog.Collection, error) {
	defer r.notify(ctx, db, name, "DropCollection")
	return r.RootCoord.DropCollection(ctx, db, name)
}

func (r notifyingRoot) RenameCollection(ctx context.Context, db, oldName, newDB, newName string) error {
	defer r.notify(ctx, db, oldName, "RenameCollection")
	return r.RootCoord.RenameCollection(ctx, db, oldName, newDB, newName)
}

func (r notifyingRoot) AlterProperties(ctx context.Context, db, coll string, set map[string]string, del []string) error {
	defer r.notify(ctx, db, coll, "AlterCollectionProperties")
	return r.RootCoord.AlterProperties(ctx, db, coll, set, del)
}

func (r notifyingRoot) AddField(ctx context.Context, db, coll string, f *schemapb.FieldSchema) (*catalog.Collection, error) {
	defer r.notify(ctx, db, coll, "AddField")
	return r.RootCoord.AddField(ctx, db, coll, f)
}

func (r notifyingRoot) AlterField(ctx context.Context, db, coll, field string, set map[string]string, del []string, loaded bool) error {
	defer r.notify(ctx, db, coll, "AlterField")
	return r.RootCoord.AlterField(ctx, db, coll, field, set, del, loaded)
}

func (r notifyingRoot) EnableDynamicField(ctx context.Context, db, coll string) (*catalog.Collection, error) {
	defer r.notify(ctx, db, coll, "EnableDynamicField")
	return r.RootCoord.EnableDynamicField(ctx, db, coll)
}

func (r notifyingRoot) CreatePartition(ctx context.Context, db, coll, part string) error {
	defer r.notify(ctx, db, coll, "CreatePartition")
	return r.RootCoord.CreatePartition(ctx, db, coll, part)
}

func (r notifyingRoot) DropPartition(ctx context.Context, db, coll, part string) (int64, error) {
	defer r.notify(ctx, db, coll, "DropPartition")
	return r.RootCoord.DropPartition(ctx, db, coll, part)
}

func (r notifyingRoot) SetLoaded(ctx context.Context, db, coll string, loaded bool, parts []int64) error {
	defer r.notify(ctx, db, coll, "SetLoaded")
	return r.RootCoord.SetLoaded(ctx, db, coll, loaded, parts)
}

func (r notifyingRoot) CreateDatabase(ctx context.Context, name string, props map[string]string) error {
	defer r.notify(ctx, name, "", "CreateDatabase")
	return r.RootCoord.CreateDatabase(ctx, name, props)
}

func (r notifyingRoot) AlterDatabase(ctx context.Context, name string, set map[string]string, deleteKeys []string) error {
	defer r.notify(ctx, name, "", "AlterDatabase")
	return r.RootCoord.AlterDatabase(ctx, name, set, deleteKeys)
}

func (r notifyingRoot) DropDatabase(ctx context.Context, name string) error {
	defer r.notify(ctx, name, "", "DropDatabase")
	return r.RootCoord.DropDatabase(ctx, name)
}

func (r notifyingRoot) CreateAlias(ctx context.Context, db, alias, coll string) error {
	defer r.notify(ctx, db, coll, "CreateAlias")
	return r.RootCoord.CreateAlias(ctx, db, alias, coll)
}

func (r notifyingRoot) AlterAlias(ctx context.Context, db, alias, coll string) error {
	defer r.notify(ctx, db, coll, "AlterAlias")
	return r.RootCoord.AlterAlias(ctx, db, alias, coll)
}

func (r notifyingRoot) DropAlias(ctx context.Context, db, alias string) error {
	defer r.notify(ctx, db, alias, "DropAlias")
	return r.RootCoord.DropAlias(ctx, db, alias)
}

// coordQuery is the query coordinator as the coordinator's
// QueryNodeService serves it to proxy processes: the proxy's query roles;
// a shard leader's LoadVChannels is for query nodes only.
type coordQuery struct{ proxy.QueryServer }

// LoadVChannels refuses: the query coordinator places vchannels itself.
func (coordQuery) LoadVChannels(context.Context, int64, []int64, []string) error {
	return errcode.Invalid("LoadVChannels is served by query nodes, not by the coordinator")
}

// registerProxyServices serves what the proxy processes ask of the
// coordinator: the root coordinator (root, whose DDL notifies them), the
// data coordinator, the DML append over the WAL writer (the WAL owner),
// the import jobs, and the query coordinator (query, metered) as a
// QueryNodeService.
func registerProxyServices(srv *grpc.Server, root proxy.RootCoord, core *rootcoord.Core, data *datacoord.Coordinator,
	writer *wal.Writer, imp proxyrpc.Importer, query proxy.QueryServer,
) {
	proxyv1.RegisterCatalogServiceServer(srv, proxyrpc.NewCatalogServer(root))
	proxyv1.RegisterDataServiceServer(srv, proxyrpc.NewDataServer(data))
	proxyv1.RegisterDmlServiceServer(srv, proxyrpc.NewDMLServer(proxy.NewLocalDML(writer, data), core))
	proxyv1.RegisterImportServiceServer(srv, proxyrpc.NewImportServer(imp))
	q := coordQuery{query}
	querynodev1.RegisterQueryNodeServiceServer(srv, queryrpc.NewServer(q, q))
}
