package rootcoord

import (
	"context"
	"fmt"
	"sort"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
)

// DefaultDatabase always exists and cannot be dropped.
const DefaultDatabase = "default"

// MaxDatabases is the default of Limits.MaxDatabases (Milvus rootCoord.maxDatabaseNum).
const MaxDatabases = 64

// loadNames loads the database and alias records. Databases that collections
// name but that have no record (meta written before databases existed) are
// added in memory, like "default".
func (c *Core) loadNames(ctx context.Context) error {
	c.dbs = map[string]*catalog.DatabaseInfo{DefaultDatabase: {Name: DefaultDatabase}}
	c.aliases = map[string]*catalog.AliasInfo{}
	kvs, err := c.kv.Scan(ctx, catalog.DatabasePrefix)
	if err != nil {
		return fmt.Errorf("rootcoord: load databases: %w", err)
	}
	for _, e := range kvs {
		var db catalog.DatabaseInfo
		if err := catalog.Unmarshal(e.Value, &db); err != nil {
			return fmt.Errorf("rootcoord: decode database %s: %w", e.Key, err)
		}
		c.dbs[db.Name] = &db
	}
	for _, col := range c.byID {
		if _, ok := c.dbs[col.DBName]; !ok {
			c.dbs[col.DBName] = &catalog.DatabaseInfo{Name: col.DBName, CreatedTS: col.CreatedTS}
		}
	}
	kvs, err = c.kv.Scan(ctx, catalog.AliasPrefix)
	if err != nil {
		return fmt.Errorf("rootcoord: load aliases: %w", err)
	}
	for _, e := range kvs {
		var a catalog.AliasInfo
		if err := catalog.Unmarshal(e.Value, &a); err != nil {
			return fmt.Errorf("rootcoord: decode alias %s: %w", e.Key, err)
		}
		if _, ok := c.byID[a.CollectionID]; !ok {
			continue // its collection was dropped
		}
		c.aliases[nameKey(a.DBName, a.Name)] = &a
	}
	return nil
}

func errDatabaseNotFound(db string) error {
	return errcode.New(errcode.DatabaseNotFound, "database not found[database=%s]", dbOrDefault(db))
}

// Database returns a database's record.
func (c *Core) Database(name string) (*catalog.DatabaseInfo, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	db, ok := c.dbs[dbOrDefault(name)]
	if !ok {
		return nil, errDatabaseNotFound(name)
	}
	cp := *db
	return &cp, nil
}

