package proxyrpc

import (
	"context"
	"log/slog"
	"sync"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// Catalog is a remote root coordinator as the proxy uses it: every role of
// proxy.Catalog, over CatalogService. Collections (by database and name or
// alias) and databases are resolved from a local cache, filled on a miss
// and dropped whole by Invalidate, which the coordinator calls (through
// ProxyService) before every DDL that changed them returns. A miss that
// fails returns the error; a "not found" is never cached, so a collection
// created through another proxy is seen at once.
type Catalog struct {
	c      proxyv1.CatalogServiceClient
	logger *slog.Logger

	mu    sync.Mutex
	gen   uint64 // bumped by Invalidate: a fill read before it is dropped
	colls map[[2]string]*catalog.Collection
	dbs   map[string]*catalog.DatabaseInfo
}

// NewCatalog returns a client of CatalogService over conn (the elected
// coordinator's connection).
func NewCatalog(conn grpc.ClientConnInterface, logger *slog.Logger) *Catalog {
	c := &Catalog{c: proxyv1.NewCatalogServiceClient(conn), logger: logger}
	c.reset()
	return c
}

func (c *Catalog) reset() {
	c.colls = map[[2]string]*catalog.Collection{}
	c.dbs = map[string]*catalog.DatabaseInfo{}
}

// Invalidate drops every cached collection and database: the next lookup
// of each asks the coordinator. A lookup in flight when it is called does
// not fill the cache with what it read.
func (c *Catalog) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.reset()
}

// Cached reports how many collections and databases are cached.
func (c *Catalog) Cached() (collections, databases int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.colls), len(c.dbs)
}

