package proxyrpc

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
)

// Notifying returns root whose DDL that changes collections, databases,
// aliases or load records calls notify (Notifier.Invalidate: every live
// proxy drops its metadata cache) before it returns, whether it failed or
// not (a failed DDL may have applied part of itself). Reads pass through.
// The coordinator serves it to the proxies (CatalogServer) and to its own
// API alike.
func Notifying(root RootCoord, notify func(ctx context.Context, db, coll, ddl string)) RootCoord {
	return notifying{RootCoord: root, notify: notify}
}

// notifying is Notifying's root coordinator.
type notifying struct {
	RootCoord
	notify func(ctx context.Context, db, coll, ddl string)
}

func (r notifying) CreateCollectionPartitions(ctx context.Context, db string, schema *schemapb.CollectionSchema, shards int,
	level commonpb.ConsistencyLevel, props map[string]string, numPartitions int,
) error {
	defer r.notify(ctx, db, schema.GetName(), "CreateCollection")
	return r.RootCoord.CreateCollectionPartitions(ctx, db, schema, shards, level, props, numPartitions)
}

func (r notifying) DropCollection(ctx context.Context, db, name string) (*catalog.Collection, error) {
	defer r.notify(ctx, db, name, "DropCollection")
	return r.RootCoord.DropCollection(ctx, db, name)
}

func (r notifying) RenameCollection(ctx context.Context, db, oldName, newDB, newName string) error {
	defer r.notify(ctx, db, oldName, "RenameCollection")
	return r.RootCoord.RenameCollection(ctx, db, oldName, newDB, newName)
}

func (r notifying) AlterProperties(ctx context.Context, db, coll string, set map[string]string, del []string) error {
	defer r.notify(ctx, db, coll, "AlterCollectionProperties")
	return r.RootCoord.AlterProperties(ctx, db, coll, set, del)
}

func (r notifying) AddField(ctx context.Context, db, coll string, f *schemapb.FieldSchema) (*catalog.Collection, error) {
	defer r.notify(ctx, db, coll, "AddField")
	return r.RootCoord.AddField(ctx, db, coll, f)
}

func (r notifying) AlterField(ctx context.Context, db, coll, field string, set map[string]string, del []string, loaded bool) error {
	defer r.notify(ctx, db, coll, "AlterField")
	return r.RootCoord.AlterField(ctx, db, coll, field, set, del, loaded)
}

func (r notifying) EnableDynamicField(ctx context.Context, db, coll string) (*catalog.Collection, error) {
	defer r.notify(ctx, db, coll, "EnableDynamicField")
	return r.RootCoord.EnableDynamicField(ctx, db, coll)
}

func (r notifying) CreatePartition(ctx context.Context, db, coll, part string) error {
	defer r.notify(ctx, db, coll, "CreatePartition")
	return r.RootCoord.CreatePartition(ctx, db, coll, part)
}

func (r notifying) DropPartition(ctx context.Context, db, coll, part string) (int64, error) {
	defer r.notify(ctx, db, coll, "DropPartition")
	return r.RootCoord.DropPartition(ctx, db, coll, part)
}

func (r notifying) SetLoaded(ctx context.Context, db, coll string, loaded bool, parts []int64) error {
	defer r.notify(ctx, db, coll, "SetLoaded")
	return r.RootCoord.SetLoaded(ctx, db, coll, loaded, parts)
}

func (r notifying) CreateDatabase(ctx context.Context, name string, props map[string]string) error {
	defer r.notify(ctx, name, "", "CreateDatabase")
	return r.RootCoord.CreateDatabase(ctx, name, props)
}

func (r notifying) AlterDatabase(ctx context.Context, name string, set map[string]string, deleteKeys []string) error {
	defer r.notify(ctx, name, "", "AlterDatabase")
	return r.RootCoord.AlterDatabase(ctx, name, set, deleteKeys)
}

func (r notifying) DropDatabase(ctx context.Context, name string) error {
	defer r.notify(ctx, name, "", "DropDatabase")
	return r.RootCoord.DropDatabase(ctx, name)
}

func (r notifying) CreateAlias(ctx context.Context, db, alias, coll string) error {
	defer r.notify(ctx, db, coll, "CreateAlias")
	return r.RootCoord.CreateAlias(ctx, db, alias, coll)
}

func (r notifying) AlterAlias(ctx context.Context, db, alias, coll string) error {
	defer r.notify(ctx, db, coll, "AlterAlias")
	return r.RootCoord.AlterAlias(ctx, db, alias, coll)
}

func (r notifying) DropAlias(ctx context.Context, db, alias string) error {
	defer r.notify(ctx, db, alias, "DropAlias")
	return r.RootCoord.DropAlias(ctx, db, alias)
}
