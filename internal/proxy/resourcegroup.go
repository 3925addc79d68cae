package proxy

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/rgpb"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/rgroup"
)

// SetResourceGroups sets what keeps the resource groups (the query
// coordinator in cluster mode, the standalone's one query node otherwise).
func (p *Proxy) SetResourceGroups(g ResourceGroups) { p.groups = g }

// resourceGroups returns the groups' keeper, or an error when none is set.
func (p *Proxy) resourceGroups() (ResourceGroups, error) {
	if p.groups == nil {
		return nil, errcode.New(errcode.ServiceNotReady, "resource groups are managed through the coordinator's Milvus API: this proxy process does not serve them yet")
	}
	return p.groups, nil
}

// groupConfig turns a Milvus resource group configuration into rgroup's;
// one without requests or limits is refused, as Milvus refuses it.
func groupConfig(name string, c *rgpb.ResourceGroupConfig) (rgroup.Config, error) {
	if c.GetRequests() == nil || c.GetLimits() == nil {
		return rgroup.Config{}, errcode.New(303, "requests or limits is required: resource group illegal config[rg=%s]", name)
	}
	out := rgroup.Config{Requests: c.GetRequests().GetNodeNum(), Limits: c.GetLimits().GetNodeNum()}
	for _, t := range c.GetTransferFrom() {
		out.TransferFrom = append(out.TransferFrom, t.GetResourceGroup())
	}
	for _, t := range c.GetTransferTo() {
		out.TransferTo = append(out.TransferTo, t.GetResourceGroup())
	}
	return out, nil
}

// milvusConfig is groupConfig's inverse.
func milvusConfig(c rgroup.Config) *rgpb.ResourceGroupConfig {
	out := &rgpb.ResourceGroupConfig{
		Requests: &rgpb.ResourceGroupLimit{NodeNum: c.Requests},
		Limits:   &rgpb.ResourceGroupLimit{NodeNum: c.Limits},
	}
	for _, g := range c.TransferFrom {
		out.TransferFrom = append(out.TransferFrom, &rgpb.ResourceGroupTransfer{ResourceGroup: g})
	}
	for _, g := range c.TransferTo {
		out.TransferTo = append(out.TransferTo, &rgpb.ResourceGroupTransfer{ResourceGroup: g})
	}
	return out
}

// CreateResourceGroup creates a resource group (no configuration: it
// requests and is limited to 0 nodes).
func (p *Proxy) CreateResourceGroup(ctx context.Context, req *milvuspb.CreateResourceGroupRequest) (*commonpb.Status, error) {
	g, err := p.resourceGroups()
	if err != nil {
		return errcode.Status(err), nil
	}
	name := req.GetResourceGroup()
	if err := rgroup.ValidateName(name); err != nil {
		return errcode.Status(err), nil
	}
	var cfg *rgroup.Config
	if req.GetConfig() != nil {
		c, err := groupConfig(name, req.GetConfig())
		if err != nil {
			return errcode.Status(err), nil
		}
		cfg = &c
	}
	return errcode.Status(g.CreateResourceGroup(ctx, name, cfg)), nil
}

// UpdateResourceGroups replaces the configurations of resource groups.
func (p *Proxy) UpdateResourceGroups(ctx context.Context, req *milvuspb.UpdateResourceGroupsRequest) (*commonpb.Status, error) {
	g, err := p.resourceGroups()
	if err != nil {
		return errcode.Status(err), nil
	}
	cfgs := make(map[string]rgroup.Config, len(req.GetResourceGroups()))
	for name, c := range req.GetResourceGroups() {
		if err := rgroup.ValidateName(name); err != nil {
			return errcode.Status(err), nil
		}
		cfg, err := groupConfig(name, c)
		if err != nil {
			return errcode.Status(err), nil
		}
		cfgs[name] = cfg
	}
	return errcode.Status(g.UpdateResourceGroups(ctx, cfgs)), nil
}

// DropResourceGroup drops a resource group (one that does not exist: nothing
// to do, as in Milvus).
func (p *Proxy) DropResourceGroup(ctx context.Context, req *milvuspb.DropResourceGroupRequest) (*commonpb.Status, error) {
	g, err := p.resourceGroups()
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(g.DropResourceGroup(ctx, req.GetResourceGroup())), nil
}

// TransferNode moves query nodes between resource groups.
func (p *Proxy) TransferNode(ctx context.Context, req *milvuspb.TransferNodeRequest) (*commonpb.Status, error) {
	g, err := p.resourceGroups()
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(g.TransferNode(ctx, req.GetSourceResourceGroup(), req.GetTargetResourceGroup(),
		int(req.GetNumNode()))), nil
}

// TransferReplica moves replicas of a loaded collection between resource
// groups.
func (p *Proxy) TransferReplica(ctx context.Context, req *milvuspb.TransferReplicaRequest) (*commonpb.Status, error) {
	g, err := p.resourceGroups()
	if err != nil {
		return errcode.Status(err), nil
	}
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(g.TransferReplica(ctx, req.GetSourceResourceGroup(), req.GetTargetResourceGroup(), col.ID,
		int(req.GetNumReplica()))), nil
}

// ListResourceGroups lists the resource groups.
func (p *Proxy) ListResourceGroups(ctx context.Context, _ *milvuspb.ListResourceGroupsRequest) (*milvuspb.ListResourceGroupsResponse, error) {
	g, err := p.resourceGroups()
	if err != nil {
		return &milvuspb.ListResourceGroupsResponse{Status: errcode.Status(err)}, nil
	}
	names, err := g.ListResourceGroups(ctx)
	if err != nil {
		return &milvuspb.ListResourceGroupsResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.ListResourceGroupsResponse{Status: ok(), ResourceGroups: names}, nil
}

// DescribeResourceGroup describes a resource group: its capacity, nodes,
// configuration and the replicas loaded in it.
func (p *Proxy) DescribeResourceGroup(ctx context.Context, req *milvuspb.DescribeResourceGroupRequest) (*milvuspb.DescribeResourceGroupResponse, error) {
	g, err := p.resourceGroups()
	if err != nil {
		return &milvuspb.DescribeResourceGroupResponse{Status: errcode.Status(err)}, nil
	}
	info, err := g.DescribeResourceGroup(ctx, req.GetResourceGroup())
	if err != nil {
		return &milvuspb.DescribeResourceGroupResponse{Status: errcode.Status(err)}, nil
	}
	rg := &milvuspb.ResourceGroup{
		Name: info.Name, Capacity: info.Capacity(), NumAvailableNode: int32(len(info.Nodes)),
		NumLoadedReplica: info.LoadedReplicas, NumOutgoingNode: info.Outgoing, NumIncomingNode: info.Incoming,
		Config: milvusConfig(info.Config),
	}
	for _, n := range info.NodeInfos {
		rg.Nodes = append(rg.Nodes, &commonpb.NodeInfo{NodeId: n.ID, Address: n.Address, Hostname: n.Hostname})
	}
	return &milvuspb.DescribeResourceGroupResponse{Status: ok(), ResourceGroup: rg}, nil
}
