package proxyrpc

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// RootCoord is the root coordinator as CatalogService serves it: every
// role of proxy.Catalog (the resolver, collection and partition DDL, the
// load recorder, databases and aliases), the contract proxy.RootCoord
// states.
type RootCoord interface {
	Collection(db, name string) (*catalog.Collection, error)
	Collections(ctx context.Context, db string) ([]*catalog.Collection, error)
	CreateCollectionPartitions(ctx context.Context, db string, schema *schemapb.CollectionSchema, shards int,
		level commonpb.ConsistencyLevel, props map[string]string, numPartitions int) error
	DropCollection(ctx context.Context, db, name string) (*catalog.Collection, error)
	RenameCollection(ctx context.Context, db, oldName, newDB, newName string) error
	AlterProperties(ctx context.Context, db, coll string, set map[string]string, del []string) error
	AddField(ctx context.Context, db, coll string, f *schemapb.FieldSchema) (*catalog.Collection, error)
	AlterField(ctx context.Context, db, coll, field string, set map[string]string, del []string, loaded bool) error
	EnableDynamicField(ctx context.Context, db, coll string) (*catalog.Collection, error)
	CreatePartition(ctx context.Context, db, coll, part string) error
	DropPartition(ctx context.Context, db, coll, part string) (int64, error)
	SetLoaded(ctx context.Context, db, coll string, loaded bool, parts []int64) error
	Database(name string) (*catalog.DatabaseInfo, error)
	Databases(ctx context.Context) ([]*catalog.DatabaseInfo, error)
	CreateDatabase(ctx context.Context, name string, props map[string]string) error
	AlterDatabase(ctx context.Context, name string, set map[string]string, deleteKeys []string) error
	DropDatabase(ctx context.Context, name string) error
	CreateAlias(ctx context.Context, db, alias, coll string) error
	AlterAlias(ctx context.Context, db, alias, coll string) error
	DropAlias(ctx context.Context, db, alias string) error
	DescribeAlias(db, alias string) (string, error)
	ListAliases(db, coll string) ([]string, error)
	AliasesOf(ctx context.Context, collectionID int64) ([]string, error)
	CheckDropCollection(db, name string) error
}

// CatalogServer serves CatalogService from the root coordinator. Register
// it on a server made by rpc.NewServer.
type CatalogServer struct {
	proxyv1.UnimplementedCatalogServiceServer
	root RootCoord
}

// NewCatalogServer returns a server over the root coordinator (the app
// passes the one whose DDL tells every proxy to drop its cache).
func NewCatalogServer(root RootCoord) *CatalogServer { return &CatalogServer{root: root} }

// collectionResponse encodes a collection.
func collectionBytes(c *catalog.Collection, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return coordrpc.EncodeCollection(c)
}

// GetCollection implements CatalogService.GetCollection.
func (s *CatalogServer) GetCollection(_ context.Context, req *proxyv1.GetCollectionRequest) (*proxyv1.GetCollectionResponse, error) {
	b, err := collectionBytes(s.root.Collection(req.GetDb(), req.GetName()))
	if err != nil {
		return nil, err
	}
	return &proxyv1.GetCollectionResponse{Collection: b}, nil
}

// ListCollections implements CatalogService.ListCollections.
func (s *CatalogServer) ListCollections(ctx context.Context, req *proxyv1.ListCollectionsRequest) (*proxyv1.ListCollectionsResponse, error) {
	cols, err := s.root.Collections(ctx, req.GetDb())
	if err != nil {
		return nil, err
	}
	bs, err := encodeCollections(cols)
	if err != nil {
		return nil, err
	}
	return &proxyv1.ListCollectionsResponse{Collections: bs}, nil
}

// CreateCollection implements CatalogService.CreateCollection.
func (s *CatalogServer) CreateCollection(ctx context.Context, req *proxyv1.CreateCollectionRequest) (*proxyv1.CreateCollectionResponse, error) {
	schema, err := unmarshal("schema", req.GetSchema(), &schemapb.CollectionSchema{})
	if err != nil {
		return nil, err
	}
	err = s.root.CreateCollectionPartitions(ctx, req.GetDb(), schema, int(req.GetShards()),
		commonpb.ConsistencyLevel(req.GetConsistencyLevel()), req.GetProperties(), int(req.GetNumPartitions()))
	if err != nil {
		return nil, err
	}
	return &proxyv1.CreateCollectionResponse{}, nil
}

// DropCollection implements CatalogService.DropCollection.
func (s *CatalogServer) DropCollection(ctx context.Context, req *proxyv1.DropCollectionRequest) (*proxyv1.DropCollectionResponse, error) {
	b, err := collectionBytes(s.root.DropCollection(ctx, req.GetDb(), req.GetName()))
	if err != nil {
		return nil, err
	}
	return &proxyv1.DropCollectionResponse{Collection: b}, nil
}

