package rest

import (
	"context"
	"maps"
	"slices"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/rgpb"
)

// rgLimit is a node count of a resource group configuration (Milvus REST
// v2 field names, as in its request_v2.go).
type rgLimit struct {
	NodeNum int32 `json:"node_num"`
}

// rgTransfer names a group a configuration prefers to trade nodes with.
type rgTransfer struct {
	ResourceGroup string `json:"resource_group"`
}

// rgConfig is a resource group configuration.
type rgConfig struct {
	Requests     *rgLimit     `json:"requests"`
	Limits       *rgLimit     `json:"limits"`
	TransferFrom []rgTransfer `json:"transfer_from"`
	TransferTo   []rgTransfer `json:"transfer_to"`
}

// proto returns the configuration as the Milvus API takes it (nil for
// nil); missing requests or limits stay missing, for the server to refuse.
func (c *rgConfig) proto() *rgpb.ResourceGroupConfig {
	if c == nil {
		return nil
	}
	out := &rgpb.ResourceGroupConfig{}
	if c.Requests != nil {
		out.Requests = &rgpb.ResourceGroupLimit{NodeNum: c.Requests.NodeNum}
	}
	if c.Limits != nil {
		out.Limits = &rgpb.ResourceGroupLimit{NodeNum: c.Limits.NodeNum}
	}
	for _, t := range c.TransferFrom {
		out.TransferFrom = append(out.TransferFrom, &rgpb.ResourceGroupTransfer{ResourceGroup: t.ResourceGroup})
	}
	for _, t := range c.TransferTo {
		out.TransferTo = append(out.TransferTo, &rgpb.ResourceGroupTransfer{ResourceGroup: t.ResourceGroup})
	}
	return out
}

// rgBody is the union of the resource_groups/* request bodies.
type rgBody struct {
	Name           string               `json:"name"`
	Config         *rgConfig            `json:"config"`
	ResourceGroups map[string]*rgConfig `json:"resource_groups"`
	SourceRgName   string               `json:"sourceRgName"`
	TargetRgName   string               `json:"targetRgName"`
	CollectionName string               `json:"collectionName"`
	ReplicaNum     int64                `json:"replicaNum"`
}

// resourceGroupRoutes serves /v2/vectordb/resource_groups/*.
func (h *Handler) resourceGroupRoutes() {
	decode := func(r *request, required ...string) (*rgBody, error) {
		var b rgBody
		if err := r.decode(&b); err != nil {
			return nil, err
		}
		values := map[string]bool{
			"name": b.Name != "", "resource_groups": b.ResourceGroups != nil, "sourceRgName": b.SourceRgName != "",
			"targetRgName": b.TargetRgName != "", "collectionName": b.CollectionName != "", "replicaNum": b.ReplicaNum != 0,
		}
		for _, f := range required {
			if !values[f] {
				return nil, missing(f)
			}
		}
		return &b, nil
	}
	h.add("resource_groups/create", false, func(ctx context.Context, r *request) (any, error) {
		b, err := decode(r, "name")
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.CreateResourceGroup(ctx, &milvuspb.CreateResourceGroupRequest{ResourceGroup: b.Name, Config: b.Config.proto()})
		return nil, check(resp, err)
	})
	h.add("resource_groups/drop", false, func(ctx context.Context, r *request) (any, error) {
		b, err := decode(r, "name")
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DropResourceGroup(ctx, &milvuspb.DropResourceGroupRequest{ResourceGroup: b.Name})
		return nil, check(resp, err)
	})
	h.add("resource_groups/alter", false, func(ctx context.Context, r *request) (any, error) {
		b, err := decode(r, "resource_groups")
		if err != nil {
			return nil, err
		}
		req := &milvuspb.UpdateResourceGroupsRequest{ResourceGroups: map[string]*rgpb.ResourceGroupConfig{}}
		for _, name := range slices.Sorted(maps.Keys(b.ResourceGroups)) {
			req.ResourceGroups[name] = b.ResourceGroups[name].proto()
		}
		resp, err := h.svc.UpdateResourceGroups(ctx, req)
		return nil, check(resp, err)
	})
	h.add("resource_groups/list", false, func(ctx context.Context, _ *request) (any, error) {
		resp, err := h.svc.ListResourceGroups(ctx, &milvuspb.ListResourceGroupsRequest{})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return nonNil(resp.GetResourceGroups()), nil
	})
	h.add("resource_groups/describe", false, func(ctx context.Context, r *request) (any, error) {
		b, err := decode(r, "name")
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DescribeResourceGroup(ctx, &milvuspb.DescribeResourceGroupRequest{ResourceGroup: b.Name})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return map[string]any{"resource_group": resp.GetResourceGroup()}, nil
	})
	h.add("resource_groups/transfer_replica", false, func(ctx context.Context, r *request) (any, error) {
		b, err := decode(r, "sourceRgName", "targetRgName", "collectionName", "replicaNum")
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.TransferReplica(ctx, &milvuspb.TransferReplicaRequest{
			SourceResourceGroup: b.SourceRgName, TargetResourceGroup: b.TargetRgName,
			CollectionName: b.CollectionName, NumReplica: b.ReplicaNum, DbName: r.db,
		})
		return nil, check(resp, err)
	})
}
