package proxy

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/wal"
)

// CreateCollection creates a collection from a serialized schema.
func (p *Proxy) CreateCollection(ctx context.Context, req *milvuspb.CreateCollectionRequest) (*commonpb.Status, error) {
	schema := &schemapb.CollectionSchema{}
	if err := proto.Unmarshal(req.GetSchema(), schema); err != nil {
		return errcode.Status(errcode.Invalid("the schema is not a valid CollectionSchema: %v", err)), nil
	}
	if req.GetCollectionName() != "" && schema.GetName() != "" && schema.GetName() != req.GetCollectionName() {
		return errcode.Status(errcode.Invalid("collection name %q does not match the schema name %q", req.GetCollectionName(), schema.GetName())), nil
	}
	if schema.GetName() == "" {
		schema.Name = req.GetCollectionName()
	}
	props := map[string]string{}
	for _, kv := range req.GetProperties() {
		props[kv.GetKey()] = kv.GetValue()
	}
	level := req.GetConsistencyLevel()
	err := p.meta.CreateCollectionPartitions(ctx, dbName(ctx, req.GetDbName()), schema, int(req.GetShardsNum()), level, props,
		int(req.GetNumPartitions()))
	return errcode.Status(err), nil
}

// DropCollection drops a collection and everything in it. As in Milvus the
// name's form is not checked (a collection with a name the rules now refuse
// can still be dropped) and dropping a missing collection succeeds.
func (p *Proxy) DropCollection(ctx context.Context, req *milvuspb.DropCollectionRequest) (*commonpb.Status, error) {
	db := dbName(ctx, req.GetDbName())
	if err := p.meta.CheckDropCollection(db, req.GetCollectionName()); err != nil {
		return errcode.Status(err), nil // an alias, or a collection with aliases
	}
	col, err := p.meta.Collection(db, req.GetCollectionName())
	if err != nil {
		return ok(), nil // dropping a missing collection succeeds
	}
	p.query.Release(col.ID)
	if _, err := p.meta.DropCollection(ctx, db, req.GetCollectionName()); err != nil {
		return errcode.Status(err), nil
	}
	if err := p.data.DropCollection(ctx, col.ID, col.VChannels); err != nil {
		return errcode.Status(err), nil
	}
	return ok(), nil
}

// HasCollection reports whether a collection exists. A malformed name is an
// error (1100), as in Milvus, not a false.
func (p *Proxy) HasCollection(ctx context.Context, req *milvuspb.HasCollectionRequest) (*milvuspb.BoolResponse, error) {
	if err := catalog.ValidateName("collection", req.GetCollectionName()); err != nil {
		return &milvuspb.BoolResponse{Status: errcode.Status(err)}, nil
	}
	_, err := p.meta.Collection(dbName(ctx, req.GetDbName()), req.GetCollectionName())
	return &milvuspb.BoolResponse{Status: ok(), Value: err == nil}, nil
}

// userSchema is the schema clients see: no system fields, no `$meta`.
func userSchema(col *catalog.Collection) *schemapb.CollectionSchema {
	s := proto.Clone(col.Schema).(*schemapb.CollectionSchema)
	out := s.Fields[:0]
	for _, f := range s.Fields {
		if f.GetFieldID() >= 100 && !f.GetIsDynamic() {
			out = append(out, f)
		}
	}
	s.Fields = out
	dropStructColumns(s)
	timestamptzDefaultsOut(s, col)
	return s
}

