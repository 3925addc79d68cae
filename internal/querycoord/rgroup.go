package querycoord

import (
	"context"
	"errors"
	"maps"
	"net"
	"slices"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/rgroup"
)

// Resource groups (package rgroup) confine each replica to the query nodes
// of its group: a load places its replicas on the nodes of the groups
// asked, heals and rebalances of a replica only take nodes of its group,
// and a node moved to another group (TransferNode, a configuration change)
// keeps serving the replicas it served, as an outgoing node, until a node
// of the replica's group can take its shards over; then the heal moves
// them (the new node loads them before reads switch) and the node drops
// the collection. TransferReplica changes a replica's group, and the same
// heal moves it onto the new group's nodes.

// syncGroups gives the resource groups the live nodes.
func (c *Coordinator) syncGroups(ctx context.Context) {
	if c.groups == nil {
		return
	}
	live, _ := c.liveNodes()
	if err := c.groups.SetLive(ctx, live); err != nil && ctx.Err() == nil {
		c.logger.Warn("resource groups not updated; retrying", "err", err)
	}
}

// groupLive returns the nodes of live that a resource group holds.
func (c *Coordinator) groupLive(group string, live []int64) []int64 {
	if c.groups == nil {
		if group == rgroup.Default {
			return live
		}
		return nil
	}
	in := c.groups.Nodes(group)
	return slices.DeleteFunc(slices.Clone(live), func(n int64) bool { return !slices.Contains(in, n) })
}

// byGroup applies f to the replicas of each resource group (in the order
// of replicas) with the live nodes of the group that no replica of another
// group uses (an outgoing node), and returns the replicas f returned, in
// the order of replicas.
func (c *Coordinator) byGroup(replicas []placement.Replica, live []int64,
	f func(sub []placement.Replica, nodes []int64) []placement.Replica,
) []placement.Replica {
	out := slices.Clone(replicas)
	idx := map[string][]int{}
	for i, r := range replicas {
		idx[r.Group()] = append(idx[r.Group()], i)
	}
	for _, g := range slices.Sorted(maps.Keys(idx)) {
		others := map[int64]bool{}
		for _, r := range replicas {
			if r.Group() != g {
				for _, n := range r.Nodes {
					others[n] = true
				}
			}
		}
		nodes := slices.DeleteFunc(c.groupLive(g, live), func(n int64) bool { return others[n] })
		sub := make([]placement.Replica, len(idx[g]))
		for j, i := range idx[g] {
			sub[j] = replicas[i]
		}
		res := f(sub, nodes)
		for j, i := range idx[g] {
			out[i] = res[j]
		}
	}
	return out
}

// replicaGroups returns the resource group of each of replicaNumber
// replicas loaded in resourceGroups (see Load), checked against the groups.
func (c *Coordinator) replicaGroups(replicaNumber int, resourceGroups []string) ([]string, error) {
	if c.groups != nil {
		return c.groups.Check(resourceGroups, replicaNumber)
	}
	for _, g := range resourceGroups {
		if g != rgroup.Default {
			return nil, rgroup.NotFound(g)
		}
	}
	return slices.Repeat([]string{rgroup.Default}, replicaNumber), nil
}

// regroup moves the replicas of a loaded collection into resourceGroups (a
// load of a loaded collection naming other groups, as Milvus's load
// updates the load configuration): replicas already in a group asked keep
// it, the others take the groups left, and the heal moves them (see the
// comment at the top of this file). The caller holds jobs.
func (c *Coordinator) regroup(ctx context.Context, lc *loadedCollection, resourceGroups []string) error {
	c.mu.RLock()
	replicas := slices.Clone(lc.replicas)
	c.mu.RUnlock()
	per, err := c.replicaGroups(len(replicas), resourceGroups)
	if err != nil {
		return err
	}
	want := map[string]int{}
	for _, g := range per {
		want[g]++
	}
	var moving []int
	for i, r := range replicas {
		if want[r.Group()] > 0 {
			want[r.Group()]--
			continue
		}
		moving = append(moving, i)
	}
	if len(moving) == 0 {
		return nil
	}
	for _, i := range moving {
		for _, g := range per {
			if want[g] > 0 {
				want[g]--
				replicas[i].ResourceGroup = g
				break
			}
		}
	}
	if err := c.store.SaveReplicas(ctx, lc.info.ID, replicas); err != nil {
		return err
	}
	c.mu.Lock()
	for _, i := range moving {
		lc.replicas[i].ResourceGroup = replicas[i].ResourceGroup
	}
	lc.version = c.versions.Add(1)
	c.mu.Unlock()
	c.logger.Info("replicas moved to the resource groups of a load", "collection", lc.info.Name, "resource_groups", per)
	return nil
}

