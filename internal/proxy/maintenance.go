package proxy

import (
	"cmp"
	"context"
	"math"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
)

// ManualCompaction plans every possible compaction of a collection now.
func (p *Proxy) ManualCompaction(ctx context.Context, req *milvuspb.ManualCompactionRequest) (*milvuspb.ManualCompactionResponse, error) {
	col, err := p.collectionByNameOrID(ctx, req.GetDbName(), req.GetCollectionName(), req.GetCollectionID())
	if err != nil {
		return &milvuspb.ManualCompactionResponse{Status: errcode.Status(err)}, nil
	}
	id, err := p.data.ManualCompaction(ctx, col.ID, targetSizeBytes(req.GetTargetSize()))
	if err != nil {
		return &milvuspb.ManualCompactionResponse{Status: errcode.Status(err)}, nil
	}
	_, _, _, plans, err := p.data.CompactionState(ctx, id)
	if err != nil {
		return &milvuspb.ManualCompactionResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.ManualCompactionResponse{Status: ok(), CompactionID: id, CompactionPlanCount: int32(len(plans))}, nil
}

// targetSizeBytes converts a ManualCompactionRequest's target_size (MB, as
// pymilvus sends it; 0 = none) to bytes, saturating: VectorDBBench asks for
// (2^63-1)/2^20 MB to merge everything.
func targetSizeBytes(mb int64) int64 {
	switch {
	case mb <= 0:
		return 0
	case mb > math.MaxInt64>>20:
		return math.MaxInt64
	}
	return mb << 20
}

// collectionByNameOrID resolves a request's collection by name, or by ID
// when it names none.
func (p *Proxy) collectionByNameOrID(ctx context.Context, db, name string, id int64) (*catalog.Collection, error) {
	if name != "" {
		return p.collection(ctx, db, name)
	}
	return p.collectionByID(ctx, id)
}

func (p *Proxy) collectionByID(ctx context.Context, id int64) (*catalog.Collection, error) {
	for _, db := range []string{"default"} {
		cols, err := p.meta.Collections(ctx, db)
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			if c.ID == id {
				return c, nil
			}
		}
	}
	return nil, errcode.New(errcode.CollectionNotFound, "collection not found[collection=%d]", id)
}

func compactionState(executing int) commonpb.CompactionState {
	if executing > 0 {
		return commonpb.CompactionState_Executing
	}
	return commonpb.CompactionState_Completed
}

