package proxyrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/rgroup"
	"github.com/strata-db/strata/internal/rpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// ResourceGroups keeps Milvus's resource groups and moves query nodes and
// replicas between them: the coordinator's query coordinator
// (proxy.ResourceGroups is the same contract).
type ResourceGroups interface {
	CreateResourceGroup(ctx context.Context, name string, cfg *rgroup.Config) error
	UpdateResourceGroups(ctx context.Context, cfgs map[string]rgroup.Config) error
	DropResourceGroup(ctx context.Context, name string) error
	TransferNode(ctx context.Context, source, target string, n int) error
	TransferReplica(ctx context.Context, source, target string, collectionID int64, n int) error
	ListResourceGroups(ctx context.Context) ([]string, error)
	DescribeResourceGroup(ctx context.Context, name string) (rgroup.Info, error)
}

// ResourceGroupServer serves ResourceGroupService from the query
// coordinator.
type ResourceGroupServer struct {
	proxyv1.UnimplementedResourceGroupServiceServer
	g ResourceGroups
}

// NewResourceGroupServer returns a server over the resource groups.
func NewResourceGroupServer(g ResourceGroups) *ResourceGroupServer {
	return &ResourceGroupServer{g: g}
}

// CreateResourceGroup implements ResourceGroupService.CreateResourceGroup.
func (s *ResourceGroupServer) CreateResourceGroup(ctx context.Context, req *proxyv1.CreateResourceGroupRequest) (*proxyv1.CreateResourceGroupResponse, error) {
	var cfg *rgroup.Config
	if req.GetConfig() != nil {
		c := decodeGroupConfig(req.GetConfig())
		cfg = &c
	}
	return &proxyv1.CreateResourceGroupResponse{}, s.g.CreateResourceGroup(ctx, req.GetName(), cfg)
}

// UpdateResourceGroups implements ResourceGroupService.UpdateResourceGroups.
func (s *ResourceGroupServer) UpdateResourceGroups(ctx context.Context, req *proxyv1.UpdateResourceGroupsRequest) (*proxyv1.UpdateResourceGroupsResponse, error) {
	cfgs := make(map[string]rgroup.Config, len(req.GetConfigs()))
	for name, c := range req.GetConfigs() {
		cfgs[name] = decodeGroupConfig(c)
	}
	return &proxyv1.UpdateResourceGroupsResponse{}, s.g.UpdateResourceGroups(ctx, cfgs)
}

// DropResourceGroup implements ResourceGroupService.DropResourceGroup.
func (s *ResourceGroupServer) DropResourceGroup(ctx context.Context, req *proxyv1.DropResourceGroupRequest) (*proxyv1.DropResourceGroupResponse, error) {
	return &proxyv1.DropResourceGroupResponse{}, s.g.DropResourceGroup(ctx, req.GetName())
}

// TransferNode implements ResourceGroupService.TransferNode.
func (s *ResourceGroupServer) TransferNode(ctx context.Context, req *proxyv1.TransferNodeRequest) (*proxyv1.TransferNodeResponse, error) {
	return &proxyv1.TransferNodeResponse{}, s.g.TransferNode(ctx, req.GetSource(), req.GetTarget(), int(req.GetCount()))
}

// TransferReplica implements ResourceGroupService.TransferReplica.
func (s *ResourceGroupServer) TransferReplica(ctx context.Context, req *proxyv1.TransferReplicaRequest) (*proxyv1.TransferReplicaResponse, error) {
	return &proxyv1.TransferReplicaResponse{},
		s.g.TransferReplica(ctx, req.GetSource(), req.GetTarget(), req.GetCollectionId(), int(req.GetCount()))
}

// ListResourceGroups implements ResourceGroupService.ListResourceGroups.
func (s *ResourceGroupServer) ListResourceGroups(ctx context.Context, _ *proxyv1.ListResourceGroupsRequest) (*proxyv1.ListResourceGroupsResponse, error) {
	names, err := s.g.ListResourceGroups(ctx)
	if err != nil {
		return nil, err
	}
	return &proxyv1.ListResourceGroupsResponse{Names: names}, nil
}