// RenameCollection implements CatalogService.RenameCollection.
func (s *CatalogServer) RenameCollection(ctx context.Context, req *proxyv1.RenameCollectionRequest) (*proxyv1.RenameCollectionResponse, error) {
	if err := s.root.RenameCollection(ctx, req.GetDb(), req.GetOldName(), req.GetNewDb(), req.GetNewName()); err != nil {
		return nil, err
	}
	return &proxyv1.RenameCollectionResponse{}, nil
}

// AlterCollectionProperties implements CatalogService.AlterCollectionProperties.
func (s *CatalogServer) AlterCollectionProperties(ctx context.Context, req *proxyv1.AlterCollectionPropertiesRequest) (*proxyv1.AlterCollectionPropertiesResponse, error) {
	if err := s.root.AlterProperties(ctx, req.GetDb(), req.GetCollection(), req.GetSet(), req.GetDeleteKeys()); err != nil {
		return nil, err
	}
	return &proxyv1.AlterCollectionPropertiesResponse{}, nil
}

// AddField implements CatalogService.AddField.
func (s *CatalogServer) AddField(ctx context.Context, req *proxyv1.AddFieldRequest) (*proxyv1.AddFieldResponse, error) {
	f, err := unmarshal("field", req.GetField(), &schemapb.FieldSchema{})
	if err != nil {
		return nil, err
	}
	b, err := collectionBytes(s.root.AddField(ctx, req.GetDb(), req.GetCollection(), f))
	if err != nil {
		return nil, err
	}
	return &proxyv1.AddFieldResponse{Collection: b}, nil
}

// AlterField implements CatalogService.AlterField.
func (s *CatalogServer) AlterField(ctx context.Context, req *proxyv1.AlterFieldRequest) (*proxyv1.AlterFieldResponse, error) {
	err := s.root.AlterField(ctx, req.GetDb(), req.GetCollection(), req.GetField(), req.GetSet(), req.GetDeleteKeys(), req.GetLoaded())
	if err != nil {
		return nil, err
	}
	return &proxyv1.AlterFieldResponse{}, nil
}

// EnableDynamicField implements CatalogService.EnableDynamicField.
func (s *CatalogServer) EnableDynamicField(ctx context.Context, req *proxyv1.EnableDynamicFieldRequest) (*proxyv1.EnableDynamicFieldResponse, error) {
	b, err := collectionBytes(s.root.EnableDynamicField(ctx, req.GetDb(), req.GetCollection()))
	if err != nil {
		return nil, err
	}
	return &proxyv1.EnableDynamicFieldResponse{Collection: b}, nil
}

// CreatePartition implements CatalogService.CreatePartition.
func (s *CatalogServer) CreatePartition(ctx context.Context, req *proxyv1.CreatePartitionRequest) (*proxyv1.CreatePartitionResponse, error) {
	if err := s.root.CreatePartition(ctx, req.GetDb(), req.GetCollection(), req.GetPartition()); err != nil {
		return nil, err
	}
	return &proxyv1.CreatePartitionResponse{}, nil
}

// DropPartition implements CatalogService.DropPartition.
func (s *CatalogServer) DropPartition(ctx context.Context, req *proxyv1.DropPartitionRequest) (*proxyv1.DropPartitionResponse, error) {
	id, err := s.root.DropPartition(ctx, req.GetDb(), req.GetCollection(), req.GetPartition())
	if err != nil {
		return nil, err
	}
	return &proxyv1.DropPartitionResponse{PartitionId: id}, nil
}

// SetLoaded implements CatalogService.SetLoaded.
func (s *CatalogServer) SetLoaded(ctx context.Context, req *proxyv1.SetLoadedRequest) (*proxyv1.SetLoadedResponse, error) {
	if err := s.root.SetLoaded(ctx, req.GetDb(), req.GetCollection(), req.GetLoaded(), req.GetPartitionIds()); err != nil {
		return nil, err
	}
	return &proxyv1.SetLoadedResponse{}, nil
}

// GetDatabase implements CatalogService.GetDatabase.
func (s *CatalogServer) GetDatabase(_ context.Context, req *proxyv1.GetDatabaseRequest) (*proxyv1.GetDatabaseResponse, error) {
	db, err := s.root.Database(req.GetName())
	if err != nil {
		return nil, err
	}
	b, err := coordrpc.EncodeRecord("database", db)
	if err != nil {
		return nil, err
	}
	return &proxyv1.GetDatabaseResponse{Database: b}, nil
}