// DescribeCollection returns the collection's schema and metadata.
func (p *Proxy) DescribeCollection(ctx context.Context, req *milvuspb.DescribeCollectionRequest) (*milvuspb.DescribeCollectionResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if errcode.CodeOf(err) == errcode.CollectionNotFound {
		// Milvus's describe words a missing collection its own way; SDKs
		// describe before they insert or upsert, so those show it too.
		err = errcode.New(errcode.CollectionNotFound, "can't find collection[database=%s][collection=%s]",
			dbName(ctx, req.GetDbName()), req.GetCollectionName())
	}
	if err != nil {
		return &milvuspb.DescribeCollectionResponse{Status: errcode.Status(err)}, nil
	}
	var props []*commonpb.KeyValuePair
	for k, v := range col.Properties {
		props = append(props, &commonpb.KeyValuePair{Key: k, Value: v})
	}
	aliases, err := p.meta.AliasesOf(ctx, col.ID)
	if err != nil {
		return &milvuspb.DescribeCollectionResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.DescribeCollectionResponse{
		Status: ok(), Schema: userSchema(col), CollectionID: col.ID, CollectionName: col.Name,
		VirtualChannelNames: col.VChannels, PhysicalChannelNames: col.PChannels,
		CreatedTimestamp: col.CreatedTS, CreatedUtcTimestamp: col.CreatedTS >> 18,
		ShardsNum: int32(col.Shards), ConsistencyLevel: commonpb.ConsistencyLevel(col.ConsistencyLevel),
		Properties: props, DbName: col.DBName, NumPartitions: int64(len(col.Partitions)),
		UpdateTimestamp: col.SchemaVersionTS, Aliases: aliases,
	}, nil
}

// ShowCollections lists collections.
func (p *Proxy) ShowCollections(ctx context.Context, req *milvuspb.ShowCollectionsRequest) (*milvuspb.ShowCollectionsResponse, error) {
	if _, err := p.meta.Database(dbName(ctx, req.GetDbName())); err != nil {
		return &milvuspb.ShowCollectionsResponse{Status: errcode.Status(err)}, nil
	}
	cols, err := p.meta.Collections(ctx, dbName(ctx, req.GetDbName()))
	if err != nil {
		return &milvuspb.ShowCollectionsResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.ShowCollectionsResponse{Status: ok()}
	want := map[string]bool{}
	for _, n := range req.GetCollectionNames() {
		want[n] = true
	}
	visible := p.collectionFilter(ctx, dbName(ctx, req.GetDbName()))
	for _, col := range cols {
		if len(want) > 0 && !want[col.Name] || !visible(col.Name) {
			continue
		}
		loaded, pct, err := p.inMemoryPercentage(ctx, col.ID)
		if err != nil {
			return &milvuspb.ShowCollectionsResponse{Status: errcode.Status(err)}, nil
		}
		resp.CollectionNames = append(resp.CollectionNames, col.Name)
		resp.CollectionIds = append(resp.CollectionIds, col.ID)
		resp.CreatedTimestamps = append(resp.CreatedTimestamps, col.CreatedTS)
		resp.CreatedUtcTimestamps = append(resp.CreatedUtcTimestamps, col.CreatedTS>>18)
		resp.InMemoryPercentages = append(resp.InMemoryPercentages, pct)
		resp.QueryServiceAvailable = append(resp.QueryServiceAvailable, loaded)
	}
	return resp, nil
}

// inMemoryPercentage is a collection's in-memory percentage as
// ShowCollections reports it: 100 once loaded, the load's progress while it
// loads (as GetLoadingProgress), 0 otherwise.
func (p *Proxy) inMemoryPercentage(ctx context.Context, collID int64) (loaded bool, pct int64, err error) {
	loaded, _, err = p.query.Loaded(ctx, collID)
	if err != nil || loaded {
		return loaded, 100, err
	}
	loading, err := p.query.Loading(ctx, collID)
	if err != nil || !loading {
		return false, 0, err
	}
	pct, err = p.query.LoadProgress(ctx, collID)
	return false, pct, err
}

// GetCollectionStatistics reports row_count.
func (p *Proxy) GetCollectionStatistics(ctx context.Context, req *milvuspb.GetCollectionStatisticsRequest) (*milvuspb.GetCollectionStatisticsResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetCollectionStatisticsResponse{Status: errcode.Status(err)}, nil
	}
	n, err := p.data.RowCount(ctx, col.ID, nil)
	if err != nil {
		return &milvuspb.GetCollectionStatisticsResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.GetCollectionStatisticsResponse{
		Status: ok(),
		Stats:  []*commonpb.KeyValuePair{{Key: "row_count", Value: strconv.FormatInt(n, 10)}},
	}, nil
}

// CreatePartition adds a partition. Creating one that exists succeeds and
// changes nothing, as in Milvus (rootcoord ignores a duplicate partition).
func (p *Proxy) CreatePartition(ctx context.Context, req *milvuspb.CreatePartitionRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	if err := validPartition(req.GetPartitionName()); err != nil {
		return errcode.Status(err), nil
	}
	if err := keyModeRefusal(col, "create partition"); err != nil {
		return errcode.Status(err), nil
	}
	if _, found := col.Partition(req.GetPartitionName()); found {
		return ok(), nil
	}
	return errcode.Status(p.meta.CreatePartition(ctx, col.DBName, col.Name, req.GetPartitionName())), nil
}

// DropPartition drops a released partition and its data. Dropping one that
// does not exist succeeds, as in Milvus (the proxy returns early when the
// partition is not found).
func (p *Proxy) DropPartition(ctx context.Context, req *milvuspb.DropPartitionRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	if err := validPartition(req.GetPartitionName()); err != nil {
		return errcode.Status(err), nil
	}
	if err := keyModeRefusal(col, "drop partition"); err != nil {
		return errcode.Status(err), nil
	}
	if _, found := col.Partition(req.GetPartitionName()); !found {
		return ok(), nil
	}
	id, err := p.meta.DropPartition(ctx, col.DBName, col.Name, req.GetPartitionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.data.DropPartition(ctx, col.ID, id)), nil
}

// HasPartition reports whether a partition exists.
func (p *Proxy) HasPartition(ctx context.Context, req *milvuspb.HasPartitionRequest) (*milvuspb.BoolResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.BoolResponse{Status: errcode.Status(err)}, nil
	}
	if err := validPartition(req.GetPartitionName()); err != nil {
		return &milvuspb.BoolResponse{Status: errcode.Status(err)}, nil
	}
	_, found := col.Partition(req.GetPartitionName())
	return &milvuspb.BoolResponse{Status: ok(), Value: found}, nil
}

// ShowPartitions lists partitions.
func (p *Proxy) ShowPartitions(ctx context.Context, req *milvuspb.ShowPartitionsRequest) (*milvuspb.ShowPartitionsResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.ShowPartitionsResponse{Status: errcode.Status(err)}, nil
	}
	loaded, parts, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return &milvuspb.ShowPartitionsResponse{Status: errcode.Status(err)}, nil
	}
	isLoaded := func(id int64) bool {
		if !loaded {
			return false
		}
		if parts == nil {
			return true
		}
		for _, q := range parts {
			if q == id {
				return true
			}
		}
		return false
	}
	resp := &milvuspb.ShowPartitionsResponse{Status: ok()}
	for _, part := range col.Partitions {
		resp.PartitionNames = append(resp.PartitionNames, part.Name)
		resp.PartitionIDs = append(resp.PartitionIDs, part.ID)
		resp.CreatedTimestamps = append(resp.CreatedTimestamps, part.CreatedTS)
		resp.CreatedUtcTimestamps = append(resp.CreatedUtcTimestamps, part.CreatedTS>>18)
		pct := int64(0)
		if isLoaded(part.ID) {
			pct = 100
		}
		resp.InMemoryPercentages = append(resp.InMemoryPercentages, pct)
	}
	return resp, nil
}