// DescribeResourceGroup implements ResourceGroupService.DescribeResourceGroup.
func (s *ResourceGroupServer) DescribeResourceGroup(ctx context.Context, req *proxyv1.DescribeResourceGroupRequest) (*proxyv1.DescribeResourceGroupResponse, error) {
	info, err := s.g.DescribeResourceGroup(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	resp := &proxyv1.DescribeResourceGroupResponse{
		Name: info.Name, Config: encodeGroupConfig(info.Config), NodeIds: info.Nodes,
		LoadedReplicas: info.LoadedReplicas, Outgoing: info.Outgoing, Incoming: info.Incoming,
	}
	for _, n := range info.NodeInfos {
		resp.Nodes = append(resp.Nodes, &proxyv1.ResourceGroupNode{Id: n.ID, Address: n.Address, Hostname: n.Hostname})
	}
	return resp, nil
}

func encodeGroupConfig(c rgroup.Config) *proxyv1.ResourceGroupConfig {
	return &proxyv1.ResourceGroupConfig{Requests: c.Requests, Limits: c.Limits, TransferFrom: c.TransferFrom, TransferTo: c.TransferTo}
}

func decodeGroupConfig(m *proxyv1.ResourceGroupConfig) rgroup.Config {
	return rgroup.Config{
		Requests: m.GetRequests(), Limits: m.GetLimits(), TransferFrom: m.GetTransferFrom(), TransferTo: m.GetTransferTo(),
	}
}

// ResourceGroupClient is the coordinator's resource groups over
// ResourceGroupService, as a proxy process serves Milvus's resource group
// API (proxy.ResourceGroups). TransferNode and TransferReplica are sent
// once (rpc.NoRetry): a retry after one applied would move more.
type ResourceGroupClient struct {
	c proxyv1.ResourceGroupServiceClient
}

// NewResourceGroupClient returns a client of ResourceGroupService over conn.
func NewResourceGroupClient(conn grpc.ClientConnInterface) *ResourceGroupClient {
	return &ResourceGroupClient{c: proxyv1.NewResourceGroupServiceClient(conn)}
}

// CreateResourceGroup implements proxy.ResourceGroups.
func (r *ResourceGroupClient) CreateResourceGroup(ctx context.Context, name string, cfg *rgroup.Config) error {
	req := &proxyv1.CreateResourceGroupRequest{Name: name}
	if cfg != nil {
		req.Config = encodeGroupConfig(*cfg)
	}
	_, err := r.c.CreateResourceGroup(ctx, req)
	return err
}

// UpdateResourceGroups implements proxy.ResourceGroups.
func (r *ResourceGroupClient) UpdateResourceGroups(ctx context.Context, cfgs map[string]rgroup.Config) error {
	req := &proxyv1.UpdateResourceGroupsRequest{Configs: make(map[string]*proxyv1.ResourceGroupConfig, len(cfgs))}
	for name, c := range cfgs {
		req.Configs[name] = encodeGroupConfig(c)
	}
	_, err := r.c.UpdateResourceGroups(ctx, req)
	return err
}

// DropResourceGroup implements proxy.ResourceGroups.
func (r *ResourceGroupClient) DropResourceGroup(ctx context.Context, name string) error {
	_, err := r.c.DropResourceGroup(ctx, &proxyv1.DropResourceGroupRequest{Name: name})
	return err
}

// TransferNode implements proxy.ResourceGroups (sent once).
func (r *ResourceGroupClient) TransferNode(ctx context.Context, source, target string, n int) error {
	_, err := r.c.TransferNode(ctx, &proxyv1.TransferNodeRequest{Source: source, Target: target, Count: int64(n)}, rpc.NoRetry())
	return err
}

// TransferReplica implements proxy.ResourceGroups (sent once).
func (r *ResourceGroupClient) TransferReplica(ctx context.Context, source, target string, collectionID int64, n int) error {
	_, err := r.c.TransferReplica(ctx, &proxyv1.TransferReplicaRequest{
		Source: source, Target: target, CollectionId: collectionID, Count: int64(n),
	}, rpc.NoRetry())
	return err
}

// ListResourceGroups implements proxy.ResourceGroups.
func (r *ResourceGroupClient) ListResourceGroups(ctx context.Context) ([]string, error) {
	resp, err := r.c.ListResourceGroups(ctx, &proxyv1.ListResourceGroupsRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetNames(), nil
}

// DescribeResourceGroup implements proxy.ResourceGroups.
func (r *ResourceGroupClient) DescribeResourceGroup(ctx context.Context, name string) (rgroup.Info, error) {
	resp, err := r.c.DescribeResourceGroup(ctx, &proxyv1.DescribeResourceGroupRequest{Name: name})
	if err != nil {
		return rgroup.Info{}, err
	}
	info := rgroup.Info{
		Group:          rgroup.Group{Name: resp.GetName(), Config: decodeGroupConfig(resp.GetConfig()), Nodes: resp.GetNodeIds()},
		LoadedReplicas: resp.GetLoadedReplicas(), Outgoing: resp.GetOutgoing(), Incoming: resp.GetIncoming(),
	}
	for _, n := range resp.GetNodes() {
		info.NodeInfos = append(info.NodeInfos, rgroup.NodeInfo{ID: n.GetId(), Address: n.GetAddress(), Hostname: n.GetHostname()})
	}
	return info, nil
}
