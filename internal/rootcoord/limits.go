package rootcoord

import (
	"fmt"
	"strconv"

	"github.com/strata-db/strata/internal/errcode"
)

// MaxCollectionsProperty is the database property that overrides
// Limits.MaxCollectionsPerDB for one database (Milvus's
// common.DatabaseMaxCollectionsKey).
const MaxCollectionsProperty = "database.max.collections"

// Limits bounds the catalog and schemas; every field defaults to Milvus
// 2.6's value and names its Milvus key. The limit messages and codes are
// Milvus's.
type Limits struct {
	// MaxCollections limits the collections of all databases together
	// (quotaAndLimits.limits.maxCollectionNum, 65536; code 102).
	MaxCollections int `json:"maxCollections"`
	// MaxCollectionsPerDB limits the collections of one database
	// (quotaAndLimits.limits.maxCollectionNumPerDB, 65536; code 102). A
	// database's "database.max.collections" property overrides it.
	MaxCollectionsPerDB int `json:"maxCollectionsPerDB"`
	// MaxDatabases limits the databases, default included
	// (rootCoord.maxDatabaseNum, 64; code 801).
	MaxDatabases int `json:"maxDatabases"`
	// MaxPartitions limits the partitions of a collection, _default
	// included (rootCoord.maxPartitionNum, 1024; code 1100).
	MaxPartitions int `json:"maxPartitions"`
	// MaxFields limits the fields of a schema (proxy.maxFieldNum, 64).
	MaxFields int `json:"maxFields"`
	// MaxVectorFields limits the vector fields of a schema
	// (proxy.maxVectorFieldNum, 4).
	MaxVectorFields int `json:"maxVectorFields"`
	// MaxShards limits the shards of a collection (proxy.maxShardNum, 16).
	MaxShards int `json:"maxShards"`
	// MaxGeneralCapacity limits the sum over all collections of partitions
	// × shards (rootCoord.maxGeneralCapacity, 65536; code 250).
	MaxGeneralCapacity int `json:"maxGeneralCapacity"`
}

// DefaultLimits returns Milvus 2.6's limits.
func DefaultLimits() Limits {
	return Limits{
		MaxCollections: 65536, MaxCollectionsPerDB: 65536, MaxDatabases: MaxDatabases,
		MaxPartitions: MaxPartitions, MaxFields: MaxFields, MaxVectorFields: MaxVectorFields, MaxShards: MaxShards,
		MaxGeneralCapacity: 65536,
	}
}

// Validate checks that every limit is positive.
func (l Limits) Validate() error {
	for _, v := range []struct {
		name string
		n    int
	}{
		{"maxCollections", l.MaxCollections},
		{"maxCollectionsPerDB", l.MaxCollectionsPerDB},
		{"maxDatabases", l.MaxDatabases},
		{"maxPartitions", l.MaxPartitions},
		{"maxFields", l.MaxFields},
		{"maxVectorFields", l.MaxVectorFields},
		{"maxShards", l.MaxShards},
		{"maxGeneralCapacity", l.MaxGeneralCapacity},
	} {
		if v.n <= 0 {
			return fmt.Errorf("rootcoord: %s must be positive, got %d", v.name, v.n)
		}
	}
	return nil
}

// checkCollectionCount refuses a new collection in db over the per-database
// limit (the database's property first, as Milvus) or the total one. c.ddl
// is held.
func (c *Core) checkCollectionCount(db string, props map[string]string) error {
	db = dbOrDefault(db)
	limit := c.cfg.MaxCollectionsPerDB
	if v, ok := props[MaxCollectionsProperty]; ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errcode.New(errcode.Unexpected, "parse value of property fail, key:%s, value:%s", MaxCollectionsProperty, v)
		}
		limit = n
	}
	c.mu.RLock()
	total, inDB := len(c.byID), 0
	for _, col := range c.byID {
		if dbOrDefault(col.DBName) == db {
			inDB++
		}
	}
	c.mu.RUnlock()
	if inDB >= limit {
		return errcode.New(errcode.CollectionNumLimit, "exceeded the limit number of collections[dbName=%s][limit=%d]", db, limit)
	}
	if total >= c.cfg.MaxCollections {
		return errcode.New(errcode.CollectionNumLimit, "exceeded the limit number of collections[dbName=%s][limit=%d]", db, c.cfg.MaxCollections)
	}
	return nil
}

// checkGeneralCapacity refuses to add partitions × shards more to the
// catalog when the sum over all collections would pass maxGeneralCapacity,
// as Milvus's checkGeneralCapacity (a new partition adds 1, whatever its
// collection's shards, as there). c.ddl is held.
func (c *Core) checkGeneralCapacity(added int) error {
	c.mu.RLock()
	n := added
	for _, col := range c.byID {
		n += len(col.Partitions) * max(col.Shards, 1)
	}
	c.mu.RUnlock()
	if n > c.cfg.MaxGeneralCapacity {
		return errcode.New(errcode.GeneralCapacityExceeded,
			"failed checking constraint: sum_collections(parition*shard) exceeding the max general capacity:: general capacity exceeded[newGeneralSize=%d][generalCapacity=%d]",
			n, c.cfg.MaxGeneralCapacity)
	}
	return nil
}
