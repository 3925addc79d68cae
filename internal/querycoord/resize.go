package querycoord

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/placement"
)

// resize changes the number of a loaded collection's replicas to n, as
// Milvus 2.6 alters the load config when a loaded collection is loaded
// again with another replica number. Called under jobs.
//
// More replicas: the new ones are spawned in their resource groups (the
// groups of resourceGroups that the existing replicas do not fill, else the
// default group) on live nodes that no replica of the collection uses,
// taking nodes from the group's replicas with more than one (takeNodes)
// when too few are free; they are loaded, and only then saved and served,
// so a read never reaches a replica that is still loading. When the group
// cannot give each replica a node the load fails with Milvus's "resource
// group node not enough" (code 304) and nothing changes. (Milvus creates
// such replicas without nodes and serves them when nodes join.)
//
// Fewer replicas: those with the highest IDs are dropped from the saved and
// served placement first, then released on their nodes; a read in flight
// on them fails over to a replica that stays (a released node refuses it
// with a retriable code).
func (c *Coordinator) resize(ctx context.Context, lc *loadedCollection, n int, resourceGroups []string) error {
	replicas := c.replicasOf(lc)
	slices.SortFunc(replicas, func(a, b placement.Replica) int { return cmp.Compare(a.ID, b.ID) })
	if n < len(replicas) {
		return c.dropReplicas(ctx, lc, replicas[:n], replicas[n:])
	}
	return c.addReplicas(ctx, lc, replicas, n, resourceGroups)
}

// dropReplicas keeps the replicas keep of a collection and releases drop.
func (c *Coordinator) dropReplicas(ctx context.Context, lc *loadedCollection, keep, drop []placement.Replica) error {
	if err := c.store.SaveReplicas(ctx, lc.info.ID, keep); err != nil {
		return err
	}
	c.mu.Lock()
	lc.replicas = slices.Clone(keep)
	for _, r := range drop {
		delete(lc.down, r.ID)
	}
	lc.version = c.versions.Add(1)
	c.mu.Unlock()
	for _, r := range drop {
		for _, id := range r.Nodes {
			if node := c.nodeOf(id); node != nil {
				node.Release(lc.info.ID)
			}
		}
	}
	c.logger.Info("replicas dropped by a load with fewer replicas", "collection", lc.info.Name,
		"replicas", len(keep), "dropped", len(drop))
	return nil
}

// addReplicas adds n-len(replicas) replicas to a loaded collection.
func (c *Coordinator) addReplicas(ctx context.Context, lc *loadedCollection, replicas []placement.Replica, n int,
	resourceGroups []string,
) error {
	per, err := c.replicaGroups(n, resourceGroups)
	if err != nil {
		return err
	}
	// The groups the existing replicas leave unfilled take the new ones.
	want := map[string]int{}
	for _, g := range per {
		want[g]++
	}
	for _, r := range replicas {
		if want[r.Group()] > 0 {
			want[r.Group()]--
		}
	}
	var groups []string
	for _, g := range per {
		if want[g] > 0 {
			want[g]--
			groups = append(groups, g)
		}
	}
	add := n - len(replicas)
	for len(groups) < add {
		groups = append(groups, per[0])
	}
	groups = groups[:add]

	live, load := c.liveNodes()
	used := map[int64]bool{}
	nextID := int64(0)
	for _, r := range replicas {
		for _, id := range r.Nodes {
			used[id] = true
		}
		nextID = max(nextID, r.ID)
	}
	free := slices.DeleteFunc(live, func(id int64) bool { return used[id] })
	// Each group must hold a node for each of its replicas, old and new:
	// the nodes no replica uses, then those the replicas of the group with
	// more than one node give up (their shards move to the replica's other
	// nodes first).
	need := map[string]int{}
	for _, g := range groups {
		need[g]++
	}
	for _, g := range slices.Sorted(maps.Keys(need)) {
		spare, members, wanted := len(c.groupLive(g, free)), len(c.groupLive(g, live)), need[g]
		for _, r := range replicas {
			if r.Group() == g {
				spare += max(len(r.Nodes)-1, 0)
				wanted++
			}
		}
		if spare < need[g] {
			return errcode.New(errcode.ResourceGroupNodeNotEnough,
				"failed to spawn replica for collection: %s[rg=%s][currentNodeNum=%d][expectedNodeNum=%d]",
				placement.ErrNodeNotEnough, g, members, wanted)
		}
		short := need[g] - len(c.groupLive(g, free))
		if short <= 0 {
			continue
		}
		taken, err := c.takeNodes(ctx, lc, g, short, load)
		free = append(free, taken...)
		if err != nil {
			c.saveReplicas(ctx, lc)
			return err
		}
	}
	fresh, err := c.spawn(add, groups, free, load)
	if err != nil {
		c.saveReplicas(ctx, lc)
		return err
	}
	for i := range fresh {
		nextID++
		fresh[i].ID = nextID
		fresh[i] = placement.Assign(fresh[i], lc.info.VChannels, nil, load)
	}
	if err := c.loadOn(ctx, lc, fresh); err != nil {
		c.releaseReplicas(lc.info.ID, fresh)
		c.saveReplicas(ctx, lc)
		return err
	}
	all := append(c.replicasOf(lc), fresh...)
	if err := c.store.SaveReplicas(ctx, lc.info.ID, all); err != nil {
		c.releaseReplicas(lc.info.ID, fresh)
		return err
	}
	c.mu.Lock()
	lc.replicas = append(lc.replicas, fresh...)
	lc.version = c.versions.Add(1)
	c.mu.Unlock()
	c.logger.Info("replicas added by a load with more replicas", "collection", lc.info.Name,
		"replicas", len(all), "added", len(fresh))
	return nil
}

