package queryrpc

import (
	"context"
	"maps"
	"slices"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
)

// Spreader is a query node's side of sealed segments spread over a
// replica's nodes (querycoord.SegmentServer; the in-process
// *querynode.Node): the server serves its calls when the loader is one.
type Spreader interface {
	Sealed(collectionID int64, vchannel string) ([]plan.SegmentInfo, error)
	SetDistribution(ctx context.Context, collectionID int64, vchannel string, want map[int64]int64,
		workers map[int64]string) (map[int64]int64, error)
	LoadSegments(ctx context.Context, collectionID int64, vchannel string, segments []int64) error
	ReleaseSegments(collectionID int64, vchannel string, segments []int64)
	WorkerSegments(collectionID int64) map[string][]int64
}

// spreader returns the loader as a Spreader, or the Unimplemented error.
func (s *Server) spreader() (Spreader, error) {
	if sp, ok := s.loader.(Spreader); ok {
		return sp, nil
	}
	return nil, errcode.New(errcode.Unexpected, "queryrpc: this query node does not serve spread segments")
}

// LoadSegments implements QueryNodeService.LoadSegments.
func (s *Server) LoadSegments(ctx context.Context, req *querynodev1.LoadSegmentsRequest) (*querynodev1.LoadSegmentsResponse, error) {
	sp, err := s.spreader()
	if err != nil {
		return nil, err
	}
	if err := sp.LoadSegments(ctx, req.GetCollectionId(), req.GetVchannel(), req.GetSegmentIds()); err != nil {
		return nil, err
	}
	return &querynodev1.LoadSegmentsResponse{}, nil
}

// ReleaseSegments implements QueryNodeService.ReleaseSegments.
func (s *Server) ReleaseSegments(_ context.Context, req *querynodev1.ReleaseSegmentsRequest) (*querynodev1.ReleaseSegmentsResponse, error) {
	sp, err := s.spreader()
	if err != nil {
		return nil, err
	}
	sp.ReleaseSegments(req.GetCollectionId(), req.GetVchannel(), req.GetSegmentIds())
	return &querynodev1.ReleaseSegmentsResponse{}, nil
}

// ListWorkerSegments implements QueryNodeService.ListWorkerSegments.
func (s *Server) ListWorkerSegments(_ context.Context, req *querynodev1.ListWorkerSegmentsRequest,
) (*querynodev1.ListWorkerSegmentsResponse, error) {
	sp, err := s.spreader()
	if err != nil {
		return nil, err
	}
	held := sp.WorkerSegments(req.GetCollectionId())
	resp := &querynodev1.ListWorkerSegmentsResponse{}
	for _, v := range slices.Sorted(maps.Keys(held)) {
		resp.Shards = append(resp.Shards, &querynodev1.WorkerShard{Vchannel: v, SegmentIds: held[v]})
	}
	return resp, nil
}

// ListSealed implements QueryNodeService.ListSealed.
func (s *Server) ListSealed(_ context.Context, req *querynodev1.ListSealedRequest) (*querynodev1.ListSealedResponse, error) {
	sp, err := s.spreader()
	if err != nil {
		return nil, err
	}
	segs, err := sp.Sealed(req.GetCollectionId(), req.GetVchannel())
	if err != nil {
		return nil, err
	}
	resp := &querynodev1.ListSealedResponse{}
	for _, sg := range segs {
		m := &querynodev1.SealedSegment{Id: sg.ID, PartitionId: sg.PartitionID, Rows: sg.Rows, Level: int32(sg.Level)}
		if len(sg.NodeIDs) > 0 {
			m.WorkerNodeId = sg.NodeIDs[0]
		}
		resp.Segments = append(resp.Segments, m)
	}
	return resp, nil
}

// SetDistribution implements QueryNodeService.SetDistribution.
func (s *Server) SetDistribution(ctx context.Context, req *querynodev1.SetDistributionRequest,
) (*querynodev1.SetDistributionResponse, error) {
	sp, err := s.spreader()
	if err != nil {
		return nil, err
	}
	got, err := sp.SetDistribution(ctx, req.GetCollectionId(), req.GetVchannel(), req.GetSegments(), req.GetWorkerAddresses())
	if err != nil {
		return nil, err
	}
	return &querynodev1.SetDistributionResponse{Segments: got}, nil
}

// LoadSegments makes the node serve segments of a vchannel as a worker.
func (c *Client) LoadSegments(ctx context.Context, collectionID int64, vchannel string, segments []int64) error {
	ctx, cancel := c.loadContext(ctx)
	defer cancel()
	_, err := c.c.LoadSegments(ctx, &querynodev1.LoadSegmentsRequest{CollectionId: collectionID, Vchannel: vchannel, SegmentIds: segments})
	return err
}

// ReleaseSegments stops the node serving segments of a vchannel as a
// worker; a failure is logged.
func (c *Client) ReleaseSegments(collectionID int64, vchannel string, segments []int64) {
	_, err := c.c.ReleaseSegments(context.Background(),
		&querynodev1.ReleaseSegmentsRequest{CollectionId: collectionID, Vchannel: vchannel, SegmentIds: segments})
	c.failed(err, "release_segments", collectionID)
}

// WorkerSegments lists the segments the node serves as a worker, by
// vchannel (none when the call failed, which is logged).
func (c *Client) WorkerSegments(collectionID int64) map[string][]int64 {
	resp, err := c.c.ListWorkerSegments(context.Background(), &querynodev1.ListWorkerSegmentsRequest{CollectionId: collectionID})
	c.failed(err, "list_worker_segments", collectionID)
	out := map[string][]int64{}
	for _, sh := range resp.GetShards() {
		out[sh.GetVchannel()] = sh.GetSegmentIds()
	}
	return out
}

// Sealed lists the sealed segments of a vchannel the node leads.
func (c *Client) Sealed(collectionID int64, vchannel string) ([]plan.SegmentInfo, error) {
	resp, err := c.c.ListSealed(context.Background(), &querynodev1.ListSealedRequest{CollectionId: collectionID, Vchannel: vchannel})
	if err != nil {
		return nil, err
	}
	out := make([]plan.SegmentInfo, 0, len(resp.GetSegments()))
	for _, m := range resp.GetSegments() {
		sg := plan.SegmentInfo{ID: m.GetId(), PartitionID: m.GetPartitionId(), Rows: m.GetRows(), Level: int(m.GetLevel())}
		if m.GetWorkerNodeId() != 0 {
			sg.NodeIDs = []int64{m.GetWorkerNodeId()}
		}
		out = append(out, sg)
	}
	return out, nil
}

// SetDistribution sets a leader's distribution of a vchannel's segments.
func (c *Client) SetDistribution(ctx context.Context, collectionID int64, vchannel string, want map[int64]int64,
	workers map[int64]string,
) (map[int64]int64, error) {
	ctx, cancel := c.loadContext(ctx)
	defer cancel()
	resp, err := c.c.SetDistribution(ctx, &querynodev1.SetDistributionRequest{
		CollectionId: collectionID, Vchannel: vchannel, Segments: want, WorkerAddresses: workers,
	})
	if err != nil {
		return nil, err
	}
	return resp.GetSegments(), nil
}
