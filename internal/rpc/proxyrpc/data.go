package proxyrpc

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// DataCoord is the data coordinator as DataService serves it: the roles of
// proxy.DataCoord but the segment allocator, which the DML append calls
// where the WAL is (DmlService).
type DataCoord interface {
	Flush(ctx context.Context, collectionID int64, vchannels []string) ([]int64, uint64, error)
	FlushState(ctx context.Context, segIDs []int64, vchannels []string, flushTS uint64) (bool, error)
	RowCount(ctx context.Context, collectionID int64, partitions []int64) (int64, error)
	Segments(collectionID int64) []catalog.SegmentInfo
	DropCollection(ctx context.Context, collectionID int64, vchannels []string) error
	DropPartition(ctx context.Context, collectionID, partitionID int64) error
	Truncate(ctx context.Context, collectionID int64) error
	CreateIndex(ctx context.Context, idx catalog.IndexInfo) error
	Indexes(ctx context.Context, collectionID int64) ([]catalog.IndexInfo, error)
	IndexProgress(ctx context.Context, indexID int64) (catalog.IndexProgress, error)
	DropIndex(ctx context.Context, collectionID int64, name string) error
	AlterIndex(ctx context.Context, collectionID int64, name string, set map[string]string, deleteKeys []string) error
	ManualCompaction(ctx context.Context, collectionID, targetSize int64) (int64, error)
	CompactionState(ctx context.Context, triggerID int64) (executing, completed, failed int, plans []catalog.CompactionPlan, err error)
}

// DataServer serves DataService from the data coordinator.
type DataServer struct {
	proxyv1.UnimplementedDataServiceServer
	data DataCoord
}

// NewDataServer returns a server over the data coordinator.
func NewDataServer(data DataCoord) *DataServer { return &DataServer{data: data} }

// Flush implements DataService.Flush.
func (s *DataServer) Flush(ctx context.Context, req *proxyv1.FlushRequest) (*proxyv1.FlushResponse, error) {
	segs, ts, err := s.data.Flush(ctx, req.GetCollectionId(), req.GetVchannels())
	if err != nil {
		return nil, err
	}
	return &proxyv1.FlushResponse{SegmentIds: segs, FlushTs: ts}, nil
}

// GetFlushState implements DataService.GetFlushState.
func (s *DataServer) GetFlushState(ctx context.Context, req *proxyv1.GetFlushStateRequest) (*proxyv1.GetFlushStateResponse, error) {
	flushed, err := s.data.FlushState(ctx, req.GetSegmentIds(), req.GetVchannels(), req.GetFlushTs())
	if err != nil {
		return nil, err
	}
	return &proxyv1.GetFlushStateResponse{Flushed: flushed}, nil
}

// GetRowCount implements DataService.GetRowCount.
func (s *DataServer) GetRowCount(ctx context.Context, req *proxyv1.GetRowCountRequest) (*proxyv1.GetRowCountResponse, error) {
	n, err := s.data.RowCount(ctx, req.GetCollectionId(), req.GetPartitionIds())
	if err != nil {
		return nil, err
	}
	return &proxyv1.GetRowCountResponse{RowCount: n}, nil
}

// ListSegments implements DataService.ListSegments.
func (s *DataServer) ListSegments(_ context.Context, req *proxyv1.ListSegmentsRequest) (*proxyv1.ListSegmentsResponse, error) {
	bs, err := coordrpc.EncodeRecords("segment", s.data.Segments(req.GetCollectionId()))
	if err != nil {
		return nil, err
	}
	return &proxyv1.ListSegmentsResponse{Segments: bs}, nil
}

// DropCollectionData implements DataService.DropCollectionData.
func (s *DataServer) DropCollectionData(ctx context.Context, req *proxyv1.DropCollectionDataRequest) (*proxyv1.DropCollectionDataResponse, error) {
	if err := s.data.DropCollection(ctx, req.GetCollectionId(), req.GetVchannels()); err != nil {
		return nil, err
	}
	return &proxyv1.DropCollectionDataResponse{}, nil
}

// DropPartitionData implements DataService.DropPartitionData.
func (s *DataServer) DropPartitionData(ctx context.Context, req *proxyv1.DropPartitionDataRequest) (*proxyv1.DropPartitionDataResponse, error) {
	if err := s.data.DropPartition(ctx, req.GetCollectionId(), req.GetPartitionId()); err != nil {
		return nil, err
	}
	return &proxyv1.DropPartitionDataResponse{}, nil
}

// Truncate implements DataService.Truncate.
func (s *DataServer) Truncate(ctx context.Context, req *proxyv1.TruncateRequest) (*proxyv1.TruncateResponse, error) {
	if err := s.data.Truncate(ctx, req.GetCollectionId()); err != nil {
		return nil, err
	}
	return &proxyv1.TruncateResponse{}, nil
}