// cached returns m[key], or what fetch reads, which it stores in m unless
// Invalidate ran meanwhile.
func cached[K comparable, V any](c *Catalog, m func() map[K]V, key K, fetch func() (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := m()[key]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := fetch()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.gen == gen {
		m()[key] = v
	}
	c.mu.Unlock()
	return v, nil
}

// Collection implements proxy.CollectionResolver, from the cache.
func (c *Catalog) Collection(db, name string) (*catalog.Collection, error) {
	return cached(c, func() map[[2]string]*catalog.Collection { return c.colls }, [2]string{db, name},
		func() (*catalog.Collection, error) {
			resp, err := c.c.GetCollection(context.Background(), &proxyv1.GetCollectionRequest{Db: db, Name: name})
			if err != nil {
				return nil, err
			}
			return coordrpc.DecodeCollection(resp.GetCollection())
		})
}

// Collections implements proxy.CollectionResolver (not cached).
func (c *Catalog) Collections(ctx context.Context, db string) ([]*catalog.Collection, error) {
	resp, err := c.c.ListCollections(ctx, &proxyv1.ListCollectionsRequest{Db: db})
	if err != nil {
		return nil, err
	}
	return decodeCollections(resp.GetCollections())
}

// CreateCollectionPartitions implements proxy.CollectionDDL.
func (c *Catalog) CreateCollectionPartitions(ctx context.Context, db string, schema *schemapb.CollectionSchema, shards int,
	level commonpb.ConsistencyLevel, props map[string]string, numPartitions int,
) error {
	b, err := marshal("schema", schema)
	if err != nil {
		return err
	}
	_, err = c.c.CreateCollection(ctx, &proxyv1.CreateCollectionRequest{
		Db: db, Schema: b, Shards: int32(shards), ConsistencyLevel: int32(level), Properties: props,
		NumPartitions: int32(numPartitions),
	})
	return err
}

// DropCollection implements proxy.CollectionDDL.
func (c *Catalog) DropCollection(ctx context.Context, db, name string) (*catalog.Collection, error) {
	resp, err := c.c.DropCollection(ctx, &proxyv1.DropCollectionRequest{Db: db, Name: name})
	if err != nil {
		return nil, err
	}
	return coordrpc.DecodeCollection(resp.GetCollection())
}

// RenameCollection implements proxy.CollectionDDL.
func (c *Catalog) RenameCollection(ctx context.Context, db, oldName, newDB, newName string) error {
	_, err := c.c.RenameCollection(ctx, &proxyv1.RenameCollectionRequest{Db: db, OldName: oldName, NewDb: newDB, NewName: newName})
	return err
}

// AlterProperties implements proxy.CollectionDDL.
func (c *Catalog) AlterProperties(ctx context.Context, db, coll string, set map[string]string, del []string) error {
	_, err := c.c.AlterCollectionProperties(ctx, &proxyv1.AlterCollectionPropertiesRequest{Db: db, Collection: coll, Set: set, DeleteKeys: del})
	return err
}

// AddField implements proxy.CollectionDDL.
func (c *Catalog) AddField(ctx context.Context, db, coll string, f *schemapb.FieldSchema) (*catalog.Collection, error) {
	b, err := marshal("field", f)
	if err != nil {
		return nil, err
	}
	resp, err := c.c.AddField(ctx, &proxyv1.AddFieldRequest{Db: db, Collection: coll, Field: b})
	if err != nil {
		return nil, err
	}
	return coordrpc.DecodeCollection(resp.GetCollection())
}

// AlterField implements proxy.CollectionDDL.
func (c *Catalog) AlterField(ctx context.Context, db, coll, field string, set map[string]string, del []string, loaded bool) error {
	_, err := c.c.AlterField(ctx, &proxyv1.AlterFieldRequest{Db: db, Collection: coll, Field: field, Set: set, DeleteKeys: del, Loaded: loaded})
	return err
}

// EnableDynamicField implements proxy.CollectionDDL.
func (c *Catalog) EnableDynamicField(ctx context.Context, db, coll string) (*catalog.Collection, error) {
	resp, err := c.c.EnableDynamicField(ctx, &proxyv1.EnableDynamicFieldRequest{Db: db, Collection: coll})
	if err != nil {
		return nil, err
	}
	return coordrpc.DecodeCollection(resp.GetCollection())
}

// CreatePartition implements proxy.PartitionDDL.
func (c *Catalog) CreatePartition(ctx context.Context, db, coll, part string) error {
	_, err := c.c.CreatePartition(ctx, &proxyv1.CreatePartitionRequest{Db: db, Collection: coll, Partition: part})
	return err
}

// DropPartition implements proxy.PartitionDDL.
func (c *Catalog) DropPartition(ctx context.Context, db, coll, part string) (int64, error) {
	resp, err := c.c.DropPartition(ctx, &proxyv1.DropPartitionRequest{Db: db, Collection: coll, Partition: part})
	if err != nil {
		return 0, err
	}
	return resp.GetPartitionId(), nil
}

// SetLoaded implements proxy.LoadRecorder.
func (c *Catalog) SetLoaded(ctx context.Context, db, coll string, loaded bool, parts []int64) error {
	_, err := c.c.SetLoaded(ctx, &proxyv1.SetLoadedRequest{Db: db, Collection: coll, Loaded: loaded, PartitionIds: parts})
	return err
}

// Database implements proxy.DatabaseCatalog, from the cache.
func (c *Catalog) Database(name string) (*catalog.DatabaseInfo, error) {
	return cached(c, func() map[string]*catalog.DatabaseInfo { return c.dbs }, name,
		func() (*catalog.DatabaseInfo, error) {
			resp, err := c.c.GetDatabase(context.Background(), &proxyv1.GetDatabaseRequest{Name: name})
			if err != nil {
				return nil, err
			}
			info, err := coordrpc.DecodeRecord[catalog.DatabaseInfo]("database", resp.GetDatabase())
			if err != nil {
				return nil, err
			}
			return &info, nil
		})
}

// Databases implements proxy.DatabaseCatalog (not cached).
func (c *Catalog) Databases(ctx context.Context) ([]*catalog.DatabaseInfo, error) {
	resp, err := c.c.ListDatabases(ctx, &proxyv1.ListDatabasesRequest{})
	if err != nil {
		return nil, err
	}
	dbs, err := coordrpc.DecodeRecords[catalog.DatabaseInfo]("database", resp.GetDatabases())
	if err != nil {
		return nil, err
	}
	out := make([]*catalog.DatabaseInfo, len(dbs))
	for i := range dbs {
		out[i] = &dbs[i]
	}
	return out, nil
}

// CreateDatabase implements proxy.DatabaseCatalog.
func (c *Catalog) CreateDatabase(ctx context.Context, name string, props map[string]string) error {
	_, err := c.c.CreateDatabase(ctx, &proxyv1.CreateDatabaseRequest{Name: name, Properties: props})
	return err
}

// AlterDatabase implements proxy.DatabaseCatalog.
func (c *Catalog) AlterDatabase(ctx context.Context, name string, set map[string]string, deleteKeys []string) error {
	_, err := c.c.AlterDatabase(ctx, &proxyv1.AlterDatabaseRequest{Name: name, Set: set, DeleteKeys: deleteKeys})
	return err
}

// DropDatabase implements proxy.DatabaseCatalog.
func (c *Catalog) DropDatabase(ctx context.Context, name string) error {
	_, err := c.c.DropDatabase(ctx, &proxyv1.DropDatabaseRequest{Name: name})
	return err
}

// CreateAlias implements proxy.AliasCatalog.
func (c *Catalog) CreateAlias(ctx context.Context, db, alias, coll string) error {
	_, err := c.c.CreateAlias(ctx, &proxyv1.CreateAliasRequest{Db: db, Alias: alias, Collection: coll})
	return err
}

// AlterAlias implements proxy.AliasCatalog.
func (c *Catalog) AlterAlias(ctx context.Context, db, alias, coll string) error {
	_, err := c.c.AlterAlias(ctx, &proxyv1.AlterAliasRequest{Db: db, Alias: alias, Collection: coll})
	return err
}

// DropAlias implements proxy.AliasCatalog.
func (c *Catalog) DropAlias(ctx context.Context, db, alias string) error {
	_, err := c.c.DropAlias(ctx, &proxyv1.DropAliasRequest{Db: db, Alias: alias})
	return err
}

// DescribeAlias implements proxy.AliasCatalog.
func (c *Catalog) DescribeAlias(db, alias string) (string, error) {
	resp, err := c.c.DescribeAlias(context.Background(), &proxyv1.DescribeAliasRequest{Db: db, Alias: alias})
	if err != nil {
		return "", err
	}
	return resp.GetCollection(), nil
}

// ListAliases implements proxy.AliasCatalog.
func (c *Catalog) ListAliases(db, coll string) ([]string, error) {
	resp, err := c.c.ListAliases(context.Background(), &proxyv1.ListAliasesRequest{Db: db, Collection: coll})
	if err != nil {
		return nil, err
	}
	return resp.GetAliases(), nil
}

// AliasesOf implements proxy.AliasCatalog (not cached).
func (c *Catalog) AliasesOf(ctx context.Context, collectionID int64) ([]string, error) {
	resp, err := c.c.ListAliasesOf(ctx, &proxyv1.ListAliasesOfRequest{CollectionId: collectionID})
	if err != nil {
		return nil, err
	}
	return resp.GetAliases(), nil
}

// CheckDropCollection implements proxy.AliasCatalog.
func (c *Catalog) CheckDropCollection(db, name string) error {
	_, err := c.c.CheckDropCollection(context.Background(), &proxyv1.CheckDropCollectionRequest{Db: db, Name: name})
	return err
}