// loadOn loads a collection on the leader nodes of replicas, in parallel;
// the first error keeps its Milvus code for the client.
func (c *Coordinator) loadOn(ctx context.Context, lc *loadedCollection, replicas []placement.Replica) error {
	c.mu.RLock()
	partitions := slices.Clone(lc.partitions)
	c.mu.RUnlock()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, r := range replicas {
		for id, chans := range leaderChannels(r) {
			node := c.nodeOf(id)
			wg.Go(func() {
				err := errNodeGone(id)
				if node != nil {
					err = node.LoadVChannels(ctx, lc.info.ID, partitions, chans)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("querycoord: load %s on query node %d: %w", lc.info.Name, id, err))
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// releaseReplicas releases a collection on every node of replicas.
func (c *Coordinator) releaseReplicas(collectionID int64, replicas []placement.Replica) {
	for _, r := range replicas {
		for _, id := range r.Nodes {
			if node := c.nodeOf(id); node != nil {
				node.Release(collectionID)
			}
		}
	}
}

// takeNodes frees n nodes of resource group g from the replicas of lc
// that have more than one there, one at a time, from the replica with the
// most nodes: the node leading the fewest shards (the highest ID on a tie)
// hands them to the replica's other nodes (load, switch reads, then
// release, as a heal moves them), and leaves the replica. It returns the
// nodes freed, also when it fails part way.
func (c *Coordinator) takeNodes(ctx context.Context, lc *loadedCollection, g string, n int, load map[int64]int64,
) ([]int64, error) {
	var taken []int64
	for len(taken) < n {
		_, replicas, partitions := c.snapshot(lc.info.ID)
		best := -1
		for i, r := range replicas {
			if r.Group() == g && len(r.Nodes) > 1 && (best < 0 || len(r.Nodes) > len(replicas[best].Nodes)) {
				best = i
			}
		}
		if best < 0 {
			return taken, nil
		}
		old := replicas[best]
		leads := map[int64]int{}
		for _, id := range old.Leaders {
			leads[id]++
		}
		node := old.Nodes[0]
		for _, id := range old.Nodes[1:] {
			if leads[id] <= leads[node] {
				node = id
			}
		}
		r := old
		r.Nodes = slices.DeleteFunc(slices.Clone(old.Nodes), func(id int64) bool { return id == node })
		r = placement.Assign(r, lc.info.VChannels, nil, load)
		if err := c.move(ctx, lc.info.Name, lc.info.ID, partitions, old, r); err != nil {
			return taken, err
		}
		c.mu.Lock()
		lc.replicas[best] = r
		lc.version = c.versions.Add(1)
		c.mu.Unlock()
		if qn := c.nodeOf(node); qn != nil {
			qn.Release(lc.info.ID)
		}
		c.logger.Info("query node left a replica for a new one", "collection", lc.info.Name, "replica", r.ID,
			"node_id", node, "resource_group", g)
		taken = append(taken, node)
	}
	return taken, nil
}

// saveReplicas saves lc's replicas as they are (after a change that
// stopped part way), logging a failure: the next heal saves them again.
func (c *Coordinator) saveReplicas(ctx context.Context, lc *loadedCollection) {
	if err := c.store.SaveReplicas(ctx, lc.info.ID, c.replicasOf(lc)); err != nil {
		c.logger.Warn("replicas not saved", "collection", lc.info.Name, "err", err)
	}
}