// CreateIndex implements DataService.CreateIndex.
func (s *DataServer) CreateIndex(ctx context.Context, req *proxyv1.CreateIndexRequest) (*proxyv1.CreateIndexResponse, error) {
	idx, err := coordrpc.DecodeRecord[catalog.IndexInfo]("index", req.GetIndex())
	if err != nil {
		return nil, invalid(err)
	}
	if err := s.data.CreateIndex(ctx, idx); err != nil {
		return nil, err
	}
	return &proxyv1.CreateIndexResponse{}, nil
}

// ListIndexes implements DataService.ListIndexes.
func (s *DataServer) ListIndexes(ctx context.Context, req *proxyv1.ListIndexesRequest) (*proxyv1.ListIndexesResponse, error) {
	idxs, err := s.data.Indexes(ctx, req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	bs, err := coordrpc.EncodeRecords("index", idxs)
	if err != nil {
		return nil, err
	}
	return &proxyv1.ListIndexesResponse{Indexes: bs}, nil
}

// GetIndexProgress implements DataService.GetIndexProgress.
func (s *DataServer) GetIndexProgress(ctx context.Context, req *proxyv1.GetIndexProgressRequest) (*proxyv1.GetIndexProgressResponse, error) {
	p, err := s.data.IndexProgress(ctx, req.GetIndexId())
	if err != nil {
		return nil, err
	}
	b, err := coordrpc.EncodeRecord("index progress", p)
	if err != nil {
		return nil, err
	}
	return &proxyv1.GetIndexProgressResponse{Progress: b}, nil
}

// DropIndex implements DataService.DropIndex.
func (s *DataServer) DropIndex(ctx context.Context, req *proxyv1.DropIndexRequest) (*proxyv1.DropIndexResponse, error) {
	if err := s.data.DropIndex(ctx, req.GetCollectionId(), req.GetName()); err != nil {
		return nil, err
	}
	return &proxyv1.DropIndexResponse{}, nil
}

// AlterIndex implements DataService.AlterIndex.
func (s *DataServer) AlterIndex(ctx context.Context, req *proxyv1.AlterIndexRequest) (*proxyv1.AlterIndexResponse, error) {
	if err := s.data.AlterIndex(ctx, req.GetCollectionId(), req.GetName(), req.GetSet(), req.GetDeleteKeys()); err != nil {
		return nil, err
	}
	return &proxyv1.AlterIndexResponse{}, nil
}

// ManualCompaction implements DataService.ManualCompaction.
func (s *DataServer) ManualCompaction(ctx context.Context, req *proxyv1.ManualCompactionRequest) (*proxyv1.ManualCompactionResponse, error) {
	id, err := s.data.ManualCompaction(ctx, req.GetCollectionId(), req.GetTargetSize())
	if err != nil {
		return nil, err
	}
	return &proxyv1.ManualCompactionResponse{TriggerId: id}, nil
}

// GetCompactionState implements DataService.GetCompactionState.
func (s *DataServer) GetCompactionState(ctx context.Context, req *proxyv1.GetCompactionStateRequest) (*proxyv1.GetCompactionStateResponse, error) {
	ex, done, failed, plans, err := s.data.CompactionState(ctx, req.GetTriggerId())
	if err != nil {
		return nil, err
	}
	bs, err := coordrpc.EncodeRecords("compaction plan", plans)
	if err != nil {
		return nil, err
	}
	return &proxyv1.GetCompactionStateResponse{Executing: int64(ex), Completed: int64(done), Failed: int64(failed), Plans: bs}, nil
}

// Data is a remote data coordinator as the proxy uses it: the roles of
// proxy.DataCoord but SegmentAllocator (the DML append assigns segments on
// the coordinator). A failed call is the method's error, never an empty
// answer; Segments alone has no error (the role's in-process callers
// read it from memory): when the call fails the error is logged and the
// answer is no segments.
type Data struct {
	c      proxyv1.DataServiceClient
	logger *slog.Logger
}

// NewData returns a client of DataService over conn.
func NewData(conn grpc.ClientConnInterface, logger *slog.Logger) *Data {
	return &Data{c: proxyv1.NewDataServiceClient(conn), logger: logger}
}

func (d *Data) failed(call string, err error) {
	d.logger.Warn("data coordinator call failed", "call", call, "err", err)
}

// Flush implements proxy.Flusher.
func (d *Data) Flush(ctx context.Context, collectionID int64, vchannels []string) ([]int64, uint64, error) {
	resp, err := d.c.Flush(ctx, &proxyv1.FlushRequest{CollectionId: collectionID, Vchannels: vchannels})
	if err != nil {
		return nil, 0, err
	}
	return resp.GetSegmentIds(), resp.GetFlushTs(), nil
}

// FlushState implements proxy.Flusher.
func (d *Data) FlushState(ctx context.Context, segIDs []int64, vchannels []string, flushTS uint64) (bool, error) {
	resp, err := d.c.GetFlushState(ctx, &proxyv1.GetFlushStateRequest{SegmentIds: segIDs, Vchannels: vchannels, FlushTs: flushTS})
	if err != nil {
		return false, err
	}
	return resp.GetFlushed(), nil
}

// RowCount implements proxy.SegmentLister.
func (d *Data) RowCount(ctx context.Context, collectionID int64, partitions []int64) (int64, error) {
	resp, err := d.c.GetRowCount(ctx, &proxyv1.GetRowCountRequest{CollectionId: collectionID, PartitionIds: partitions})
	if err != nil {
		return 0, err
	}
	return resp.GetRowCount(), nil
}

// Segments implements proxy.SegmentLister.
func (d *Data) Segments(collectionID int64) []catalog.SegmentInfo {
	resp, err := d.c.ListSegments(context.Background(), &proxyv1.ListSegmentsRequest{CollectionId: collectionID})
	if err == nil {
		var segs []catalog.SegmentInfo
		if segs, err = coordrpc.DecodeRecords[catalog.SegmentInfo]("segment", resp.GetSegments()); err == nil {
			return segs
		}
	}
	d.failed("ListSegments", err)
	return nil
}

// DropCollection implements proxy.DataDropper.
func (d *Data) DropCollection(ctx context.Context, collectionID int64, vchannels []string) error {
	_, err := d.c.DropCollectionData(ctx, &proxyv1.DropCollectionDataRequest{CollectionId: collectionID, Vchannels: vchannels})
	return err
}

// DropPartition implements proxy.DataDropper.
func (d *Data) DropPartition(ctx context.Context, collectionID, partitionID int64) error {
	_, err := d.c.DropPartitionData(ctx, &proxyv1.DropPartitionDataRequest{CollectionId: collectionID, PartitionId: partitionID})
	return err
}

// Truncate implements proxy.DataDropper.
func (d *Data) Truncate(ctx context.Context, collectionID int64) error {
	_, err := d.c.Truncate(ctx, &proxyv1.TruncateRequest{CollectionId: collectionID})
	return err
}

// CreateIndex implements proxy.IndexCoord.
func (d *Data) CreateIndex(ctx context.Context, idx catalog.IndexInfo) error {
	b, err := coordrpc.EncodeRecord("index", idx)
	if err != nil {
		return err
	}
	_, err = d.c.CreateIndex(ctx, &proxyv1.CreateIndexRequest{Index: b})
	return err
}

// Indexes implements proxy.IndexCoord.
func (d *Data) Indexes(ctx context.Context, collectionID int64) ([]catalog.IndexInfo, error) {
	resp, err := d.c.ListIndexes(ctx, &proxyv1.ListIndexesRequest{CollectionId: collectionID})
	if err != nil {
		return nil, err
	}
	return coordrpc.DecodeRecords[catalog.IndexInfo]("index", resp.GetIndexes())
}

// IndexProgress implements proxy.IndexCoord.
func (d *Data) IndexProgress(ctx context.Context, indexID int64) (catalog.IndexProgress, error) {
	resp, err := d.c.GetIndexProgress(ctx, &proxyv1.GetIndexProgressRequest{IndexId: indexID})
	if err != nil {
		return catalog.IndexProgress{}, err
	}
	return coordrpc.DecodeRecord[catalog.IndexProgress]("index progress", resp.GetProgress())
}

// DropIndex implements proxy.IndexCoord.
func (d *Data) DropIndex(ctx context.Context, collectionID int64, name string) error {
	_, err := d.c.DropIndex(ctx, &proxyv1.DropIndexRequest{CollectionId: collectionID, Name: name})
	return err
}

// AlterIndex implements proxy.IndexCoord.
func (d *Data) AlterIndex(ctx context.Context, collectionID int64, name string, set map[string]string, deleteKeys []string) error {
	_, err := d.c.AlterIndex(ctx, &proxyv1.AlterIndexRequest{CollectionId: collectionID, Name: name, Set: set, DeleteKeys: deleteKeys})
	return err
}

// ManualCompaction implements proxy.CompactionCoord.
func (d *Data) ManualCompaction(ctx context.Context, collectionID, targetSize int64) (int64, error) {
	resp, err := d.c.ManualCompaction(ctx, &proxyv1.ManualCompactionRequest{CollectionId: collectionID, TargetSize: targetSize})
	if err != nil {
		return 0, err
	}
	return resp.GetTriggerId(), nil
}

// CompactionState implements proxy.CompactionCoord.
func (d *Data) CompactionState(ctx context.Context, triggerID int64) (executing, completed, failed int,
	plans []catalog.CompactionPlan, err error,
) {
	resp, err := d.c.GetCompactionState(ctx, &proxyv1.GetCompactionStateRequest{TriggerId: triggerID})
	if err != nil {
		return 0, 0, 0, nil, err
	}
	if plans, err = coordrpc.DecodeRecords[catalog.CompactionPlan]("compaction plan", resp.GetPlans()); err != nil {
		return 0, 0, 0, nil, err
	}
	return int(resp.GetExecuting()), int(resp.GetCompleted()), int(resp.GetFailed()), plans, nil
}