// GetPartitionStatistics reports a partition's row_count.
func (p *Proxy) GetPartitionStatistics(ctx context.Context, req *milvuspb.GetPartitionStatisticsRequest) (*milvuspb.GetPartitionStatisticsResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetPartitionStatisticsResponse{Status: errcode.Status(err)}, nil
	}
	part, found := col.Partition(req.GetPartitionName())
	if !found {
		return &milvuspb.GetPartitionStatisticsResponse{Status: errcode.Status(errcode.New(errcode.PartitionNotFound, "partition not found[partition=%s]", req.GetPartitionName()))}, nil
	}
	n, err := p.data.RowCount(ctx, col.ID, []int64{part.ID})
	if err != nil {
		return &milvuspb.GetPartitionStatisticsResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.GetPartitionStatisticsResponse{
		Status: ok(),
		Stats:  []*commonpb.KeyValuePair{{Key: "row_count", Value: strconv.FormatInt(n, 10)}},
	}, nil
}

// partitionIDs resolves partition names (empty = nil).
func partitionIDs(col *catalog.Collection, names []string) ([]int64, error) {
	var ids []int64
	for _, n := range names {
		part, found := col.Partition(n)
		if !found {
			return nil, errcode.New(errcode.PartitionNotFound, "partition not found[partition=%s]", n)
		}
		ids = append(ids, part.ID)
	}
	return ids, nil
}