// GetCompactionState reports a manual compaction's progress.
func (p *Proxy) GetCompactionState(ctx context.Context, req *milvuspb.GetCompactionStateRequest) (*milvuspb.GetCompactionStateResponse, error) {
	executing, completed, failed, _, err := p.data.CompactionState(ctx, req.GetCompactionID())
	if err != nil {
		return &milvuspb.GetCompactionStateResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.GetCompactionStateResponse{
		Status: ok(), State: compactionState(executing),
		ExecutingPlanNo: int64(executing), CompletedPlanNo: int64(completed), FailedPlanNo: int64(failed),
	}, nil
}

// GetCompactionStateWithPlans reports a manual compaction's plans.
func (p *Proxy) GetCompactionStateWithPlans(ctx context.Context, req *milvuspb.GetCompactionPlansRequest) (*milvuspb.GetCompactionPlansResponse, error) {
	executing, _, _, plans, err := p.data.CompactionState(ctx, req.GetCompactionID())
	if err != nil {
		return &milvuspb.GetCompactionPlansResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.GetCompactionPlansResponse{Status: ok(), State: compactionState(executing)}
	for _, pl := range plans {
		mi := &milvuspb.CompactionMergeInfo{}
		for _, in := range pl.Inputs {
			mi.Sources = append(mi.Sources, in.ID)
		}
		resp.MergeInfos = append(resp.MergeInfos, mi)
	}
	return resp, nil
}

func segmentLevel(l catalog.SegmentLevel) commonpb.SegmentLevel {
	switch l {
	case catalog.LevelL0:
		return commonpb.SegmentLevel_L0
	case catalog.LevelL2:
		return commonpb.SegmentLevel_L2
	}
	return commonpb.SegmentLevel_L1
}

// GetPersistentSegmentInfo lists a collection's segments as the data coordinator knows them.
func (p *Proxy) GetPersistentSegmentInfo(ctx context.Context, req *milvuspb.GetPersistentSegmentInfoRequest) (*milvuspb.GetPersistentSegmentInfoResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetPersistentSegmentInfoResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.GetPersistentSegmentInfoResponse{Status: ok()}
	for _, s := range p.data.Segments(col.ID) {
		resp.Infos = append(resp.Infos, &milvuspb.PersistentSegmentInfo{
			SegmentID: s.ID, CollectionID: s.CollectionID,
			PartitionID: s.PartitionID, NumRows: s.NumRows, State: commonpb.SegmentState(s.State), Level: segmentLevel(s.Level),
			IsSorted: s.IsSorted(),
		})
	}
	return resp, nil
}

// GetQuerySegmentInfo lists the segments the query node serves.
func (p *Proxy) GetQuerySegmentInfo(ctx context.Context, req *milvuspb.GetQuerySegmentInfoRequest) (*milvuspb.GetQuerySegmentInfoResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetQuerySegmentInfoResponse{Status: errcode.Status(err)}, nil
	}
	segs, err := p.query.Segments(ctx, col.ID)
	if err != nil {
		return &milvuspb.GetQuerySegmentInfoResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.GetQuerySegmentInfoResponse{Status: ok()}
	for _, s := range segs {
		state := commonpb.SegmentState_Sealed
		if s.Growing {
			state = commonpb.SegmentState_Growing
		}
		nodes := s.NodeIDs
		if len(nodes) == 0 {
			nodes = []int64{StandaloneNodeID} // one query node
		}
		resp.Infos = append(resp.Infos, &milvuspb.QuerySegmentInfo{
			SegmentID: s.ID, CollectionID: col.ID,
			PartitionID: s.PartitionID, NumRows: s.Rows, State: state, NodeID: nodes[0], NodeIds: nodes,
			Level: segmentLevel(catalog.SegmentLevel(s.Level)),
		})
	}
	return resp, nil
}

// StandaloneNodeID is the node ID the proxy reports for the standalone's
// one query node.
const StandaloneNodeID = 1

// GetReplicas reports where a loaded collection's replicas run: their
// nodes and, for each shard (vchannel), its leader and address. The
// standalone's one query node is one replica on node 1.
func (p *Proxy) GetReplicas(ctx context.Context, req *milvuspb.GetReplicasRequest) (*milvuspb.GetReplicasResponse, error) {
	col, err := p.collectionByNameOrID(ctx, req.GetDbName(), req.GetCollectionName(), req.GetCollectionID())
	if err != nil {
		return &milvuspb.GetReplicasResponse{Status: errcode.Status(err)}, nil
	}
	replicas, err := p.query.Replicas(ctx, col.ID)
	if err != nil {
		return &milvuspb.GetReplicasResponse{Status: errcode.Status(err)}, nil
	}
	loaded, parts, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return &milvuspb.GetReplicasResponse{Status: errcode.Status(err)}, nil
	}
	if !loaded {
		return &milvuspb.GetReplicasResponse{Status: errcode.Status(
			errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]", col.Name))}, nil
	}
	if parts == nil {
		for _, part := range col.Partitions {
			parts = append(parts, part.ID)
		}
	}
	if replicas == nil {
		leaders := map[string]int64{}
		for _, ch := range col.VChannels {
			leaders[ch] = StandaloneNodeID
		}
		replicas = []plan.Replica{{ID: 1, Nodes: []int64{StandaloneNodeID}, Leaders: leaders}}
	}
	resp := &milvuspb.GetReplicasResponse{Status: ok()}
	for _, r := range replicas {
		info := &milvuspb.ReplicaInfo{
			ReplicaID: r.ID, CollectionID: col.ID, PartitionIds: parts, NodeIds: r.Nodes,
			ResourceGroupName: cmp.Or(r.ResourceGroup, defaultResourceGroup),
		}
		for _, ch := range col.VChannels {
			leader, ok := r.Leaders[ch]
			if !ok {
				continue
			}
			info.ShardReplicas = append(info.ShardReplicas, &milvuspb.ShardReplica{
				LeaderID: leader, LeaderAddr: r.Addresses[leader], DmChannelName: ch, NodeIds: []int64{leader},
			})
		}
		resp.Replicas = append(resp.Replicas, info)
	}
	return resp, nil
}

// defaultResourceGroup is Milvus's one resource group.
const defaultResourceGroup = "__default_resource_group"
