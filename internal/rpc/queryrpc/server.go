package queryrpc

import (
	"context"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
)

// Loader is the query node's load side as the server serves it (the
// in-process *querynode.Node; proxy.Loader is the same contract).
type Loader interface {
	Load(ctx context.Context, collectionID int64, partitions []int64, replicaNumber int, resourceGroups []string) error
	// LoadVChannels is Load of some of the collection's vchannels (none:
	// all), as a shard leader of a replica.
	LoadVChannels(ctx context.Context, collectionID int64, partitions []int64, vchannels []string) error
	Release(collectionID int64)
	ReleasePartitions(collectionID int64, partitions []int64)
	Loaded(ctx context.Context, collectionID int64) (bool, []int64, error)
	Loading(ctx context.Context, collectionID int64) (bool, error)
	WaitLoad(ctx context.Context, collectionID int64) error
	LoadProgress(ctx context.Context, collectionID int64) (int64, error)
	LoadFailure(ctx context.Context, collectionID int64) (failure, err error)
	Segments(ctx context.Context, collectionID int64) ([]plan.SegmentInfo, error)
	// Replicas is where the collection's replicas run (nil from a query
	// node, which is one replica by itself).
	Replicas(ctx context.Context, collectionID int64) ([]plan.Replica, error)
}

// Reader is the query node's read side as the server serves it.
type Reader interface {
	Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error)
	Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error)
}

// BM25Stater gathers the statistics of a full-text search on a node
// (querynode.Node.BM25Stats).
type BM25Stater interface {
	BM25Stats(ctx context.Context, req *plan.Search) (*plan.BM25Stats, error)
}

// Server serves QueryNodeService from an in-process query node. Register
// it on a server made by rpc.NewServer, whose interceptor turns the errors
// it returns into statuses carrying their Milvus codes.
type Server struct {
	querynodev1.UnimplementedQueryNodeServiceServer
	loader Loader
	reader Reader
	stats  BM25Stater
}

// NewServer returns a server over the query node's two sides. GetBM25Stats
// is served when reader is a BM25Stater too (the query node is), and
// answers Unimplemented otherwise.
func NewServer(loader Loader, reader Reader) *Server {
	stats, _ := reader.(BM25Stater)
	return &Server{loader: loader, reader: reader, stats: stats}
}

// GetBM25Stats implements QueryNodeService.GetBM25Stats.
func (s *Server) GetBM25Stats(ctx context.Context, req *querynodev1.GetBM25StatsRequest) (*querynodev1.GetBM25StatsResponse, error) {
	if s.stats == nil {
		return s.UnimplementedQueryNodeServiceServer.GetBM25Stats(ctx, req)
	}
	if req.GetSearch() == nil {
		return nil, errcode.Invalid("queryrpc: BM25 statistics request without a search")
	}
	p, err := DecodeSearch(req.GetSearch())
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	st, err := s.stats.BM25Stats(ctx, p)
	if err != nil {
		return nil, err
	}
	return &querynodev1.GetBM25StatsResponse{Stats: EncodeBM25Stats(st)}, nil
}

// Load implements QueryNodeService.Load.
func (s *Server) Load(ctx context.Context, req *querynodev1.LoadRequest) (*querynodev1.LoadResponse, error) {
	var err error
	if len(req.GetVchannels()) > 0 {
		err = s.loader.LoadVChannels(ctx, req.GetCollectionId(), req.GetPartitionIds(), req.GetVchannels())
	} else {
		err = s.loader.Load(ctx, req.GetCollectionId(), req.GetPartitionIds(), int(req.GetReplicaNumber()), req.GetResourceGroups())
	}
	if err != nil {
		return nil, err
	}
	return &querynodev1.LoadResponse{}, nil
}

// Release implements QueryNodeService.Release.
func (s *Server) Release(_ context.Context, req *querynodev1.ReleaseRequest) (*querynodev1.ReleaseResponse, error) {
	s.loader.Release(req.GetCollectionId())
	return &querynodev1.ReleaseResponse{}, nil
}

// ReleasePartitions implements QueryNodeService.ReleasePartitions.
func (s *Server) ReleasePartitions(_ context.Context, req *querynodev1.ReleasePartitionsRequest) (*querynodev1.ReleasePartitionsResponse, error) {
	s.loader.ReleasePartitions(req.GetCollectionId(), req.GetPartitionIds())
	return &querynodev1.ReleasePartitionsResponse{}, nil
}

// GetLoadState implements QueryNodeService.GetLoadState.
func (s *Server) GetLoadState(ctx context.Context, req *querynodev1.GetLoadStateRequest) (*querynodev1.GetLoadStateResponse, error) {
	id := req.GetCollectionId()
	loaded, parts, err := s.loader.Loaded(ctx, id)
	if err != nil {
		return nil, err
	}
	loading, err := s.loader.Loading(ctx, id)
	if err != nil {
		return nil, err
	}
	progress, err := s.loader.LoadProgress(ctx, id)
	if err != nil {
		return nil, err
	}
	resp := &querynodev1.GetLoadStateResponse{Loaded: loaded, PartitionIds: parts, Loading: loading, Progress: progress}
	failure, err := s.loader.LoadFailure(ctx, id)
	if err != nil {
		return nil, err
	}
	if failure != nil {
		st := errcode.Status(failure)
		resp.Failure = &querynodev1.Status{Code: st.GetCode(), Reason: st.GetReason()}
	}
	return resp, nil
}

// WaitLoad implements QueryNodeService.WaitLoad.
func (s *Server) WaitLoad(ctx context.Context, req *querynodev1.WaitLoadRequest) (*querynodev1.WaitLoadResponse, error) {
	if err := s.loader.WaitLoad(ctx, req.GetCollectionId()); err != nil {
		return nil, err
	}
	return &querynodev1.WaitLoadResponse{}, nil
}

// ListSegments implements QueryNodeService.ListSegments.
func (s *Server) ListSegments(ctx context.Context, req *querynodev1.ListSegmentsRequest) (*querynodev1.ListSegmentsResponse, error) {
	segs, err := s.loader.Segments(ctx, req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	return &querynodev1.ListSegmentsResponse{Segments: encodeSegments(segs)}, nil
}

// GetReplicas implements QueryNodeService.GetReplicas.
func (s *Server) GetReplicas(ctx context.Context, req *querynodev1.GetReplicasRequest) (*querynodev1.GetReplicasResponse, error) {
	reps, err := s.loader.Replicas(ctx, req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	return &querynodev1.GetReplicasResponse{Replicas: encodeReplicas(reps)}, nil
}

// Search implements QueryNodeService.Search.
func (s *Server) Search(ctx context.Context, req *querynodev1.SearchRequest) (*querynodev1.SearchResponse, error) {
	p, err := DecodeSearch(req)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	res, err := s.reader.Search(ctx, p)
	if err != nil {
		return nil, err
	}
	b, err := MarshalSearchResult(res)
	if err != nil {
		return nil, err
	}
	return &querynodev1.SearchResponse{Result: b}, nil
}

// Query implements QueryNodeService.Query.
func (s *Server) Query(ctx context.Context, req *querynodev1.QueryRequest) (*querynodev1.QueryResponse, error) {
	p, err := DecodeQuery(req)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	res, err := s.reader.Query(ctx, p)
	if err != nil {
		return nil, err
	}
	return EncodeQueryResult(res)
}