// LoadCollection loads a collection into the query node and records it, so a
// restart loads it again.
func (p *Proxy) LoadCollection(ctx context.Context, req *milvuspb.LoadCollectionRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	if err := p.checkLoadIndexes(ctx, col); err != nil {
		return errcode.Status(err), nil
	}
	if err := p.query.Load(ctx, col.ID, nil, int(req.GetReplicaNumber()), req.GetResourceGroups()); err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.meta.SetLoaded(ctx, col.DBName, col.Name, true, nil)), nil
}

// ReleaseCollection releases a collection.
func (p *Proxy) ReleaseCollection(ctx context.Context, req *milvuspb.ReleaseCollectionRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	p.query.Release(col.ID)
	return errcode.Status(p.meta.SetLoaded(ctx, col.DBName, col.Name, false, nil)), nil
}

// LoadPartitions loads some partitions.
func (p *Proxy) LoadPartitions(ctx context.Context, req *milvuspb.LoadPartitionsRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	if err := keyModeRefusal(col, "load partitions"); err != nil {
		return errcode.Status(err), nil
	}
	if len(req.GetPartitionNames()) == 0 {
		return errcode.Status(errcode.Invalid("failed to load partition due to no partition specified")), nil
	}
	ids, err := partitionIDs(col, req.GetPartitionNames())
	if err != nil {
		return errcode.Status(err), nil
	}
	loaded, parts, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return errcode.Status(err), nil
	}
	if loaded && parts == nil {
		// The whole collection is loaded already; another replica number
		// is refused as Milvus refuses it for loaded partitions (a single
		// query node, no replicas listed, ignores the number).
		if n := int(req.GetReplicaNumber()); n > 0 {
			reps, err := p.query.Replicas(ctx, col.ID)
			if err != nil {
				return errcode.Status(err), nil
			}
			if reps != nil && len(reps) != n {
				return errcode.Status(errcode.Invalid("can't change the replica number for loaded partitions: invalid parameter[expected=%d][actual=%d]",
					len(reps), n)), nil
			}
		}
		return ok(), nil
	}
	if err := p.checkLoadIndexes(ctx, col); err != nil {
		return errcode.Status(err), nil
	}
	if err := p.query.Load(ctx, col.ID, ids, int(req.GetReplicaNumber()), req.GetResourceGroups()); err != nil {
		return errcode.Status(err), nil
	}
	if _, parts, err = p.query.Loaded(ctx, col.ID); err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.meta.SetLoaded(ctx, col.DBName, col.Name, true, parts)), nil
}

// ReleasePartitions releases some partitions.
func (p *Proxy) ReleasePartitions(ctx context.Context, req *milvuspb.ReleasePartitionsRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	for _, name := range req.GetPartitionNames() {
		if err := validPartition(name); err != nil {
			return errcode.Status(err), nil
		}
	}
	if err := keyModeRefusal(col, "release partitions"); err != nil {
		return errcode.Status(err), nil
	}
	ids, err := partitionIDs(col, req.GetPartitionNames())
	if err != nil {
		return errcode.Status(err), nil
	}
	if err := p.query.WaitLoad(ctx, col.ID); err != nil { // a reload after a restart, say
		return errcode.Status(err), nil
	}
	loaded, parts, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return errcode.Status(err), nil
	}
	if !loaded {
		return ok(), nil
	}
	if parts == nil {
		for _, part := range col.Partitions {
			parts = append(parts, part.ID)
		}
		replicas, err := p.query.Replicas(ctx, col.ID)
		if err != nil {
			return errcode.Status(err), nil
		}
		if err := p.query.Load(ctx, col.ID, parts, len(replicas), nil); err != nil {
			return errcode.Status(err), nil
		}
	}
	p.query.ReleasePartitions(col.ID, ids)
	if _, parts, err = p.query.Loaded(ctx, col.ID); err != nil {
		return errcode.Status(err), nil
	}
	if len(parts) == 0 {
		p.query.Release(col.ID)
		return errcode.Status(p.meta.SetLoaded(ctx, col.DBName, col.Name, false, nil)), nil
	}
	return errcode.Status(p.meta.SetLoaded(ctx, col.DBName, col.Name, true, parts)), nil
}