// spawn places replicaNumber new replicas in resourceGroups (see Load).
func (c *Coordinator) spawn(replicaNumber int, resourceGroups []string, live []int64, load map[int64]int64,
) ([]placement.Replica, error) {
	per, err := c.replicaGroups(replicaNumber, resourceGroups)
	if err != nil {
		return nil, err
	}
	var order []string
	count := map[string]int{}
	for _, g := range per {
		if count[g] == 0 {
			order = append(order, g)
		}
		count[g]++
	}
	var out []placement.Replica
	for _, g := range order {
		nodes := c.groupLive(g, live)
		reps, err := placement.SpawnReplicas(count[g], nodes, load)
		if err != nil {
			if errors.Is(err, placement.ErrNodeNotEnough) {
				return nil, errcode.New(errcode.ResourceGroupNodeNotEnough,
					"failed to spawn replica for collection: %s[rg=%s][currentNodeNum=%d][expectedNodeNum=%d]",
					placement.ErrNodeNotEnough, g, len(nodes), count[g])
			}
			return nil, errcode.Invalid("%v", err)
		}
		for _, r := range reps {
			r.ResourceGroup = g
			r.ID = int64(len(out) + 1)
			out = append(out, r)
		}
	}
	return out, nil
}

// drainable reports whether a replica of lc has a live node outside its
// resource group that leads no shard (it leaves at once) or that a node of
// the group can replace: another node of the replica in the group, or a
// live node of the group no replica of lc uses. The caller holds mu.
func (c *Coordinator) drainable(lc *loadedCollection) bool {
	if c.groups == nil {
		return false
	}
	used := map[int64]bool{}
	for _, r := range lc.replicas {
		for _, n := range r.Nodes {
			used[n] = true
		}
	}
	for _, r := range lc.replicas {
		outgoing, inGroup := false, false
		for _, n := range r.Nodes {
			if _, live := c.live[n]; !live {
				continue
			}
			switch c.groups.GroupOf(n) {
			case r.Group():
				inGroup = true
			case "":
			default:
				if !slices.Contains(slices.Collect(maps.Values(r.Leaders)), n) {
					return true
				}
				outgoing = true
			}
		}
		if !outgoing {
			continue
		}
		if inGroup {
			return true
		}
		for _, n := range c.groups.Nodes(r.Group()) {
			if _, live := c.live[n]; live && !used[n] {
				return true
			}
		}
	}
	return false
}

// errNoGroups refuses a resource-group change where the coordinator keeps
// no groups.
var errNoGroups = errcode.New(errcode.Unexpected, "querycoord: resource groups are not kept here")

// CreateResourceGroup creates a resource group (cfg nil: requests and
// limits 0).
func (c *Coordinator) CreateResourceGroup(ctx context.Context, name string, cfg *rgroup.Config) error {
	if c.groups == nil {
		return errNoGroups
	}
	return c.groups.Create(ctx, name, cfg)
}

// UpdateResourceGroups replaces the configurations of resource groups.
func (c *Coordinator) UpdateResourceGroups(ctx context.Context, cfgs map[string]rgroup.Config) error {
	if c.groups == nil {
		return errNoGroups
	}
	return c.groups.Update(ctx, cfgs)
}

// DropResourceGroup drops a resource group no replica is loaded in.
func (c *Coordinator) DropResourceGroup(ctx context.Context, name string) error {
	if c.groups == nil {
		return errNoGroups
	}
	return c.groups.Drop(ctx, name, func(group string) int {
		c.mu.RLock()
		defer c.mu.RUnlock()
		n := 0
		for _, lc := range c.loaded {
			for _, r := range lc.replicas {
				if r.Group() == group {
					n++
				}
			}
		}
		return n
	})
}

// TransferNode moves n query nodes from source to target (rgroup).
func (c *Coordinator) TransferNode(ctx context.Context, source, target string, n int) error {
	if c.groups == nil {
		return errNoGroups
	}
	if n <= 0 {
		return errcode.Invalid("invalid parameter[expected=NumNode > 0][actual=invalid NumNode %d]", n)
	}
	return c.groups.TransferNode(ctx, source, target, n)
}

