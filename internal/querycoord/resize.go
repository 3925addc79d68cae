package querycoord

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/placement"
)

// resize changes the number of a loaded collection's replicas to n, as
// Milvus 2.6 alters the load config when a loaded collection is loaded
// again with another replica number. Called under jobs.
//
// More replicas: the new ones are spawned in their resource groups on live
// nodes that no replica of the collection uses (the groups of resourceGroups
// that the existing replicas do not fill, else the default group), loaded,
// and only then saved and served, so a read never reaches a replica that is
// still loading; when too few nodes are free the load fails with Milvus's
// "resource group node not enough" (code 304) and nothing changes. (Milvus
// creates such replicas without nodes and serves them when nodes join.)
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
	fresh, err := c.spawn(add, groups, free, load)
	if err != nil {
		return err
	}
	for i := range fresh {
		nextID++
		fresh[i].ID = nextID
		fresh[i] = placement.Assign(fresh[i], lc.info.VChannels, nil, load)
	}
	if err := c.loadOn(ctx, lc, fresh); err != nil {
		c.releaseReplicas(lc.info.ID, fresh)
		return err
	}
	all := append(slices.Clone(replicas), fresh...)
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