// GetLoadState reports NotLoad or Loaded (loads are synchronous), as
// isLoaded decides; a
// collection whose load failed, or that stopped serving on an error, gets an
// error status saying why (code 101, "collection not loaded", and the reason).
func (p *Proxy) GetLoadState(ctx context.Context, req *milvuspb.GetLoadStateRequest) (*milvuspb.GetLoadStateResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetLoadStateResponse{Status: errcode.Status(err)}, nil
	}
	ids, err := partitionIDs(col, req.GetPartitionNames())
	if err != nil {
		return &milvuspb.GetLoadStateResponse{Status: errcode.Status(err)}, nil
	}
	state, err := p.loadState(ctx, col, ids)
	if err != nil {
		return &milvuspb.GetLoadStateResponse{Status: errcode.Status(err), State: state}, nil
	}
	return &milvuspb.GetLoadStateResponse{Status: ok(), State: state}, nil
}

// loadState is GetLoadState's answer. A load that failed is NotLoad with
// the failure's error; a query side that cannot answer is its own error
// (LoadStateNotExist with it, never NotLoad).
func (p *Proxy) loadState(ctx context.Context, col *catalog.Collection, ids []int64) (commonpb.LoadState, error) {
	failure, err := p.loadFailure(ctx, col)
	switch {
	case err != nil:
		return commonpb.LoadState_LoadStateNotExist, err
	case failure != nil:
		return commonpb.LoadState_LoadStateNotLoad, failure
	}
	loaded, err := p.isLoaded(ctx, col.ID, ids)
	if err != nil {
		return commonpb.LoadState_LoadStateNotExist, err
	}
	if loaded {
		pct, err := p.query.LoadProgress(ctx, col.ID)
		switch {
		case err != nil:
			return commonpb.LoadState_LoadStateNotExist, err
		case pct < 100:
			return commonpb.LoadState_LoadStateLoading, nil
		}
		return commonpb.LoadState_LoadStateLoaded, nil
	}
	loading, err := p.query.Loading(ctx, col.ID)
	switch {
	case err != nil:
		return commonpb.LoadState_LoadStateNotExist, err
	case loading:
		return commonpb.LoadState_LoadStateLoading, nil
	}
	return commonpb.LoadState_LoadStateNotLoad, nil
}

// loadFailure is the error to report for a collection whose last load
// failed (nil if it did not), and err the query side's failure to say.
func (p *Proxy) loadFailure(ctx context.Context, col *catalog.Collection) (failure, err error) {
	f, err := p.query.LoadFailure(ctx, col.ID)
	if err != nil {
		return nil, err
	}
	if f != nil {
		return errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: load failed: %v", col.Name, f), nil
	}
	return nil, nil
}

// isLoaded reports whether the partitions want (all of them) are loaded.
// With no partitions named it asks about the collection, which is loaded as
// Milvus counts it when any of its partitions is: after load_partitions Milvus
// reports the collection Loaded, and NotLoad once the last is released.
func (p *Proxy) isLoaded(ctx context.Context, collID int64, want []int64) (bool, error) {
	loaded, parts, err := p.query.Loaded(ctx, collID)
	if err != nil || !loaded {
		return false, err
	}
	if parts == nil || len(want) == 0 {
		return true, nil
	}
	have := map[int64]bool{}
	for _, q := range parts {
		have[q] = true
	}
	for _, w := range want {
		if !have[w] {
			return false, nil
		}
	}
	return true, nil
}

// GetLoadingProgress reports how far the load is (querynode LoadProgress:
// the sealed segments attached, then the WAL replay of the collection's
// vchannels), growing while it loads and 100 once it serves everything.
func (p *Proxy) GetLoadingProgress(ctx context.Context, req *milvuspb.GetLoadingProgressRequest) (*milvuspb.GetLoadingProgressResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetLoadingProgressResponse{Status: errcode.Status(err)}, nil
	}
	ids, err := partitionIDs(col, req.GetPartitionNames())
	if err != nil {
		return &milvuspb.GetLoadingProgressResponse{Status: errcode.Status(err)}, nil
	}
	pct, err := p.loadingProgress(ctx, col, ids)
	if err != nil {
		return &milvuspb.GetLoadingProgressResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.GetLoadingProgressResponse{Status: ok(), Progress: pct, RefreshProgress: pct}, nil
}

