package querycoord_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/rgpb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/rgroup"
)

// describe returns a resource group as DescribeResourceGroup reports it.
func (c *cluster) describe(name string) *milvuspb.ResourceGroup {
	c.t.Helper()
	resp, err := c.px.DescribeResourceGroup(context.Background(), &milvuspb.DescribeResourceGroupRequest{ResourceGroup: name})
	ok(c.t, resp.GetStatus(), err)
	return resp.GetResourceGroup()
}

func groupConfig(requests, limits int32) *rgpb.ResourceGroupConfig {
	return &rgpb.ResourceGroupConfig{
		Requests: &rgpb.ResourceGroupLimit{NodeNum: requests}, Limits: &rgpb.ResourceGroupLimit{NodeNum: limits},
	}
}

// TestLoadInResourceGroups: a group that requests a node gets one; loads
// place replicas on the nodes of the groups named, refuse groups that do
// not exist or lack nodes, and GetReplicas and DescribeResourceGroup report
// where the replicas are.
func TestLoadInResourceGroups(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	a, b, d := c.addLocal(), c.addLocal(), c.addLocal()
	ctx := context.Background()

	def := c.describe(rgroup.Default)
	require.EqualValues(t, rgroup.DefaultCapacity, def.GetCapacity())
	require.EqualValues(t, 3, def.GetNumAvailableNode())
	require.Empty(t, def.GetNumLoadedReplica())

	st, err := c.px.CreateResourceGroup(ctx, &milvuspb.CreateResourceGroupRequest{ResourceGroup: "rg1", Config: groupConfig(1, 1)})
	ok(t, st, err)
	rg1 := c.describe("rg1")
	require.EqualValues(t, 1, rg1.GetCapacity())
	require.EqualValues(t, 1, rg1.GetNumAvailableNode())
	require.Len(t, rg1.GetNodes(), 1)
	inRG1 := rg1.GetNodes()[0].GetNodeId()
	require.Equal(t, d, inRG1, "the highest node ID moves")
	list, err := c.px.ListResourceGroups(ctx, &milvuspb.ListResourceGroupsRequest{})
	ok(t, list.GetStatus(), err)
	require.ElementsMatch(t, []string{rgroup.Default, "rg1"}, list.GetResourceGroups())

	load := func(replicas int32, groups ...string) *milvuspb.LoadCollectionRequest {
		return &milvuspb.LoadCollectionRequest{CollectionName: coll, ReplicaNumber: replicas, ResourceGroups: groups}
	}
	st, err = c.px.LoadCollection(ctx, load(1, "nope"))
	require.NoError(t, err)
	require.Contains(t, st.GetReason(), "failed to spawn replica for collection: resource group not found")
	st, err = c.px.LoadCollection(ctx, load(2, "rg1"))
	require.NoError(t, err)
	require.Equal(t, errcode.ResourceGroupNodeNotEnough, st.GetCode())
	require.Contains(t, st.GetReason(), "failed to spawn replica for collection: resource group node not enough[rg=rg1]")
	st, err = c.px.LoadCollection(ctx, load(2, "rg1", rgroup.Default, rgroup.Default))
	require.NoError(t, err)
	require.Contains(t, st.GetReason(), "resource group num can only be 0, 1 or same as replica number")

	st, err = c.px.LoadCollection(ctx, load(2, "rg1", rgroup.Default))
	ok(t, st, err)
	reps := c.replicas()
	require.Len(t, reps, 2)
	byGroup := map[string][]int64{}
	for _, r := range reps {
		byGroup[r.GetResourceGroupName()] = r.GetNodeIds()
	}
	require.Equal(t, []int64{inRG1}, byGroup["rg1"])
	require.Equal(t, []int64{a, b}, byGroup[rgroup.Default], "a replica takes every node of its group")
	c.same()
	require.Equal(t, map[string]int32{coll: 1}, c.describe("rg1").GetNumLoadedReplica())
	require.Equal(t, map[string]int32{coll: 1}, c.describe(rgroup.Default).GetNumLoadedReplica())

	// A group replicas are loaded in cannot be dropped, nor can the default
	// group; one whose limits are not 0 neither.
	st, err = c.px.DropResourceGroup(ctx, &milvuspb.DropResourceGroupRequest{ResourceGroup: rgroup.Default})
	require.NoError(t, err)
	require.Contains(t, st.GetReason(), "default resource group is not deletable")
	st, err = c.px.DropResourceGroup(ctx, &milvuspb.DropResourceGroupRequest{ResourceGroup: "rg1"})
	require.NoError(t, err)
	require.Contains(t, st.GetReason(), "resource group's limits node num is not 0")
	st, err = c.px.UpdateResourceGroups(ctx, &milvuspb.UpdateResourceGroupsRequest{
		ResourceGroups: map[string]*rgpb.ResourceGroupConfig{"rg1": groupConfig(0, 0)},
	})
	ok(t, st, err)
	st, err = c.px.DropResourceGroup(ctx, &milvuspb.DropResourceGroupRequest{ResourceGroup: "rg1"})
	require.NoError(t, err)
	require.Contains(t, st.GetReason(), "some replicas still loaded in resource group")

	// rg1 lost its node (limits 0): the replica keeps serving on it as an
	// outgoing node, since rg1 has no other.
	require.Eventually(t, func() bool { return c.describe("rg1").GetNumAvailableNode() == 0 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, map[string]int32{coll: 1}, c.describe("rg1").GetNumOutgoingNode())
	require.Equal(t, map[string]int32{coll: 1}, c.describe(rgroup.Default).GetNumIncomingNode())
	c.same()

	// rg1 asks for two nodes again: d and b (the highest IDs) move there;
	// the default replica hands b's shard to a, and rg1's is served by d
	// again. A load naming rg1 for both replicas moves the default one onto
	// b.
	st, err = c.px.UpdateResourceGroups(ctx, &milvuspb.UpdateResourceGroupsRequest{
		ResourceGroups: map[string]*rgpb.ResourceGroupConfig{"rg1": groupConfig(2, 2)},
	})
	ok(t, st, err)
	require.Eventually(t, func() bool {
		byGroup := map[string][]int64{}
		for _, r := range c.replicas() {
			byGroup[r.GetResourceGroupName()] = r.GetNodeIds()
		}
		return slices.Equal(byGroup[rgroup.Default], []int64{a}) && slices.Equal(byGroup["rg1"], []int64{d})
	}, 30*time.Second, 10*time.Millisecond, "each replica is served by nodes of its group")
	require.Empty(t, c.describe("rg1").GetNumOutgoingNode())
	c.same()
	st, err = c.px.LoadCollection(ctx, load(2, "rg1"))
	ok(t, st, err)
	require.Eventually(t, func() bool {
		var nodes []int64
		for _, r := range c.replicas() {
			if r.GetResourceGroupName() != "rg1" {
				return false
			}
			nodes = append(nodes, r.GetNodeIds()...)
		}
		slices.Sort(nodes)
		return slices.Equal(nodes, []int64{b, d})
	}, 30*time.Second, 10*time.Millisecond, "both replicas move to rg1")
	require.Equal(t, map[string]int32{coll: 2}, c.describe("rg1").GetNumLoadedReplica())
	c.same()
}

// TestTransferReplicaMovesItWithoutAFailedRead: while searches and queries
// run, none failing and each answered as one node holding everything
// answers, a node moved to another group hands its shard to a node of the
// replica's group (an outgoing node drained), then the replica transferred
// to that group moves onto its node; each node left drops the collection,
// and a coordinator that takes over keeps groups and placement.
func TestTransferReplicaMovesItWithoutAFailedRead(t *testing.T) {
	c := newCluster(t)
	c.prepare()
	a := c.addLocal()
	ok(t, c.load(1), nil)
	require.Equal(t, []int64{a}, c.replicas()[0].GetNodeIds())
	ctx := context.Background()

	st, err := c.px.CreateResourceGroup(ctx, &milvuspb.CreateResourceGroupRequest{ResourceGroup: "rg1"})
	ok(t, st, err)
	transfer := func(source, target string, n int64) *milvuspb.TransferReplicaRequest {
		return &milvuspb.TransferReplicaRequest{
			SourceResourceGroup: source, TargetResourceGroup: target, CollectionName: coll, NumReplica: n,
		}
	}
	for _, tc := range []struct {
		req  *milvuspb.TransferReplicaRequest
		want string
	}{
		{transfer(rgroup.Default, "nope", 1), "the target resource group[nope] doesn't exist: resource group not found[rg=nope]"},
		{transfer("nope", "rg1", 1), "the source resource group[nope] doesn't exist: resource group not found[rg=nope]"},
		{transfer(rgroup.Default, "rg1", 0), "invalid parameter[expected=NumReplica > 0][actual=invalid NumReplica 0]"},
		{transfer(rgroup.Default, "rg1", 2), "NumReplica not greater than the number of replica"},
		{transfer(rgroup.Default, "rg1", 1), "failed to transfer replica between resource group, err=nodes not enough"},
	} {
		st, err := c.px.TransferReplica(ctx, tc.req)
		require.NoError(t, err)
		require.Contains(t, st.GetReason(), tc.want)
	}

	b := c.addLocal()
	require.Eventually(t, func() bool { return slices.Equal(c.replicas()[0].GetNodeIds(), []int64{a, b}) }, 30*time.Second,
		10*time.Millisecond, "the joining node takes a shard over")
	c.mu.Lock()
	qa, qb := c.nodes[a].node, c.nodes[b].node
	c.mu.Unlock()
	id := c.replicasCollection()
	loadedOn := func(qn interface {
		Loaded(context.Context, int64) (bool, []int64, error)
	},
	) bool {
		loaded, _, err := qn.Loaded(context.Background(), id)
		require.NoError(t, err)
		return loaded
	}

	reads := c.startReads(c.px)
	reads.more(3)

	// b moves to rg1: the default group's replica hands b's shard to a,
	// and b drops the collection.
	st, err = c.px.TransferNode(ctx, &milvuspb.TransferNodeRequest{SourceResourceGroup: rgroup.Default, TargetResourceGroup: "rg1", NumNode: 0})
	require.NoError(t, err)
	require.Contains(t, st.GetReason(), "invalid parameter[expected=NumNode > 0]")
	st, err = c.px.TransferNode(ctx, &milvuspb.TransferNodeRequest{SourceResourceGroup: rgroup.Default, TargetResourceGroup: "rg1", NumNode: 1})
	ok(t, st, err)
	require.Equal(t, b, c.describe("rg1").GetNodes()[0].GetNodeId(), "the highest node ID moves")
	reads.until(func() bool { return slices.Equal(c.replicas()[0].GetNodeIds(), []int64{a}) && !loadedOn(qb) },
		"the outgoing node's shard moves to a node of the group")
	reads.more(3)

	// The replica moves to rg1: onto b, and a drops the collection.
	st, err = c.px.TransferReplica(ctx, transfer(rgroup.Default, "rg1", 1))
	ok(t, st, err)
	reads.until(func() bool {
		reps := c.replicas()
		return reps[0].GetResourceGroupName() == "rg1" && slices.Equal(reps[0].GetNodeIds(), []int64{b}) && !loadedOn(qa)
	}, "the replica moves onto rg1's node")
	reads.more(3)
	t.Logf("%d reads before, during and after the moves, all exact", reads.end())
	require.Equal(t, map[string]int32{coll: 1}, c.describe("rg1").GetNumLoadedReplica())
	require.Empty(t, c.describe("rg1").GetNumOutgoingNode())
	c.same()

	// A coordinator that takes over keeps the groups and the placement.
	c.startCoordinator()
	ok(t, c.load(0), nil)
	require.Equal(t, "rg1", c.replicas()[0].GetResourceGroupName())
	var nodes []int64
	for _, n := range c.describe("rg1").GetNodes() {
		nodes = append(nodes, n.GetNodeId())
	}
	require.Equal(t, []int64{b}, nodes)
}

// replicasCollection is coll's ID.
func (c *cluster) replicasCollection() int64 {
	col, err := c.s.Root.Collection("", coll)
	require.NoError(c.t, err)
	return col.ID
}
