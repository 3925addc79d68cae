package proxy

import (
	"context"
	"slices"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

func propsMap(kvs []*commonpb.KeyValuePair) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.GetKey()] = kv.GetValue()
	}
	return out
}

func propsList(m map[string]string) []*commonpb.KeyValuePair {
	out := []*commonpb.KeyValuePair{}
	for _, k := range sortedKeys(m) {
		out = append(out, &commonpb.KeyValuePair{Key: k, Value: m[k]})
	}
	return out
}

// validAliasCall checks the forms of an alias and of the collection it is
// to point to, the alias first, as Milvus does before creating or altering
// an alias.
func validAliasCall(alias, coll string) error {
	if err := catalog.ValidateName("alias", alias); err != nil {
		return err
	}
	return catalog.ValidateName("collection", coll)
}

// CreateDatabase creates a database.
func (p *Proxy) CreateDatabase(ctx context.Context, req *milvuspb.CreateDatabaseRequest) (*commonpb.Status, error) {
	return errcode.Status(p.meta.CreateDatabase(ctx, req.GetDbName(), propsMap(req.GetProperties()))), nil
}

// DropDatabase drops an empty database other than "default".
func (p *Proxy) DropDatabase(ctx context.Context, req *milvuspb.DropDatabaseRequest) (*commonpb.Status, error) {
	if err := catalog.ValidateName("database", req.GetDbName()); err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.meta.DropDatabase(ctx, req.GetDbName())), nil
}

// ListDatabases lists the databases.
func (p *Proxy) ListDatabases(ctx context.Context, _ *milvuspb.ListDatabasesRequest) (*milvuspb.ListDatabasesResponse, error) {
	dbs, err := p.meta.Databases(ctx)
	if err != nil {
		return &milvuspb.ListDatabasesResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.ListDatabasesResponse{Status: ok()}
	var names []string
	for _, db := range dbs {
		names = append(names, db.Name)
	}
	visible := p.visibleDatabases(ctx, names)
	for _, db := range dbs {
		if !slices.Contains(visible, db.Name) {
			continue
		}
		resp.DbNames = append(resp.DbNames, db.Name)
		resp.CreatedTimestamp = append(resp.CreatedTimestamp, db.CreatedTS)
		resp.DbIds = append(resp.DbIds, db.ID)
	}
	return resp, nil
}

// DescribeDatabase returns a database's ID, creation time and properties.
func (p *Proxy) DescribeDatabase(ctx context.Context, req *milvuspb.DescribeDatabaseRequest) (*milvuspb.DescribeDatabaseResponse, error) {
	db, err := p.meta.Database(dbName(ctx, req.GetDbName()))
	if err != nil {
		return &milvuspb.DescribeDatabaseResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.DescribeDatabaseResponse{
		Status: ok(), DbName: db.Name, DbID: db.ID,
		CreatedTimestamp: db.CreatedTS, Properties: propsList(db.Properties),
	}, nil
}

// AlterDatabase sets or deletes database properties.
func (p *Proxy) AlterDatabase(ctx context.Context, req *milvuspb.AlterDatabaseRequest) (*commonpb.Status, error) {
	return errcode.Status(p.meta.AlterDatabase(ctx, dbName(ctx, req.GetDbName()), propsMap(req.GetProperties()), req.GetDeleteKeys())), nil
}

// CreateAlias binds an alias to a collection.
func (p *Proxy) CreateAlias(ctx context.Context, req *milvuspb.CreateAliasRequest) (*commonpb.Status, error) {
	if err := validAliasCall(req.GetAlias(), req.GetCollectionName()); err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.meta.CreateAlias(ctx, dbName(ctx, req.GetDbName()), req.GetAlias(), req.GetCollectionName())), nil
}

// DropAlias removes an alias.
func (p *Proxy) DropAlias(ctx context.Context, req *milvuspb.DropAliasRequest) (*commonpb.Status, error) {
	if err := catalog.ValidateName("alias", req.GetAlias()); err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.meta.DropAlias(ctx, dbName(ctx, req.GetDbName()), req.GetAlias())), nil
}

// AlterAlias points an alias at another collection.
func (p *Proxy) AlterAlias(ctx context.Context, req *milvuspb.AlterAliasRequest) (*commonpb.Status, error) {
	if err := validAliasCall(req.GetAlias(), req.GetCollectionName()); err != nil {
		return errcode.Status(err), nil
	}
	db := dbName(ctx, req.GetDbName())
	if _, err := p.meta.Collection(db, req.GetCollectionName()); errcode.CodeOf(err) == errcode.CollectionNotFound {
		// Milvus's alter_alias names only the collection it cannot find.
		return errcode.Status(errcode.New(errcode.CollectionNotFound, "collection not found[collection=%s]", req.GetCollectionName())), nil
	}
	return errcode.Status(p.meta.AlterAlias(ctx, db, req.GetAlias(), req.GetCollectionName())), nil
}

// DescribeAlias returns the collection an alias points to.
func (p *Proxy) DescribeAlias(ctx context.Context, req *milvuspb.DescribeAliasRequest) (*milvuspb.DescribeAliasResponse, error) {
	if err := catalog.ValidateName("alias", req.GetAlias()); err != nil {
		return &milvuspb.DescribeAliasResponse{Status: errcode.Status(err)}, nil
	}
	db := dbName(ctx, req.GetDbName())
	coll, err := p.meta.DescribeAlias(db, req.GetAlias())
	if err != nil {
		return &milvuspb.DescribeAliasResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.DescribeAliasResponse{Status: ok(), DbName: db, Alias: req.GetAlias(), Collection: coll}, nil
}

// ListAliases lists the aliases of a database or of one collection.
func (p *Proxy) ListAliases(ctx context.Context, req *milvuspb.ListAliasesRequest) (*milvuspb.ListAliasesResponse, error) {
	if req.GetCollectionName() != "" {
		if err := catalog.ValidateName("collection", req.GetCollectionName()); err != nil {
			return &milvuspb.ListAliasesResponse{Status: errcode.Status(err)}, nil
		}
	}
	db := dbName(ctx, req.GetDbName())
	aliases, err := p.meta.ListAliases(db, req.GetCollectionName())
	if err != nil {
		return &milvuspb.ListAliasesResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.ListAliasesResponse{Status: ok(), DbName: db, CollectionName: req.GetCollectionName(), Aliases: aliases}, nil
}

// RenameCollection renames a collection, possibly into another database.
func (p *Proxy) RenameCollection(ctx context.Context, req *milvuspb.RenameCollectionRequest) (*commonpb.Status, error) {
	db := dbName(ctx, req.GetDbName())
	return errcode.Status(p.meta.RenameCollection(ctx, db, req.GetOldName(), req.GetNewDBName(), req.GetNewName())), nil
}