// loadingProgress is GetLoadingProgress's answer: the failure of the last
// load, the query side's failure to answer, CollectionNotLoaded, or the
// percentage.
func (p *Proxy) loadingProgress(ctx context.Context, col *catalog.Collection, ids []int64) (int64, error) {
	failure, err := p.loadFailure(ctx, col)
	if err != nil {
		return 0, err
	}
	if failure != nil {
		return 0, failure
	}
	loaded, _, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return 0, err
	}
	if !loaded {
		loading, err := p.query.Loading(ctx, col.ID)
		if err != nil {
			return 0, err
		}
		if loading {
			return p.query.LoadProgress(ctx, col.ID)
		}
		return 0, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]", col.Name)
	}
	ok, err := p.isLoaded(ctx, col.ID, ids)
	if err != nil || !ok {
		return 0, err
	}
	return p.query.LoadProgress(ctx, col.ID)
}

// Flush seals and syncs every growing segment of the collections.
func (p *Proxy) Flush(ctx context.Context, req *milvuspb.FlushRequest) (*milvuspb.FlushResponse, error) {
	db := dbName(ctx, req.GetDbName())
	resp := &milvuspb.FlushResponse{
		Status: ok(), DbName: db,
		CollSegIDs: map[string]*schemapb.LongArray{}, FlushCollSegIDs: map[string]*schemapb.LongArray{},
		CollSealTimes: map[string]int64{}, CollFlushTs: map[string]uint64{},
	}
	for _, name := range req.GetCollectionNames() {
		col, err := p.collection(ctx, db, name)
		if err != nil {
			return &milvuspb.FlushResponse{Status: errcode.Status(err)}, nil
		}
		segs, ts, err := p.data.Flush(ctx, col.ID, col.VChannels)
		if err != nil {
			return &milvuspb.FlushResponse{Status: errcode.Status(err)}, nil
		}
		resp.CollSegIDs[name] = &schemapb.LongArray{Data: segs}
		resp.FlushCollSegIDs[name] = &schemapb.LongArray{Data: segs}
		resp.CollSealTimes[name] = int64(ts >> 18 / 1000)
		resp.CollFlushTs[name] = ts
	}
	return resp, nil
}

// GetFlushState reports whether the segments of a flush are in object storage.
func (p *Proxy) GetFlushState(ctx context.Context, req *milvuspb.GetFlushStateRequest) (*milvuspb.GetFlushStateResponse, error) {
	var vchannels []string
	if req.GetCollectionName() != "" {
		col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
		if err != nil {
			return &milvuspb.GetFlushStateResponse{Status: errcode.Status(err)}, nil
		}
		vchannels = col.VChannels
	}
	flushed, err := p.data.FlushState(ctx, req.GetSegmentIDs(), vchannels, req.GetFlushTs())
	if err != nil {
		return &milvuspb.GetFlushStateResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.GetFlushStateResponse{Status: ok(), Flushed: flushed}, nil
}

// indexParams flattens CreateIndex extra_params, accepting the legacy
// "params" JSON form.
func indexParams(kvs []*commonpb.KeyValuePair) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range kvs {
		if kv.GetKey() == "params" {
			var m map[string]any
			if err := json.Unmarshal([]byte(kv.GetValue()), &m); err != nil {
				return nil, errcode.Invalid("index params %q are not a JSON object", kv.GetValue())
			}
			for k, v := range m {
				switch v := v.(type) {
				case string:
					out[k] = v
				default:
					b, _ := json.Marshal(v)
					out[k] = string(b)
				}
			}
			continue
		}
		out[kv.GetKey()] = kv.GetValue()
	}
	return out, nil
}

