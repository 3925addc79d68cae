package coordrpc

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
)

// SegmentMeta is the data coordinator's segment view as DataCoordService
// serves it (querynode.SegmentMeta and datanode.SegmentMeta are the same
// contract).
type SegmentMeta interface {
	Recovery(ctx context.Context, vchannel string) (catalog.RecoveryInfo, error)
	Segment(ctx context.Context, id int64) (catalog.SegmentInfo, bool, error)
}

// IndexMeta is the data coordinator's index view (querynode.IndexMeta).
type IndexMeta interface {
	SegmentIndexes(ctx context.Context, segmentID int64) ([]catalog.IndexTask, error)
	Indexes(ctx context.Context, collectionID int64) ([]catalog.IndexInfo, error)
}

// DropWatcher tells when the catalog drops segments or indexes
// (datacoord.Coordinator.WaitDropped). DataCoordServer serves WaitDropped
// when its IndexMeta implements it.
type DropWatcher interface {
	WaitDropped(ctx context.Context, after uint64, wait time.Duration) (uint64, error)
}

// SyncReporter records a data node's syncs (datanode.SyncReporter).
type SyncReporter interface {
	Synced(ctx context.Context, r catalog.SyncReport) error
}

// IndexBuilds hands out index builds and records their outcomes
// (datanode.IndexCoord without Segment, which SegmentMeta serves).
type IndexBuilds interface {
	ClaimIndexTask(ctx context.Context, builder string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error)
	FinishIndexTask(ctx context.Context, buildID, version int64, files []string, size int64, buildErr error) error
}

// Compactions hands out compaction plans and commits their results
// (datanode.CompactionCoord).
type Compactions interface {
	ClaimCompaction(ctx context.Context, executor string, wait time.Duration) (catalog.CompactionPlan, bool, error)
	CompleteCompaction(ctx context.Context, res catalog.CompactionResult, execErr error) error
}

// Collections is the root coordinator's collections as RootCoordService
// serves them (querynode.Collections and datanode.Collections together).
type Collections interface {
	CollectionByID(id int64) (*catalog.Collection, error)
	AllCollections(ctx context.Context) ([]*catalog.Collection, error)
	ExpireBefore(ctx context.Context, collectionID int64) (uint64, error)
}

// IDAllocator hands out TSO-shaped IDs (datanode.Allocator).
type IDAllocator interface {
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// Ticker makes a pchannel tick (querynode.Ticker).
type Ticker interface {
	Tick(ctx context.Context, pchannel string) (uint64, error)
}

// DataCoordServer serves DataCoordService from the in-process data
// coordinator's roles. Register it on a server made by rpc.NewServer, whose
// interceptor turns the errors it returns into statuses.
type DataCoordServer struct {
	coordv1.UnimplementedDataCoordServiceServer
	segs        SegmentMeta
	idx         IndexMeta
	syncs       SyncReporter
	builds      IndexBuilds
	compactions Compactions
}

// NewDataCoordServer returns a server over the data coordinator's roles
// (each may be the same *datacoord.Coordinator, or the app's metered
// wrappers of it).
func NewDataCoordServer(segs SegmentMeta, idx IndexMeta, syncs SyncReporter, builds IndexBuilds, compactions Compactions) *DataCoordServer {
	return &DataCoordServer{segs: segs, idx: idx, syncs: syncs, builds: builds, compactions: compactions}
}

// WaitDropped implements DataCoordService.WaitDropped.
func (s *DataCoordServer) WaitDropped(ctx context.Context, req *coordv1.WaitDroppedRequest) (*coordv1.WaitDroppedResponse, error) {
	w, ok := s.idx.(DropWatcher)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "coordrpc: this coordinator signals no drops")
	}
	gen, err := w.WaitDropped(ctx, req.GetAfter(), time.Duration(max(req.GetWaitMs(), 0))*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return &coordv1.WaitDroppedResponse{Generation: gen}, nil
}

// invalid is a request that cannot be decoded: code 1100, never retried.
func invalid(err error) error { return errcode.Invalid("%v", err) }

// GetRecovery implements DataCoordService.GetRecovery.
func (s *DataCoordServer) GetRecovery(ctx context.Context, req *coordv1.GetRecoveryRequest) (*coordv1.GetRecoveryResponse, error) {
	ri, err := s.segs.Recovery(ctx, req.GetVchannel())
	if err != nil {
		return nil, err
	}
	b, err := EncodeRecord("recovery info", ri)
	if err != nil {
		return nil, err
	}
	return &coordv1.GetRecoveryResponse{Recovery: b}, nil
}

