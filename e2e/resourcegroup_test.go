package e2e

import (
	"math/rand/v2"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/rgroup"
)

// Resource groups through the Go SDK on a standalone server, whose one
// query node belongs to one group at a time, as on a standalone Milvus: the
// default group holds it; moved to another group, loads into the default
// group fail with Milvus's error and loads into that group succeed; the
// groups and the node's place survive a restart.
func TestResourceGroupsStandalone(t *testing.T) {
	standaloneOnly(t, "the standalone's one query node in the groups (a cluster's: TestClusterProxiesResourceGroupsAndReplicas and internal/querycoord)")
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)

	groups, err := c.ListResourceGroups(ctx, milvusclient.NewListResourceGroupsOption())
	require.NoError(t, err)
	require.Equal(t, []string{rgroup.Default}, groups)
	def, err := c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption(rgroup.Default))
	require.NoError(t, err)
	require.EqualValues(t, rgroup.DefaultCapacity, def.Capacity)
	require.EqualValues(t, 1, def.NumAvailableNode)
	require.Len(t, def.Nodes, 1)

	_, err = c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption("nope"))
	require.ErrorContains(t, err, "resource group not found[rg=nope]")
	require.ErrorContains(t, c.CreateResourceGroup(ctx, milvusclient.NewCreateResourceGroupOption("1rg")), "Invalid resource group name")
	require.ErrorContains(t, c.DropResourceGroup(ctx, milvusclient.NewDropResourceGroupOption(rgroup.Default)),
		"default resource group is not deletable")

	// rg1 requests the node: it moves there.
	require.NoError(t, c.CreateResourceGroup(ctx, milvusclient.NewCreateResourceGroupOption("rg1")))
	require.NoError(t, c.UpdateResourceGroup(ctx, milvusclient.NewUpdateResourceGroupOption("rg1", &entity.ResourceGroupConfig{
		Requests: entity.ResourceGroupLimit{NodeNum: 1}, Limits: entity.ResourceGroupLimit{NodeNum: 1},
	})))
	rg1, err := c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption("rg1"))
	require.NoError(t, err)
	require.EqualValues(t, 1, rg1.NumAvailableNode)
	require.EqualValues(t, 1, rg1.Capacity)
	def, err = c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption(rgroup.Default))
	require.NoError(t, err)
	require.EqualValues(t, 0, def.NumAvailableNode)

	rng := rand.New(rand.NewPCG(31, 32))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("movies", moviesSchema("movies"))))
	_, err = c.Insert(ctx, insertOption("movies", genMovies(0, 200, rng)))
	require.NoError(t, err)
	indexVectors(ctx, t, c, "movies", entity.L2)
	_, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("movies"))
	require.ErrorContains(t, err, "failed to spawn replica for collection: resource group node not enough[rg=__default_resource_group]")
	_, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("movies").WithResourceGroup("nope"))
	require.ErrorContains(t, err, "resource group not found[rg=nope]")
	task, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("movies").WithResourceGroup("rg1"))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))
	n, err := countStrong(ctx, c, "movies")
	require.NoError(t, err)
	require.EqualValues(t, 200, n)
	replicas, err := c.DescribeReplica(ctx, milvusclient.NewDescribeReplicaOption("movies"))
	require.NoError(t, err)
	require.Len(t, replicas, 1)
	require.Equal(t, "rg1", replicas[0].ResourceGroupName)
	rg1, err = c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption("rg1"))
	require.NoError(t, err)
	require.Equal(t, map[string]int32{"movies": 1}, rg1.NumLoadedReplica)
	require.ErrorContains(t, c.DropResourceGroup(ctx, milvusclient.NewDropResourceGroupOption("rg1")),
		"resource group's limits node num is not 0")

	// A restart keeps the groups and the node's place.
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	groups, err = c.ListResourceGroups(ctx, milvusclient.NewListResourceGroupsOption())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{rgroup.Default, "rg1"}, groups)
	rg1, err = c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption("rg1"))
	require.NoError(t, err)
	require.EqualValues(t, 1, rg1.NumAvailableNode)
	// ... and the loaded collection's replica stays in its group.
	require.Equal(t, map[string]int32{"movies": 1}, rg1.NumLoadedReplica)
	replicas, err = c.DescribeReplica(ctx, milvusclient.NewDescribeReplicaOption("movies"))
	require.NoError(t, err)
	require.Len(t, replicas, 1)
	require.Equal(t, "rg1", replicas[0].ResourceGroupName)

	// The node goes back; rg1 can be dropped once nothing is loaded in it.
	require.NoError(t, c.UpdateResourceGroup(ctx, milvusclient.NewUpdateResourceGroupOption("rg1", &entity.ResourceGroupConfig{
		Requests: entity.ResourceGroupLimit{NodeNum: 0}, Limits: entity.ResourceGroupLimit{NodeNum: 0},
	})))
	def, err = c.DescribeResourceGroup(ctx, milvusclient.NewDescribeResourceGroupOption(rgroup.Default))
	require.NoError(t, err)
	require.EqualValues(t, 1, def.NumAvailableNode)
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption("movies")))
	require.NoError(t, c.DropResourceGroup(ctx, milvusclient.NewDropResourceGroupOption("rg1")))
	require.NoError(t, c.DropResourceGroup(ctx, milvusclient.NewDropResourceGroupOption("rg1")), "dropping twice is no error")
	groups, err = c.ListResourceGroups(ctx, milvusclient.NewListResourceGroupsOption())
	require.NoError(t, err)
	require.Equal(t, []string{rgroup.Default}, groups)

	// The same through REST v2.
	limits := func(n int) map[string]any { return map[string]any{"node_num": n} }
	out := restCall(t, s.addr, "resource_groups/create", map[string]any{
		"name": "rest_rg", "config": map[string]any{"requests": limits(1), "limits": limits(1)},
	})
	require.EqualValues(t, 0, out["code"], out)
	out = restCall(t, s.addr, "resource_groups/list", map[string]any{})
	require.ElementsMatch(t, []any{rgroup.Default, "rest_rg"}, out["data"])
	out = restCall(t, s.addr, "resource_groups/describe", map[string]any{"name": "rest_rg"})
	rg := out["data"].(map[string]any)["resource_group"].(map[string]any)
	require.Equal(t, "rest_rg", rg["name"])
	require.EqualValues(t, 1, rg["num_available_node"])
	out = restCall(t, s.addr, "resource_groups/transfer_replica", map[string]any{
		"sourceRgName": rgroup.Default, "targetRgName": "rest_rg", "collectionName": "movies", "replicaNum": 1,
	})
	require.EqualValues(t, 101, out["code"], "movies is released: %v", out)
	out = restCall(t, s.addr, "resource_groups/alter", map[string]any{
		"resource_groups": map[string]any{"rest_rg": map[string]any{"requests": limits(0), "limits": limits(0)}},
	})
	require.EqualValues(t, 0, out["code"], out)
	out = restCall(t, s.addr, "resource_groups/drop", map[string]any{"name": "rest_rg"})
	require.EqualValues(t, 0, out["code"], out)
	out = restCall(t, s.addr, "resource_groups/describe", map[string]any{"name": "rest_rg"})
	require.EqualValues(t, 300, out["code"], out)
}