// ListDatabases implements CatalogService.ListDatabases.
func (s *CatalogServer) ListDatabases(ctx context.Context, _ *proxyv1.ListDatabasesRequest) (*proxyv1.ListDatabasesResponse, error) {
	dbs, err := s.root.Databases(ctx)
	if err != nil {
		return nil, err
	}
	bs, err := coordrpc.EncodeRecords("database", dbs)
	if err != nil {
		return nil, err
	}
	return &proxyv1.ListDatabasesResponse{Databases: bs}, nil
}

// CreateDatabase implements CatalogService.CreateDatabase.
func (s *CatalogServer) CreateDatabase(ctx context.Context, req *proxyv1.CreateDatabaseRequest) (*proxyv1.CreateDatabaseResponse, error) {
	if err := s.root.CreateDatabase(ctx, req.GetName(), req.GetProperties()); err != nil {
		return nil, err
	}
	return &proxyv1.CreateDatabaseResponse{}, nil
}

// AlterDatabase implements CatalogService.AlterDatabase.
func (s *CatalogServer) AlterDatabase(ctx context.Context, req *proxyv1.AlterDatabaseRequest) (*proxyv1.AlterDatabaseResponse, error) {
	if err := s.root.AlterDatabase(ctx, req.GetName(), req.GetSet(), req.GetDeleteKeys()); err != nil {
		return nil, err
	}
	return &proxyv1.AlterDatabaseResponse{}, nil
}

// DropDatabase implements CatalogService.DropDatabase.
func (s *CatalogServer) DropDatabase(ctx context.Context, req *proxyv1.DropDatabaseRequest) (*proxyv1.DropDatabaseResponse, error) {
	if err := s.root.DropDatabase(ctx, req.GetName()); err != nil {
		return nil, err
	}
	return &proxyv1.DropDatabaseResponse{}, nil
}

// CreateAlias implements CatalogService.CreateAlias.
func (s *CatalogServer) CreateAlias(ctx context.Context, req *proxyv1.CreateAliasRequest) (*proxyv1.CreateAliasResponse, error) {
	if err := s.root.CreateAlias(ctx, req.GetDb(), req.GetAlias(), req.GetCollection()); err != nil {
		return nil, err
	}
	return &proxyv1.CreateAliasResponse{}, nil
}

// AlterAlias implements CatalogService.AlterAlias.
func (s *CatalogServer) AlterAlias(ctx context.Context, req *proxyv1.AlterAliasRequest) (*proxyv1.AlterAliasResponse, error) {
	if err := s.root.AlterAlias(ctx, req.GetDb(), req.GetAlias(), req.GetCollection()); err != nil {
		return nil, err
	}
	return &proxyv1.AlterAliasResponse{}, nil
}

// DropAlias implements CatalogService.DropAlias.
func (s *CatalogServer) DropAlias(ctx context.Context, req *proxyv1.DropAliasRequest) (*proxyv1.DropAliasResponse, error) {
	if err := s.root.DropAlias(ctx, req.GetDb(), req.GetAlias()); err != nil {
		return nil, err
	}
	return &proxyv1.DropAliasResponse{}, nil
}

// DescribeAlias implements CatalogService.DescribeAlias.
func (s *CatalogServer) DescribeAlias(_ context.Context, req *proxyv1.DescribeAliasRequest) (*proxyv1.DescribeAliasResponse, error) {
	coll, err := s.root.DescribeAlias(req.GetDb(), req.GetAlias())
	if err != nil {
		return nil, err
	}
	return &proxyv1.DescribeAliasResponse{Collection: coll}, nil
}

// ListAliases implements CatalogService.ListAliases.
func (s *CatalogServer) ListAliases(_ context.Context, req *proxyv1.ListAliasesRequest) (*proxyv1.ListAliasesResponse, error) {
	as, err := s.root.ListAliases(req.GetDb(), req.GetCollection())
	if err != nil {
		return nil, err
	}
	return &proxyv1.ListAliasesResponse{Aliases: as}, nil
}

// ListAliasesOf implements CatalogService.ListAliasesOf.
func (s *CatalogServer) ListAliasesOf(ctx context.Context, req *proxyv1.ListAliasesOfRequest) (*proxyv1.ListAliasesOfResponse, error) {
	aliases, err := s.root.AliasesOf(ctx, req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	return &proxyv1.ListAliasesOfResponse{Aliases: aliases}, nil
}

// CheckDropCollection implements CatalogService.CheckDropCollection.
func (s *CatalogServer) CheckDropCollection(_ context.Context, req *proxyv1.CheckDropCollectionRequest) (*proxyv1.CheckDropCollectionResponse, error) {
	if err := s.root.CheckDropCollection(req.GetDb(), req.GetName()); err != nil {
		return nil, err
	}
	return &proxyv1.CheckDropCollectionResponse{}, nil
}