// CreateIndex records an index on a field; the data coordinator then builds
// it over every flushed segment (HNSW and AUTOINDEX build HNSW graphs,
// HNSW_SQ and HNSW_PQ quantized ones, IVF_FLAT, IVF_SQ8, IVF_PQ and
// IVF_RABITQ inverted-file indexes, whose parameters are checked here as
// Milvus does; other types are served by exact search).
func (p *Proxy) CreateIndex(ctx context.Context, req *milvuspb.CreateIndexRequest) (*commonpb.Status, error) {
	col, err := p.lookup(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	f := indexedField(col, req.GetFieldName())
	if f == nil {
		return errcode.Status(errcode.New(codePlainError, "cannot create index on non-exist field: %s", req.GetFieldName())), nil
	}
	params, err := indexParams(req.GetExtraParams())
	if err != nil {
		return errcode.Status(err), nil
	}
	it := params["index_type"]
	defaultName := f.GetName()
	if f.GetDataType() == schemapb.DataType_JSON {
		if it, defaultName, err = checkJSONIndex(f, req.GetFieldName(), it, params); err != nil {
			return errcode.Status(err), nil
		}
	} else if f.GetDataType() == schemapb.DataType_ArrayOfVector {
		if it == "" {
			it = "AUTOINDEX"
		}
		if params["metric_type"], err = checkEmbListIndex(f, it, params); err != nil {
			return errcode.Status(err), nil
		}
	} else if f.GetDataType() == schemapb.DataType_SparseFloatVector || isSparseIndexType(it) {
		_, bm25Output := bm25Of(col, f)
		if it, err = checkSparseIndex(f, it, params, bm25Output); err != nil {
			return errcode.Status(err), nil
		}
	} else if isVectorType(f.GetDataType()) {
		if it == "" {
			it = "AUTOINDEX"
		}
		mt, err := vectorIndexMetric(f, it, params)
		if err != nil {
			return errcode.Status(err), nil
		}
		params["metric_type"] = mt
	} else if it, err = checkScalarIndex(f, it, params); err != nil {
		return errcode.Status(err), nil
	}
	params["index_type"] = it
	name := req.GetIndexName()
	if name == "" {
		name = defaultName
	}
	idx := catalog.IndexInfo{CollectionID: col.ID, FieldID: f.GetFieldID(), Name: name, Params: params}
	return errcode.Status(p.data.CreateIndex(ctx, idx)), nil
}

// checkLoadIndexes refuses to load col, as Milvus does, unless it has an
// index and every vector field (struct sub-fields included) has one: code
// 700 "index not found[collection=…]" for none, and the list of the vector
// fields without one otherwise.
func (p *Proxy) checkLoadIndexes(ctx context.Context, col *catalog.Collection) error {
	idxs, err := p.data.Indexes(ctx, col.ID)
	if err != nil {
		return err
	}
	if len(idxs) == 0 {
		return errcode.New(errcode.IndexNotFound, "index not found[collection=%s]", col.Name)
	}
	indexed := map[int64]bool{}
	for _, idx := range idxs {
		indexed[idx.FieldID] = true
	}
	var missing []string
	for _, f := range col.Schema.GetFields() {
		t := f.GetDataType()
		if (isVectorType(t) || t == schemapb.DataType_ArrayOfVector) && !indexed[f.GetFieldID()] {
			missing = append(missing, f.GetName())
		}
	}
	if len(missing) > 0 {
		return errcode.New(errcode.Unexpected, "there is no vector index on field: %v, please create index firstly", missing)
	}
	return nil
}

func isVectorType(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_SparseFloatVector, schemapb.DataType_Int8Vector:
		return true
	}
	return false
}

// DescribeIndex lists the collection's indexes (filtered by field or name).
func (p *Proxy) DescribeIndex(ctx context.Context, req *milvuspb.DescribeIndexRequest) (*milvuspb.DescribeIndexResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.DescribeIndexResponse{Status: errcode.Status(err)}, nil
	}
	idxs, err := p.data.Indexes(ctx, col.ID)
	if err != nil {
		return &milvuspb.DescribeIndexResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.DescribeIndexResponse{Status: ok()}
	for _, idx := range idxs {
		fname := ""
		for _, f := range col.Schema.GetFields() {
			if f.GetFieldID() == idx.FieldID {
				fname = indexFieldName(f, idx)
			}
		}
		if req.GetIndexName() != "" && req.GetIndexName() != idx.Name {
			continue
		}
		if req.GetFieldName() != "" && req.GetFieldName() != fname {
			continue
		}
		var params []*commonpb.KeyValuePair
		for _, k := range sortedKeys(idx.Params) {
			params = append(params, &commonpb.KeyValuePair{Key: k, Value: idx.Params[k]})
		}
		pr, err := p.data.IndexProgress(ctx, idx.ID)
		if err != nil {
			return &milvuspb.DescribeIndexResponse{Status: errcode.Status(err)}, nil
		}
		resp.IndexDescriptions = append(resp.IndexDescriptions, &milvuspb.IndexDescription{
			IndexName: idx.Name, IndexID: idx.ID, Params: params, FieldName: fname,
			IndexedRows: pr.IndexedRows, TotalRows: pr.TotalRows, PendingIndexRows: pr.PendingRows,
			State: commonpb.IndexState(pr.State), IndexStateFailReason: pr.FailReason,
		})
	}
	if len(resp.IndexDescriptions) == 0 {
		return &milvuspb.DescribeIndexResponse{Status: errcode.Status(errcode.New(errcode.IndexNotFound, "index not found[indexName=%s]", req.GetIndexName()))}, nil
	}
	return resp, nil
}