// GetSegment implements DataCoordService.GetSegment.
func (s *DataCoordServer) GetSegment(ctx context.Context, req *coordv1.GetSegmentRequest) (*coordv1.GetSegmentResponse, error) {
	info, ok, err := s.segs.Segment(ctx, req.GetSegmentId())
	if err != nil || !ok {
		return &coordv1.GetSegmentResponse{}, err
	}
	b, err := EncodeRecord("segment", info)
	if err != nil {
		return nil, err
	}
	return &coordv1.GetSegmentResponse{Found: true, Segment: b}, nil
}

// ListSegmentIndexes implements DataCoordService.ListSegmentIndexes.
func (s *DataCoordServer) ListSegmentIndexes(ctx context.Context, req *coordv1.ListSegmentIndexesRequest) (*coordv1.ListSegmentIndexesResponse, error) {
	tasks, err := s.idx.SegmentIndexes(ctx, req.GetSegmentId())
	if err != nil {
		return nil, err
	}
	bs, err := EncodeRecords("index task", tasks)
	if err != nil {
		return nil, err
	}
	return &coordv1.ListSegmentIndexesResponse{Tasks: bs}, nil
}

// ListIndexes implements DataCoordService.ListIndexes.
func (s *DataCoordServer) ListIndexes(ctx context.Context, req *coordv1.ListIndexesRequest) (*coordv1.ListIndexesResponse, error) {
	idxs, err := s.idx.Indexes(ctx, req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	bs, err := EncodeRecords("index", idxs)
	if err != nil {
		return nil, err
	}
	return &coordv1.ListIndexesResponse{Indexes: bs}, nil
}

// ReportSync implements DataCoordService.ReportSync.
func (s *DataCoordServer) ReportSync(ctx context.Context, req *coordv1.ReportSyncRequest) (*coordv1.ReportSyncResponse, error) {
	r, err := DecodeRecord[catalog.SyncReport]("sync report", req.GetReport())
	if err != nil {
		return nil, invalid(err)
	}
	if err := s.syncs.Synced(ctx, r); err != nil {
		return nil, err
	}
	return &coordv1.ReportSyncResponse{}, nil
}

// ClaimIndexTask implements DataCoordService.ClaimIndexTask.
func (s *DataCoordServer) ClaimIndexTask(ctx context.Context, req *coordv1.ClaimIndexTaskRequest) (*coordv1.ClaimIndexTaskResponse, error) {
	task, idx, ok, err := s.builds.ClaimIndexTask(ctx, req.GetBuilder(), time.Duration(max(req.GetWaitMs(), 0))*time.Millisecond)
	if err != nil || !ok {
		return &coordv1.ClaimIndexTaskResponse{}, err
	}
	tb, err := EncodeRecord("index task", task)
	if err != nil {
		return nil, err
	}
	ib, err := EncodeRecord("index", idx)
	if err != nil {
		return nil, err
	}
	return &coordv1.ClaimIndexTaskResponse{Claimed: true, Task: tb, Index: ib}, nil
}

// FinishIndexTask implements DataCoordService.FinishIndexTask.
func (s *DataCoordServer) FinishIndexTask(ctx context.Context, req *coordv1.FinishIndexTaskRequest) (*coordv1.FinishIndexTaskResponse, error) {
	err := s.builds.FinishIndexTask(ctx, req.GetBuildId(), req.GetVersion(), req.GetFiles(), req.GetSizeBytes(), errorOf(req.BuildError))
	if err != nil {
		return nil, err
	}
	return &coordv1.FinishIndexTaskResponse{}, nil
}

// ClaimCompaction implements DataCoordService.ClaimCompaction.
func (s *DataCoordServer) ClaimCompaction(ctx context.Context, req *coordv1.ClaimCompactionRequest) (*coordv1.ClaimCompactionResponse, error) {
	p, ok, err := s.compactions.ClaimCompaction(ctx, req.GetExecutor(), time.Duration(max(req.GetWaitMs(), 0))*time.Millisecond)
	if err != nil || !ok {
		return &coordv1.ClaimCompactionResponse{}, err
	}
	b, err := EncodeRecord("compaction plan", p)
	if err != nil {
		return nil, err
	}
	return &coordv1.ClaimCompactionResponse{Claimed: true, Plan: b}, nil
}

// CompleteCompaction implements DataCoordService.CompleteCompaction.
func (s *DataCoordServer) CompleteCompaction(ctx context.Context, req *coordv1.CompleteCompactionRequest) (*coordv1.CompleteCompactionResponse, error) {
	res, err := DecodeRecord[catalog.CompactionResult]("compaction result", req.GetResult())
	if err != nil {
		return nil, invalid(err)
	}
	if err := s.compactions.CompleteCompaction(ctx, res, errorOf(req.ExecError)); err != nil {
		return nil, err
	}
	return &coordv1.CompleteCompactionResponse{}, nil
}

// RootCoordServer serves RootCoordService from the in-process root
// coordinator.
type RootCoordServer struct {
	coordv1.UnimplementedRootCoordServiceServer
	colls Collections
}

// NewRootCoordServer returns a server over the root coordinator's
// collections.
func NewRootCoordServer(colls Collections) *RootCoordServer {
	return &RootCoordServer{colls: colls}
}

// GetCollection implements RootCoordService.GetCollection.
func (s *RootCoordServer) GetCollection(_ context.Context, req *coordv1.GetCollectionRequest) (*coordv1.GetCollectionResponse, error) {
	c, err := s.colls.CollectionByID(req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	b, err := EncodeCollection(c)
	if err != nil {
		return nil, err
	}
	return &coordv1.GetCollectionResponse{Collection: b}, nil
}

// ListCollections implements RootCoordService.ListCollections.
func (s *RootCoordServer) ListCollections(ctx context.Context, _ *coordv1.ListCollectionsRequest) (*coordv1.ListCollectionsResponse, error) {
	cols, err := s.colls.AllCollections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(cols))
	for i, c := range cols {
		if out[i], err = EncodeCollection(c); err != nil {
			return nil, err
		}
	}
	return &coordv1.ListCollectionsResponse{Collections: out}, nil
}

// GetExpireBefore implements RootCoordService.GetExpireBefore.
func (s *RootCoordServer) GetExpireBefore(ctx context.Context, req *coordv1.GetExpireBeforeRequest) (*coordv1.GetExpireBeforeResponse, error) {
	cut, err := s.colls.ExpireBefore(ctx, req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	return &coordv1.GetExpireBeforeResponse{ExpireBefore: cut}, nil
}

// ClockServer serves ClockService from the ID allocator, the timestamp
// oracle and the WAL writer's ticks.
type ClockServer struct {
	coordv1.UnimplementedClockServiceServer
	ids    IDAllocator
	ts     IDAllocator
	ticker Ticker
}

// NewClockServer returns a server over the ID allocator (tso), the
// timestamp oracle (the tso the WAL writer stamps appends with) and the
// ticker (the WAL writer).
func NewClockServer(ids, timestamps IDAllocator, ticker Ticker) *ClockServer {
	return &ClockServer{ids: ids, ts: timestamps, ticker: ticker}
}

// AllocateTimestamps implements ClockService.AllocateTimestamps.
func (s *ClockServer) AllocateTimestamps(ctx context.Context, req *coordv1.AllocateTimestampsRequest) (*coordv1.AllocateTimestampsResponse, error) {
	if req.GetCount() == 0 {
		return nil, errcode.Invalid("allocate 0 timestamps")
	}
	first, err := s.ts.Allocate(ctx, req.GetCount())
	if err != nil {
		return nil, err
	}
	return &coordv1.AllocateTimestampsResponse{First: first}, nil
}

// AllocateIds implements ClockService.AllocateIds.
func (s *ClockServer) AllocateIds(ctx context.Context, req *coordv1.AllocateIdsRequest) (*coordv1.AllocateIdsResponse, error) {
	first, err := s.ids.Allocate(ctx, req.GetCount())
	if err != nil {
		return nil, err
	}
	return &coordv1.AllocateIdsResponse{First: first}, nil
}

// Tick implements ClockService.Tick.
func (s *ClockServer) Tick(ctx context.Context, req *coordv1.TickRequest) (*coordv1.TickResponse, error) {
	ts, err := s.ticker.Tick(ctx, req.GetPchannel())
	if err != nil {
		return nil, err
	}
	return &coordv1.TickResponse{Timestamp: ts}, nil
}

// ShardLeaders is the query coordinator's read placement as
// QueryCoordService serves it (querycoord.Coordinator.ShardLeaders).
type ShardLeaders interface {
	ShardLeaders(ctx context.Context, collectionID int64) (plan.ShardLeaders, error)
}

// QueryCoordServer serves QueryCoordService from the in-process query
// coordinator.
type QueryCoordServer struct {
	coordv1.UnimplementedQueryCoordServiceServer
	leaders ShardLeaders
}

// NewQueryCoordServer returns a server over the query coordinator's shard
// leaders.
func NewQueryCoordServer(leaders ShardLeaders) *QueryCoordServer {
	return &QueryCoordServer{leaders: leaders}
}

// GetShardLeaders implements QueryCoordService.GetShardLeaders.
func (s *QueryCoordServer) GetShardLeaders(ctx context.Context, req *coordv1.GetShardLeadersRequest) (*coordv1.GetShardLeadersResponse, error) {
	sl, err := s.leaders.ShardLeaders(ctx, req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	return encodeShardLeaders(sl), nil
}
