// Package rootcoord is the root coordinator: it owns databases, collections
// and partitions, assigns IDs and channels, and serializes DDL in timestamp
// order. Each DDL operation takes one timestamp, persists its metadata change
// in one meta-store transaction, then announces it on the collection's
// vchannels through the WAL so data and query nodes see DDL in the same order
// as the data around it.
//
// A collection gets one partition, `_default`, at creation; a collection with
// a partition-key field gets num_partitions of them instead (16 by default,
// at most MaxPartitions), named `_default_0` … `_default_<n-1>` as in
// Milvus, created and persisted with the collection (no partition DDL is
// announced for them). Collections stored before this kept `_default`.
package rootcoord

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/wal"
)

// KV is the part of the meta store the root coordinator uses.
type KV interface {
	Scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error)
	Txn(ctx context.Context, ops ...metastore.Op) error
}

// Allocator hands out hybrid timestamps or TSO-shaped IDs.
type Allocator interface {
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// Announcer appends DDL messages to the WAL and returns their timestamp;
// Watch makes a pchannel that carries a collection emit time ticks; End is
// the offset the pchannel's next record will get.
type Announcer interface {
	Append(ctx context.Context, batch map[string][]wal.Message) (uint64, error)
	Watch(pchannel string)
	End(ctx context.Context, pchannel string) (int64, error)
}

// Config configures the root coordinator.
type Config struct {
	// PChannels is the number of DML pchannels (Milvus rootcoord.dmlChannelNum),
	// the most shards a collection may have.
	// Set it before the first start: a data dir keeps the pchannels its
	// collections were created on.
	PChannels int `json:"pChannels"`
	// ChannelPrefix is the cluster prefix of channel names (Milvus "by-dev");
	// like PChannels, fixed once collections exist.
	ChannelPrefix string `json:"channelPrefix"`
	// Limits bounds the catalog and schemas (limits.go); its keys sit in
	// this section.
	Limits `json:",inline"`
}

// Defaults returns the default configuration.
func Defaults() Config {
	return Config{PChannels: 16, ChannelPrefix: "by-dev", Limits: DefaultLimits()}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.PChannels <= 0 || c.PChannels > 1024 {
		return fmt.Errorf("rootcoord: pchannels must be in [1, 1024], got %d", c.PChannels)
	}
	if c.ChannelPrefix == "" {
		return fmt.Errorf("rootcoord: channel prefix is empty")
	}
	return c.Limits.Validate()
}

// Core is the root coordinator.
type Core struct {
	cfg    Config
	kv     KV
	ids    Allocator
	tso    Allocator
	wal    Announcer
	logger *slog.Logger

	ddl    sync.Mutex // serializes DDL
	mu     sync.RWMutex
	byID   map[int64]*catalog.Collection
	byName map[string]int64 // db + "/" + name → id
	// Databases and aliases (database.go), under mu.
	dbs     map[string]*catalog.DatabaseInfo // name → record
	aliases map[string]*catalog.AliasInfo    // db + "/" + alias → record
}

// New loads the collections from kv and returns the coordinator.
func New(ctx context.Context, cfg Config, kv KV, ids, tso Allocator, announcer Announcer, logger *slog.Logger) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Core{
		cfg: cfg, kv: kv, ids: ids, tso: tso, wal: announcer, logger: logger,
		byID: map[int64]*catalog.Collection{}, byName: map[string]int64{},
	}
	kvs, err := kv.Scan(ctx, catalog.CollectionPrefix)
	if err != nil {
		return nil, fmt.Errorf("rootcoord: load collections: %w", err)
	}
	for _, e := range kvs {
		col, err := catalog.DecodeCollection(e.Value)
		if err != nil {
			return nil, err
		}
		if col.State != catalog.CollectionCreated {
			continue
		}
		if len(col.VChannels) > 0 && col.Shards != len(col.VChannels) {
			// Recorded before shards beyond the pchannels were refused:
			// the collection has the vchannels it was given, one per shard.
			logger.Warn("rootcoord: a collection records more shards than it has vchannels; it has one shard per vchannel",
				"collection", col.Name, "id", col.ID, "shards", col.Shards, "vchannels", len(col.VChannels))
			col.Shards = len(col.VChannels)
		}
		c.byID[col.ID] = col
		c.byName[nameKey(col.DBName, col.Name)] = col.ID
		for _, p := range col.PChannels {
			announcer.Watch(p)
		}
	}
	if err := c.loadNames(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func nameKey(db, name string) string {
	if db == "" {
		db = "default"
	}
	return db + "/" + name
}

// CreateCollection validates and creates a collection with its `_default`
// partition (a partition-key collection gets DefaultKeyPartitions
// partitions instead, see CreateCollectionPartitions). Creating an existing
// collection with an identical schema succeeds without change, as in Milvus;
// a different schema is an error.
//
// Each of the collection's shards is a vchannel on a pchannel of its own
// (VChannels[i] on PChannels[i]), so shards may not exceed
// Config.PChannels: more is refused as Milvus refuses more than its DML
// channels ("shard num (N) exceeds max configuration (P)"), and nothing is
// recorded.
func (c *Core) CreateCollection(ctx context.Context, db string, in *schemapb.CollectionSchema, shards int,
	level commonpb.ConsistencyLevel, props map[string]string,
) error {
	return c.CreateCollectionPartitions(ctx, db, in, shards, level, props, 0)
}

// CreateCollectionPartitions is CreateCollection with Milvus's
// num_partitions: a collection with a partition-key field gets numPartitions
// partitions (DefaultKeyPartitions when 0) named `_default_0` …
// `_default_<n-1>`, and no `_default`; rows are routed to them by the hash
// of their partition key. Without a partition-key field numPartitions is
// ignored and the collection gets its `_default` partition.
func (c *Core) CreateCollectionPartitions(ctx context.Context, db string, in *schemapb.CollectionSchema, shards int,
	level commonpb.ConsistencyLevel, props map[string]string, numPartitions int,
) error {
	schema, err := prepareSchema(in, c.cfg.Limits)
	if err != nil {
		return err
	}
	keyMode := false
	for _, f := range schema.GetFields() {
		keyMode = keyMode || f.GetIsPartitionKey()
	}
	parts := 1
	if keyMode {
		parts = numPartitions
		if parts <= 0 {
			parts = DefaultKeyPartitions
		}
		if parts > c.cfg.MaxPartitions {
			return errcode.InvalidParam("partition number (%d) exceeds max configuration (%d)", parts, c.cfg.MaxPartitions)
		}
	}
	if shards <= 0 {
		shards = 1
	}
	// Each shard is a vchannel on a pchannel of its own, so a collection
	// has at most PChannels shards; Milvus refuses more than its DML
	// channels (rootCoord.dmlChannelNum) with this error.
	if shards > c.cfg.PChannels {
		return errcode.Invalid("shard num (%d) exceeds max configuration (%d)", shards, c.cfg.PChannels)
	}
	if shards > c.cfg.MaxShards {
		return errcode.Invalid("shard num (%d) exceeds max configuration (%d)", shards, c.cfg.MaxShards)
	}
	if err := checkTimezoneProps(props); err != nil {
		return err
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	dbInfo, err := c.Database(db)
	if err != nil {
		return err
	}
	props = inheritTimezone(props, dbInfo.Properties)
	if err := resolveTimestamptzDefaults(schema, props); err != nil {
		return err
	}
	if _, isAlias := c.AliasTarget(db, schema.GetName()); isAlias {
		return errcode.New(errcode.AliasNameConflict, "collection name [%s] conflicts with an existing alias, please choose a unique name", schema.GetName())
	}
	if old, err := c.realCollection(db, schema.GetName()); err == nil {
		if proto.Equal(old.Schema, schema) {
			return nil
		}
		return errcode.Invalid("create duplicate collection with different parameters, collection: %s", schema.GetName())
	}
	if err := c.checkCollectionCount(db, dbInfo.Properties); err != nil {
		return err
	}
	if err := c.checkGeneralCapacity(parts * shards); err != nil {
		return err
	}
	base, err := c.ids.Allocate(ctx, uint32(1+parts))
	if err != nil {
		return fmt.Errorf("rootcoord: allocate ids: %w", err)
	}
	collID := int64(base)
	raw, err := proto.Marshal(schema)
	if err != nil {
		return fmt.Errorf("rootcoord: encode schema: %w", err)
	}
	info := catalog.CollectionInfo{
		ID: collID, DBName: dbOrDefault(db), Name: schema.GetName(), Schema: raw, Shards: shards,
		ConsistencyLevel: int32(level), Properties: props, State: catalog.CollectionCreated,
	}
	placed := c.placeShards(collID, shards)
	if len(placed) != shards {
		return fmt.Errorf("rootcoord: %d shards placed on %d pchannels", shards, len(placed))
	}
	for i, pi := range placed {
		p := wal.PChannelName(c.cfg.ChannelPrefix, pi)
		// Nothing of the new vchannel is in the WAL yet: it starts at the
		// pchannel's end (which survives any truncation).
		start, err := c.wal.End(ctx, p)
		if err != nil {
			return fmt.Errorf("rootcoord: start position of %s: %w", p, err)
		}
		info.PChannels = append(info.PChannels, p)
		info.VChannels = append(info.VChannels, wal.VChannelName(p, collID, i))
		info.StartOffsets = append(info.StartOffsets, start)
	}
	ts, err := c.tso.Allocate(ctx, 1)
	if err != nil {
		return fmt.Errorf("rootcoord: allocate timestamp: %w", err)
	}
	info.CreatedTS, info.SchemaVersionTS = ts, ts
	if keyMode {
		for i := range parts {
			info.Partitions = append(info.Partitions, catalog.PartitionInfo{
				ID: collID + 1 + int64(i), Name: KeyPartitionName(i), CreatedTS: ts,
			})
		}
	} else {
		info.Partitions = []catalog.PartitionInfo{{ID: collID + 1, Name: DefaultPartName, CreatedTS: ts}}
	}
	// Save first, then announce: a node that reads the announcement finds the
	// collection; a crash in between leaves a collection that nodes learn of
	// from the meta store at start.
	if err := c.save(ctx, &catalog.Collection{CollectionInfo: info, Schema: schema}); err != nil {
		return err
	}
	for _, p := range info.PChannels {
		c.wal.Watch(p)
	}
	_, err = c.announce(ctx, &info, wal.TypeCreateCollection, nil)
	return err
}

// placeShards picks the pchannels (by index) for a new collection's shards:
// the least used ones, counting the vchannels of live collections, with
// ties broken by rotating from the collection ID, so that collections
// spread over the pchannels (IDs are TSO-shaped, physical << 18, so the ID
// alone would put most one-shard collections on the same pchannel) and a
// damaged pchannel touches as few collections as possible. The caller
// holds c.ddl.
func (c *Core) placeShards(collID int64, shards int) []int {
	n := c.cfg.PChannels
	index := make(map[string]int, n)
	for i := 0; i < n; i++ {
		index[wal.PChannelName(c.cfg.ChannelPrefix, i)] = i
	}
	used := make([]int, n)
	c.mu.RLock()
	for _, col := range c.byID {
		for _, p := range col.PChannels {
			if i, ok := index[p]; ok {
				used[i]++
			}
		}
	}
	c.mu.RUnlock()
	start := int(uint64(collID) % uint64(n))
	order := make([]int, n)
	for k := range order {
		order[k] = (start + k) % n
	}
	sort.SliceStable(order, func(a, b int) bool { return used[order[a]] < used[order[b]] })
	return order[:min(shards, n)]
}

func dbOrDefault(db string) string {
	if db == "" {
		return "default"
	}
	return db
}

// announce appends a DDL message on every vchannel of the collection.
func (c *Core) announce(ctx context.Context, info *catalog.CollectionInfo, t wal.MessageType, payload []byte) (uint64, error) {
	batch := map[string][]wal.Message{}
	for i, v := range info.VChannels {
		p := info.PChannels[i]
		batch[p] = append(batch[p], wal.Message{Type: t, VChannel: v, Payload: payload})
	}
	ts, err := c.wal.Append(ctx, batch)
	if err != nil {
		return 0, fmt.Errorf("rootcoord: announce %s of collection %d: %w", t, info.ID, err)
	}
	return ts, nil
}

func (c *Core) save(ctx context.Context, col *catalog.Collection) error {
	b, err := catalog.Marshal(&col.CollectionInfo)
	if err != nil {
		return err
	}
	if err := c.kv.Txn(ctx, metastore.Put(catalog.CollectionKey(col.ID), b)); err != nil {
		return fmt.Errorf("rootcoord: save collection %d: %w", col.ID, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if col.State == catalog.CollectionCreated {
		c.byID[col.ID] = col
		c.byName[nameKey(col.DBName, col.Name)] = col.ID
	} else {
		delete(c.byID, col.ID)
		delete(c.byName, nameKey(col.DBName, col.Name))
	}
	return nil
}

// Collection returns the collection named name, or aliased name, in database db.
func (c *Core) Collection(db, name string) (*catalog.Collection, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	id, ok := c.byName[nameKey(db, name)]
	if !ok {
		if col, found := c.aliasTargetLocked(db, name); found {
			return col, nil
		}
		if _, found := c.dbs[dbOrDefault(db)]; !found {
			return nil, errDatabaseNotFound(db)
		}
		return nil, errcode.New(errcode.CollectionNotFound, "collection not found[database=%s][collection=%s]", dbOrDefault(db), name)
	}
	return c.byID[id], nil
}

// CollectionByID returns a collection by ID.
func (c *Core) CollectionByID(id int64) (*catalog.Collection, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	col, ok := c.byID[id]
	if !ok {
		return nil, errcode.New(errcode.CollectionNotFound, "collection not found[collection=%d]", id)
	}
	return col, nil
}

// Collections lists the collections of database db, sorted by name. The
// error is always nil in process; the signature is the proxy's role
// (proxy.CollectionResolver), which a remote catalog implements too.
func (c *Core) Collections(_ context.Context, db string) ([]*catalog.Collection, error) {
	return c.collections(db), nil
}

// collections lists the collections of database db, sorted by name.
func (c *Core) collections(db string) []*catalog.Collection {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*catalog.Collection
	for _, col := range c.byID {
		if col.DBName == dbOrDefault(db) {
			out = append(out, col)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AllCollections lists every collection in every database. The error is
// always nil in process; the signature is the data node's
// (datanode.Collections), whose remote coordinator can fail.
func (c *Core) AllCollections(_ context.Context) ([]*catalog.Collection, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*catalog.Collection, 0, len(c.byID))
	for _, col := range c.byID {
		out = append(out, col)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// DropCollection drops a collection; dropping a missing one is not an error.
// It returns the dropped collection (nil when it did not exist).
func (c *Core) DropCollection(ctx context.Context, db, name string) (*catalog.Collection, error) {
	c.ddl.Lock()
	defer c.ddl.Unlock()
	if err := c.checkDropCollection(db, name); err != nil {
		return nil, err
	}
	old, err := c.realCollection(db, name)
	if err != nil {
		return nil, nil //nolint:nilerr // dropping a missing collection succeeds, as in Milvus
	}
	if _, err := c.announce(ctx, &old.CollectionInfo, wal.TypeDropCollection, nil); err != nil {
		return nil, err
	}
	dropped := *old
	dropped.State = catalog.CollectionDropped
	if err := c.save(ctx, &dropped); err != nil {
		return nil, err
	}
	return old, nil
}

// update applies fn to a copy of the collection and saves it.
func (c *Core) update(ctx context.Context, db, name string, fn func(col *catalog.Collection) error) (*catalog.Collection, error) {
	old, err := c.Collection(db, name)
	if err != nil {
		return nil, err
	}
	col := *old
	col.Partitions = append([]catalog.PartitionInfo(nil), old.Partitions...)
	col.LoadedPartitions = append([]int64(nil), old.LoadedPartitions...)
	if err := fn(&col); err != nil {
		return nil, err
	}
	return &col, c.save(ctx, &col)
}

// CreatePartition adds a partition.
func (c *Core) CreatePartition(ctx context.Context, db, coll, part string) error {
	if err := catalog.ValidateName("partition", part); err != nil {
		return err
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	base, err := c.ids.Allocate(ctx, 1)
	if err != nil {
		return fmt.Errorf("rootcoord: allocate id: %w", err)
	}
	_, err = c.update(ctx, db, coll, func(col *catalog.Collection) error {
		if _, ok := col.Partition(part); ok {
			return errcode.Invalid("partition %q already exists in collection %q", part, coll)
		}
		if n := len(col.Partitions); n >= c.cfg.MaxPartitions {
			return errcode.InvalidParam("partition number (%d) exceeds max configuration (%d), collection: %s", n, c.cfg.MaxPartitions, col.Name)
		}
		if err := c.checkGeneralCapacity(1); err != nil {
			return err
		}
		ts, err := c.announce(ctx, &col.CollectionInfo, wal.TypeCreatePartition, partitionPayload(int64(base)))
		if err != nil {
			return err
		}
		col.Partitions = append(col.Partitions, catalog.PartitionInfo{ID: int64(base), Name: part, CreatedTS: ts})
		return nil
	})
	return err
}

// DropPartition removes a partition; the `_default` partition cannot be dropped,
// nor a loaded one. It returns the dropped partition's ID.
func (c *Core) DropPartition(ctx context.Context, db, coll, part string) (int64, error) {
	if part == DefaultPartName {
		return 0, errcode.Invalid("default partition cannot be deleted")
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	var id int64
	_, err := c.update(ctx, db, coll, func(col *catalog.Collection) error {
		p, ok := col.Partition(part)
		if !ok {
			return errcode.New(errcode.PartitionNotFound, "partition not found[partition=%s]", part)
		}
		for _, l := range col.LoadedPartitions {
			if l == p.ID {
				return errcode.Invalid("partition %s cannot be dropped, partition is loaded, please release it first", part)
			}
		}
		if col.Loaded && len(col.LoadedPartitions) == 0 {
			return errcode.Invalid("partition %s cannot be dropped, partition is loaded, please release it first", part)
		}
		if _, err := c.announce(ctx, &col.CollectionInfo, wal.TypeDropPartition, partitionPayload(p.ID)); err != nil {
			return err
		}
		id = p.ID
		out := col.Partitions[:0]
		for _, q := range col.Partitions {
			if q.ID != p.ID {
				out = append(out, q)
			}
		}
		col.Partitions = out
		return nil
	})
	return id, err
}

// SetLoaded records the load state: loaded with all partitions (parts nil),
// loaded with some partitions, or released (loaded false).
func (c *Core) SetLoaded(ctx context.Context, db, coll string, loaded bool, parts []int64) error {
	c.ddl.Lock()
	defer c.ddl.Unlock()
	_, err := c.update(ctx, db, coll, func(col *catalog.Collection) error {
		col.Loaded = loaded
		col.LoadedPartitions = parts
		return nil
	})
	return err
}

// partitionPayload encodes a partition ID (int64 LE) for partition DDL messages.
func partitionPayload(id int64) []byte {
	return binary.LittleEndian.AppendUint64(nil, uint64(id))
}

// LiveVChannels lists the vchannels of every live collection.
func (c *Core) LiveVChannels() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, col := range c.byID {
		out = append(out, col.VChannels...)
	}
	sort.Strings(out)
	return out
}

// StartOffset returns where a live vchannel's messages start in its
// pchannel (false for an unknown vchannel or a collection that predates
// start offsets).
func (c *Core) StartOffset(vchannel string) (int64, bool) {
	id, err := wal.CollectionIDOf(vchannel)
	if err != nil {
		return 0, false
	}
	col, err := c.CollectionByID(id)
	if err != nil {
		return 0, false
	}
	return col.StartOffset(vchannel)
}

// ExpireBefore returns the TTL cut-off of a collection: rows inserted before
// the returned hybrid timestamp have expired. 0 means the collection has no
// TTL (property "collection.ttl.seconds") or does not exist. The error is
// always nil in process; the signature is the query node's
// (querynode.Collections), whose remote coordinator can fail.
func (c *Core) ExpireBefore(_ context.Context, collectionID int64) (uint64, error) {
	col, err := c.CollectionByID(collectionID)
	if err != nil {
		return 0, nil
	}
	return catalog.ExpireBefore(col.TTL(), time.Now()), nil
}

// AlterProperties sets and deletes collection properties (for example
// "collection.ttl.seconds"); the schema is unchanged.
func (c *Core) AlterProperties(ctx context.Context, db, coll string, set map[string]string, del []string) error {
	if v, ok := set["collection.ttl.seconds"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			return errcode.Invalid("collection.ttl.seconds %q should be a non-negative integer", v)
		}
	}
	if err := checkTimezoneProps(set); err != nil {
		return err
	}
	c.ddl.Lock()
	defer c.ddl.Unlock()
	_, err := c.update(ctx, db, coll, func(col *catalog.Collection) error {
		props := map[string]string{}
		for k, v := range col.Properties {
			props[k] = v
		}
		for k, v := range set {
			props[k] = v
		}
		for _, k := range del {
			delete(props, k)
		}
		col.Properties = props
		return nil
	})
	return err
}

// ClusteringKey returns the field ID of a collection's clustering key, or 0.
func (c *Core) ClusteringKey(collectionID int64) int64 {
	col, err := c.CollectionByID(collectionID)
	if err != nil {
		return 0
	}
	for _, f := range col.Schema.GetFields() {
		if f.GetIsClusteringKey() {
			return f.GetFieldID()
		}
	}
	return 0
}