// TransferReplica moves n replicas of a loaded collection from source to
// target: their group changes at once, and the heal moves them onto the
// target's nodes (see the comment at the top of this file).
func (c *Coordinator) TransferReplica(ctx context.Context, source, target string, collectionID int64, n int) error {
	if c.groups == nil {
		return errNoGroups
	}
	for _, g := range []struct{ role, name string }{{"target", target}, {"source", source}} {
		if _, err := c.groups.Describe(g.name); err != nil {
			return errcode.New(errcode.CodeOf(err), "the %s resource group[%s] doesn't exist: %s", g.role, g.name, err.Error())
		}
	}
	if n <= 0 {
		return errcode.Invalid("invalid parameter[expected=NumReplica > 0][actual=invalid NumReplica %d]", n)
	}
	c.jobs.Lock()
	defer c.jobs.Unlock()
	c.mu.RLock()
	lc, ok := c.loaded[collectionID]
	var replicas []placement.Replica
	if ok {
		replicas = slices.Clone(lc.replicas)
	}
	c.mu.RUnlock()
	if !ok || !lc.done {
		return errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%d]", collectionID)
	}
	var from []int
	inTarget := 0
	for i, r := range replicas {
		switch r.Group() {
		case source:
			from = append(from, i)
		case target:
			inTarget++
		}
	}
	if len(from) < n {
		return errcode.Invalid("only found [%d] replicas of collection [%s] in source resource group [%s], but %d asked: "+
			"NumReplica not greater than the number of replica in source resource group", len(from), lc.info.Name, source, n)
	}
	if source == target {
		return nil
	}
	moved := from[len(from)-n:]
	// The target's nodes the collection's other replicas hold are not
	// free; those of the replicas moving are.
	used := map[int64]bool{}
	for i, r := range replicas {
		if r.Group() != target && !slices.Contains(moved, i) {
			for _, id := range r.Nodes {
				used[id] = true
			}
		}
	}
	free := 0
	for _, id := range c.groups.Nodes(target) {
		if c.nodeOf(id) != nil && !used[id] {
			free++
		}
	}
	if free < inTarget+n {
		return errcode.New(errcode.Unexpected, "failed to transfer replica between resource group, err=nodes not enough"+
			"[rg=%s][currentNodeNum=%d][expectedNodeNum=%d]", target, free, inTarget+n)
	}
	for _, i := range moved {
		replicas[i].ResourceGroup = target
	}
	if err := c.store.SaveReplicas(ctx, collectionID, replicas); err != nil {
		return err
	}
	c.mu.Lock()
	for _, i := range moved {
		lc.replicas[i].ResourceGroup = target
	}
	lc.version = c.versions.Add(1)
	c.mu.Unlock()
	c.logger.Info("replicas moved to another resource group", "collection", lc.info.Name, "replicas", n,
		"source", source, "target", target)
	return nil
}

// ListResourceGroups lists the resource groups.
func (c *Coordinator) ListResourceGroups(context.Context) ([]string, error) {
	if c.groups == nil {
		return []string{rgroup.Default}, nil
	}
	return c.groups.List(), nil
}

// DescribeResourceGroup describes a resource group with the replicas
// loaded in it.
func (c *Coordinator) DescribeResourceGroup(_ context.Context, name string) (rgroup.Info, error) {
	var g rgroup.Group
	if c.groups == nil {
		if name != rgroup.Default {
			return rgroup.Info{}, rgroup.NotFound(name)
		}
		live, _ := c.liveNodes()
		g = rgroup.Group{Name: name, Config: rgroup.Config{Limits: rgroup.DefaultCapacity}, Nodes: live}
	} else {
		var err error
		if g, err = c.groups.Describe(name); err != nil {
			return rgroup.Info{}, err
		}
	}
	in := func(n int64) bool { return slices.Contains(g.Nodes, n) }
	info := rgroup.Info{
		Group: g, LoadedReplicas: map[string]int32{}, Outgoing: map[string]int32{}, Incoming: map[string]int32{},
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	g.Nodes = slices.DeleteFunc(g.Nodes, func(n int64) bool { _, live := c.live[n]; return !live })
	info.Group = g
	for _, n := range g.Nodes {
		addr := c.live[n].info.Address
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		info.NodeInfos = append(info.NodeInfos, rgroup.NodeInfo{ID: n, Address: addr, Hostname: host})
	}
	for _, lc := range c.loaded {
		for _, r := range lc.replicas {
			if r.Group() == name {
				info.LoadedReplicas[lc.info.Name]++
				for _, n := range r.Nodes {
					if !in(n) {
						info.Outgoing[lc.info.Name]++
					}
				}
				continue
			}
			for _, n := range r.Nodes {
				if in(n) {
					info.Incoming[lc.info.Name]++
				}
			}
		}
	}
	return info, nil
}