// Databases lists the databases, sorted by name. The error is always nil
// in process (proxy.DatabaseCatalog's signature).
func (c *Core) Databases(context.Context) ([]*catalog.DatabaseInfo, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*catalog.DatabaseInfo, 0, len(c.dbs))
	for _, db := range c.dbs {
		cp := *db
		out = append(out, &cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CreateDatabase creates an empty database.
func (c *Core) CreateDatabase(ctx context.Context, name string, props map[string]string) error {
	if err := catalog.ValidateName("database", name); err != nil {
		return err
	}
	if err := checkTimezoneProps(props); err != nil {
		return err
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	c.mu.RLock()
	_, exists := c.dbs[name]
	n := len(c.dbs)
	c.mu.RUnlock()
	if exists {
		return errcode.Invalid("database already exist: %s", name)
	}
	if n >= c.cfg.MaxDatabases {
		return errcode.New(errcode.DatabaseNumLimit, "exceeded the limit number of database[limit=%d]", c.cfg.MaxDatabases)
	}
	id, err := c.ids.Allocate(ctx, 1)
	if err != nil {
		return fmt.Errorf("rootcoord: allocate id: %w", err)
	}
	ts, err := c.tso.Allocate(ctx, 1)
	if err != nil {
		return fmt.Errorf("rootcoord: allocate timestamp: %w", err)
	}
	return c.saveDatabase(ctx, &catalog.DatabaseInfo{ID: int64(id), Name: name, Properties: props, CreatedTS: ts})
}

func (c *Core) saveDatabase(ctx context.Context, db *catalog.DatabaseInfo) error {
	b, err := catalog.Marshal(db)
	if err != nil {
		return err
	}
	if err := c.kv.Txn(ctx, metastore.Put(catalog.DatabaseKey(db.Name), b)); err != nil {
		return fmt.Errorf("rootcoord: save database %s: %w", db.Name, err)
	}
	c.mu.Lock()
	c.dbs[db.Name] = db
	c.mu.Unlock()
	return nil
}

// AlterDatabase sets and deletes database properties.
func (c *Core) AlterDatabase(ctx context.Context, name string, set map[string]string, deleteKeys []string) error {
	if err := checkTimezoneProps(set); err != nil {
		return err
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	old, err := c.Database(name)
	if err != nil {
		return err
	}
	props := map[string]string{}
	for k, v := range old.Properties {
		props[k] = v
	}
	for k, v := range set {
		props[k] = v
	}
	for _, k := range deleteKeys {
		delete(props, k)
	}
	old.Properties = props
	return c.saveDatabase(ctx, old)
}

// DropDatabase drops an empty database. "default" cannot be dropped;
// dropping a missing database succeeds, as in Milvus.
func (c *Core) DropDatabase(ctx context.Context, name string) error {
	if dbOrDefault(name) == DefaultDatabase {
		return errcode.Invalid("can not drop default database")
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	c.mu.RLock()
	_, exists := c.dbs[name]
	c.mu.RUnlock()
	if !exists {
		return nil
	}
	if cols := c.collections(name); len(cols) > 0 {
		return errcode.Invalid("database:%s not empty, must drop all collections before drop database", name)
	}
	if err := c.kv.Txn(ctx, metastore.Delete(catalog.DatabaseKey(name))); err != nil {
		return fmt.Errorf("rootcoord: drop database %s: %w", name, err)
	}
	c.mu.Lock()
	delete(c.dbs, name)
	c.mu.Unlock()
	return nil
}

// aliasTargetLocked resolves an alias to its collection; c.mu is held.
func (c *Core) aliasTargetLocked(db, alias string) (*catalog.Collection, bool) {
	a, ok := c.aliases[nameKey(db, alias)]
	if !ok {
		return nil, false
	}
	col, ok := c.byID[a.CollectionID]
	return col, ok
}

// AliasTarget returns the name of the collection an alias points to.
func (c *Core) AliasTarget(db, alias string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	col, ok := c.aliasTargetLocked(db, alias)
	if !ok {
		return "", false
	}
	return col.Name, true
}

// AliasesOf lists the aliases of a collection, sorted. The error is always
// nil in process (proxy.AliasCatalog's signature).
func (c *Core) AliasesOf(_ context.Context, collectionID int64) ([]string, error) {
	return c.aliasesOf(collectionID), nil
}

// aliasesOf lists the aliases of a collection, sorted.
func (c *Core) aliasesOf(collectionID int64) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := []string{}
	for _, a := range c.aliases {
		if a.CollectionID == collectionID {
			out = append(out, a.Name)
		}
	}
	sort.Strings(out)
	return out
}

// realCollection finds a collection by its own name (not an alias).
func (c *Core) realCollection(db, name string) (*catalog.Collection, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, ok := c.dbs[dbOrDefault(db)]; !ok {
		return nil, errDatabaseNotFound(db)
	}
	id, ok := c.byName[nameKey(db, name)]
	if !ok {
		return nil, errcode.New(errcode.CollectionNotFound, "collection not found[database=%s][collection=%s]", dbOrDefault(db), name)
	}
	return c.byID[id], nil
}

// CreateAlias binds alias to a collection of the same database. Creating an
// alias that already points to that collection succeeds.
func (c *Core) CreateAlias(ctx context.Context, db, alias, coll string) error {
	if err := catalog.ValidateName("alias", alias); err != nil {
		return err
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	col, err := c.realCollection(db, coll)
	if err != nil {
		return err
	}
	c.mu.RLock()
	_, clash := c.byName[nameKey(db, alias)]
	old, exists := c.aliases[nameKey(db, alias)]
	c.mu.RUnlock()
	if clash {
		return errcode.New(errcode.AliasNameConflict, "alias and collection name conflict[database=%s][alias=%s]",
			dbOrDefault(db), alias)
	}
	if exists {
		if old.CollectionID == col.ID {
			return nil
		}
		target := fmt.Sprint(old.CollectionID)
		if oc, err := c.CollectionByID(old.CollectionID); err == nil {
			target = oc.Name
		}
		return errcode.New(errcode.AliasAlreadyExists, "%s is alias to another collection: %s: alias already exist[database=%s][alias=%s]",
			alias, target, dbOrDefault(db), alias)
	}
	return c.saveAlias(ctx, &catalog.AliasInfo{DBName: dbOrDefault(db), Name: alias, CollectionID: col.ID})
}

// AlterAlias points an existing alias at another collection.
func (c *Core) AlterAlias(ctx context.Context, db, alias, coll string) error {
	c.ddl.Lock()
	defer c.ddl.Unlock()
	col, err := c.realCollection(db, coll)
	if err != nil {
		return err
	}
	c.mu.RLock()
	old, exists := c.aliases[nameKey(db, alias)]
	_, clash := c.byName[nameKey(db, alias)]
	c.mu.RUnlock()
	if clash {
		return errcode.New(errcode.AliasNameConflict, "alias and collection name conflict[database=%s][alias=%s]",
			dbOrDefault(db), alias)
	}
	if !exists {
		return errcode.New(errcode.AliasNotFound, "alias not found[database=%s][alias=%s]", dbOrDefault(db), alias)
	}
	a := *old
	a.CollectionID = col.ID
	return c.saveAlias(ctx, &a)
}

func (c *Core) saveAlias(ctx context.Context, a *catalog.AliasInfo) error {
	ts, err := c.tso.Allocate(ctx, 1)
	if err != nil {
		return fmt.Errorf("rootcoord: allocate timestamp: %w", err)
	}
	a.CreatedTS = ts
	b, err := catalog.Marshal(a)
	if err != nil {
		return err
	}
	if err := c.kv.Txn(ctx, metastore.Put(catalog.AliasKey(a.DBName, a.Name), b)); err != nil {
		return fmt.Errorf("rootcoord: save alias %s: %w", a.Name, err)
	}
	c.mu.Lock()
	c.aliases[nameKey(a.DBName, a.Name)] = a
	c.mu.Unlock()
	return nil
}

// DropAlias removes an alias; dropping a missing alias succeeds.
func (c *Core) DropAlias(ctx context.Context, db, alias string) error {
	c.ddl.Lock()
	defer c.ddl.Unlock()
	if _, err := c.Database(db); err != nil {
		return err
	}
	return c.dropAliasLocked(ctx, dbOrDefault(db), alias)
}

func (c *Core) dropAliasLocked(ctx context.Context, db, alias string) error {
	c.mu.RLock()
	_, exists := c.aliases[nameKey(db, alias)]
	c.mu.RUnlock()
	if !exists {
		return nil
	}
	if err := c.kv.Txn(ctx, metastore.Delete(catalog.AliasKey(db, alias))); err != nil {
		return fmt.Errorf("rootcoord: drop alias %s: %w", alias, err)
	}
	c.mu.Lock()
	delete(c.aliases, nameKey(db, alias))
	c.mu.Unlock()
	return nil
}

// DescribeAlias returns the name of the collection an alias points to.
func (c *Core) DescribeAlias(db, alias string) (string, error) {
	if _, err := c.Database(db); err != nil {
		return "", err
	}
	name, ok := c.AliasTarget(db, alias)
	if !ok {
		return "", errcode.New(errcode.AliasNotFound, "alias not found[database=%s][alias=%s]", dbOrDefault(db), alias)
	}
	return name, nil
}

// ListAliases lists the aliases of a database, or of one collection in it.
func (c *Core) ListAliases(db, coll string) ([]string, error) {
	if coll != "" {
		col, err := c.realCollection(db, coll)
		if err != nil {
			return nil, err
		}
		return c.aliasesOf(col.ID), nil
	}
	if _, err := c.Database(db); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := []string{}
	for _, a := range c.aliases {
		if a.DBName == dbOrDefault(db) {
			out = append(out, a.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkDropCollection refuses to drop a collection through an alias, or one
// that still has aliases (as Milvus does).
func (c *Core) checkDropCollection(db, name string) error {
	if _, ok := c.AliasTarget(db, name); ok {
		return errcode.Invalid("cannot drop the collection via alias = %s", name)
	}
	col, err := c.realCollection(db, name)
	if err != nil {
		return nil //nolint:nilerr // a missing collection is the caller's business
	}
	if aliases := c.aliasesOf(col.ID); len(aliases) > 0 {
		return errcode.Invalid("unable to drop the collection [%s] because it has associated aliases %v, please remove all aliases before dropping the collection", name, aliases)
	}
	return nil
}

// CheckDropCollection reports whether DropCollection would refuse name
// because it is an alias or has aliases.
func (c *Core) CheckDropCollection(db, name string) error { return c.checkDropCollection(db, name) }

// RenameCollection renames a collection, possibly into another database
// (newDB "" keeps it in db). Aliases follow the collection within its
// database; moving a collection that has aliases to another database is
// refused. Nodes address collections by ID, so nothing is announced.
func (c *Core) RenameCollection(ctx context.Context, db, oldName, newDB, newName string) error {
	if err := catalog.ValidateName("collection", newName); err != nil {
		return err
	}
	if newDB == "" {
		newDB = db
	}
	db, newDB = dbOrDefault(db), dbOrDefault(newDB)
	c.ddl.Lock()
	defer c.ddl.Unlock()
	old, err := c.realCollection(db, oldName)
	if err != nil {
		return err
	}
	if _, err := c.Database(newDB); err != nil {
		return err
	}
	if _, err := c.realCollection(newDB, newName); err == nil {
		return errcode.Invalid("duplicated new collection name %s in database %s", newName, newDB)
	}
	if _, isAlias := c.AliasTarget(newDB, newName); isAlias {
		return errcode.Invalid("cannot rename collection to an existing alias: %s", newName)
	}
	if newDB != db && len(c.aliasesOf(old.ID)) > 0 {
		return errcode.Invalid("cannot move collection %s with aliases to another database, drop its aliases first", oldName)
	}
	col := *old
	col.Partitions = append([]catalog.PartitionInfo(nil), old.Partitions...)
	col.LoadedPartitions = append([]int64(nil), old.LoadedPartitions...)
	col.Schema = proto.Clone(old.Schema).(*schemapb.CollectionSchema)
	col.Schema.Name = newName
	raw, err := proto.Marshal(col.Schema)
	if err != nil {
		return fmt.Errorf("rootcoord: encode schema: %w", err)
	}
	col.CollectionInfo.Schema = raw
	col.Name, col.DBName = newName, newDB
	if err := c.save(ctx, &col); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.byName, nameKey(db, oldName))
	c.mu.Unlock()
	return nil
}