// DropIndex drops an index of a released collection.
func (p *Proxy) DropIndex(ctx context.Context, req *milvuspb.DropIndexRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	loaded, _, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return errcode.Status(err), nil
	}
	if loaded {
		return errcode.Status(errcode.Invalid("vector index cannot be dropped on loaded collection: index cannot be dropped, collection is loaded, please release it first")), nil
	}
	name := req.GetIndexName()
	if name == "" && req.GetFieldName() != "" {
		idxs, err := p.data.Indexes(ctx, col.ID)
		if err != nil {
			return errcode.Status(err), nil
		}
		n := 0
		for _, idx := range idxs {
			if f := col.Field(req.GetFieldName()); f != nil && f.GetFieldID() == idx.FieldID {
				name = idx.Name
				n++
			}
		}
		if name == "" {
			return ok(), nil
		}
		if n > 1 {
			// A JSON field may hold one index per json_path.
			return errcode.Status(errcode.New(codePlainError, "there are multiple indexes, please specify the index_name")), nil
		}
	}
	return errcode.Status(p.data.DropIndex(ctx, col.ID, name)), nil
}

// metricOf returns the metric of the index on a field ("" if none).
func (p *Proxy) metricOf(ctx context.Context, collID, fieldID int64) (string, error) {
	params, err := p.indexParamsOf(ctx, collID, fieldID)
	return params["metric_type"], err
}

// indexParamsOf returns the parameters of the index on a field (nil when
// it has none).
func (p *Proxy) indexParamsOf(ctx context.Context, collID, fieldID int64) (map[string]string, error) {
	idxs, err := p.data.Indexes(ctx, collID)
	if err != nil {
		return nil, err
	}
	for _, idx := range idxs {
		if idx.FieldID == fieldID {
			return idx.Params, nil
		}
	}
	return nil, nil
}

// vchannelPChannels returns the distinct pchannels of a collection.
func vchannelPChannels(col *catalog.Collection) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range col.VChannels {
		p := wal.PChannelOf(v)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// AlterCollection sets or deletes collection properties.
func (p *Proxy) AlterCollection(ctx context.Context, req *milvuspb.AlterCollectionRequest) (*commonpb.Status, error) {
	col, err := p.lookup(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	set := map[string]string{}
	for _, kv := range req.GetProperties() {
		set[kv.GetKey()] = kv.GetValue()
	}
	loaded, _, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return errcode.Status(err), nil
	}
	if loaded {
		// As in Milvus: how a loaded collection is held cannot change under it.
		_, mmapSet := set["mmap.enabled"]
		_, lazySet := set["lazyload.enabled"]
		switch {
		case mmapSet || lazySet:
			return errcode.Status(errcode.Invalid("can not alter mmap properties if collection loaded")), nil
		case slices.Contains(req.GetDeleteKeys(), "mmap.enabled"):
			return errcode.Status(errcode.Invalid("can not delete mmap properties if collection loaded")), nil
		case slices.Contains(req.GetDeleteKeys(), "lazyload.enabled"):
			return errcode.Status(errcode.Invalid("can not delete lazyload.enabled properties if collection loaded")), nil
		}
	}
	if err := p.alterDynamicField(ctx, col, set, req.GetDeleteKeys()); err != nil || (len(set) == 0 && len(req.GetDeleteKeys()) == 0) {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.meta.AlterProperties(ctx, col.DBName, col.Name, set, req.GetDeleteKeys())), nil
}
