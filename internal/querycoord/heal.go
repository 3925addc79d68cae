package querycoord

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/placement"
)

// Run follows w, a membership watch of the query-node role (which Run
// drains; the caller cancels the watch with ctx): the live nodes are the
// ones loads place replicas on, a node that leaves has its shard
// leaderships moved (heal), and a node that joins takes some over
// (Rebalance, once the heals are done; tried again every HealInterval
// until it succeeds). It returns nil when ctx ends and an error when the
// watch ends otherwise.
func (c *Coordinator) Run(ctx context.Context, w *membership.Watcher) error {
	for _, n := range w.Nodes {
		c.join(n)
	}
	c.syncGroups(ctx)
	c.readyOnce.Do(func() { close(c.ready) })
	tick := time.NewTicker(c.cfg.HealInterval)
	defer tick.Stop()
	rebalance := false // a node joined: its turn comes once the heals are done
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Events:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("querycoord: query-node watch ended: %w", w.Err())
			}
			switch e.Type {
			case membership.Added:
				// A load (under jobs) must not see the node live before
				// it is in a resource group: it would count a node its
				// group does not hold yet and refuse with "node not
				// enough".
				c.jobs.Lock()
				c.join(e.Node)
				c.syncGroups(ctx)
				c.jobs.Unlock()
				rebalance = true
			case membership.Updated:
				c.join(e.Node)
			case membership.Removed:
				c.leave(e.Node)
			}
		case <-tick.C:
		}
		c.syncGroups(ctx)
		c.heal(ctx)
		c.resync(ctx)
		if c.cfg.SpreadSegments {
			c.jobs.Lock()
			c.spreadAll(ctx)
			c.jobs.Unlock()
		}
		if rebalance {
			if err := c.Rebalance(ctx); err != nil {
				if ctx.Err() == nil {
					c.logger.Warn("rebalance not done; retrying", "err", err)
				}
				continue
			}
			rebalance = false
		}
	}
}

// join adds a live node (or updates its address).
func (c *Coordinator) join(n membership.Node) {
	node, err := c.dial(n)
	if err != nil {
		c.logger.Warn("query node not reachable; left out of placement", "node_id", n.ID, "address", n.Address, "err", err)
		return
	}
	c.mu.Lock()
	c.live[n.ID] = &member{info: n, node: node}
	c.mu.Unlock()
	c.logger.Info("query node joined", "node_id", n.ID, "address", n.Address)
}

// leave removes a dead node and takes the replicas that used it out of
// service until they are healed.
func (c *Coordinator) leave(n membership.Node) {
	c.mu.Lock()
	delete(c.live, n.ID)
	for _, lc := range c.loaded {
		for _, r := range lc.replicas {
			if slices.Contains(r.Nodes, n.ID) {
				lc.down[r.ID] = true
			}
		}
	}
	c.mu.Unlock()
	c.logger.Warn("query node gone; moving its shard leaders", "node_id", n.ID, "address", n.Address)
}

// heal heals every loaded collection with a replica that uses a dead node
// or does not serve.
func (c *Coordinator) heal(ctx context.Context) {
	c.jobs.Lock()
	defer c.jobs.Unlock()
	c.mu.RLock()
	var ids []int64
	for id, lc := range c.loaded {
		if lc.done && c.needsHeal(lc) {
			ids = append(ids, id)
		}
	}
	c.mu.RUnlock()
	slices.Sort(ids)
	for _, id := range ids {
		if err := c.healCollection(ctx, id); err != nil && ctx.Err() == nil {
			c.logger.Warn("replicas not healed yet; retrying", "collection", id, "err", err)
		}
	}
}

// healCollection moves the shard leaderships of a collection's dead nodes
// to live ones (placement.Heal, placement.Assign) and reloads each node
// whose vchannels changed; each replica whose nodes all loaded is put back
// in service, and the replicas are saved. The caller holds jobs.
func (c *Coordinator) healCollection(ctx context.Context, collectionID int64) error {
	live, load := c.liveNodes()
	lc, old, partitions := c.snapshot(collectionID)
	if lc == nil {
		return nil
	}
	healed := c.byGroup(old, live, func(sub []placement.Replica, nodes []int64) []placement.Replica {
		return placement.Heal(sub, nodes, load)
	})
	var errs []error
	for i, r := range healed {
		outgoing := false
		if len(r.Nodes) == 0 {
			// No node of its resource group: the live nodes it has (moved
			// to other groups) serve on, those that lead shards only.
			c.mu.RLock()
			for _, n := range old[i].Nodes {
				if _, live := c.live[n]; live {
					r.Nodes = append(r.Nodes, n)
				}
			}
			c.mu.RUnlock()
			outgoing = true
		}
		if len(r.Nodes) == 0 {
			errs = append(errs, fmt.Errorf("querycoord: replica %d of %s has no live query node", r.ID, lc.info.Name))
			continue
		}
		r = placement.Assign(r, lc.info.VChannels, nil, load)
		if outgoing {
			r.Nodes = slices.Sorted(maps.Keys(leaderChannels(r)))
		}
		if err := c.move(ctx, lc.info.Name, collectionID, partitions, old[i], r); err != nil {
			errs = append(errs, err)
			continue
		}
		if c.cfg.SpreadSegments {
			// A dead worker's segments move to live nodes before the
			// replica serves again (its leader would ask the dead one).
			spread, err := c.spreadReplica(ctx, lc, r)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			r.Segments = spread.Segments
		}
		c.mu.Lock()
		lc.replicas[i] = r
		lc.version = c.versions.Add(1)
		delete(lc.down, r.ID)
		c.mu.Unlock()
		// A live node the replica no longer uses (it moved to another
		// resource group) drops the collection, once reads switched.
		for _, id := range old[i].Nodes {
			if node := c.nodeOf(id); node != nil && !slices.Contains(r.Nodes, id) {
				node.Release(collectionID)
				c.logger.Info("query node left a replica of its former resource group", "collection", lc.info.Name,
					"replica", r.ID, "node_id", id, "resource_group", r.Group())
			}
		}
	}
	c.mu.RLock()
	current := slices.Clone(lc.replicas)
	c.mu.RUnlock()
	if err := c.store.SaveReplicas(ctx, collectionID, current); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// move loads each node of replica to whose vchannels differ from those it
// led in from: a node that led some keeps serving them until its new set
// replaces them (querynode's LoadVChannels), so the shards it keeps have
// no gap; when the load fails the old set serves on and the next try loads
// it again.
func (c *Coordinator) move(ctx context.Context, name string, collectionID int64, partitions []int64, from, to placement.Replica) error {
	before, after := leaderChannels(from), leaderChannels(to)
	for _, id := range slices.Sorted(maps.Keys(after)) {
		if slices.Equal(before[id], after[id]) {
			continue
		}
		node := c.nodeOf(id)
		if node == nil {
			return errNodeGone(id)
		}
		if err := node.LoadVChannels(ctx, collectionID, partitions, after[id]); err != nil {
			return fmt.Errorf("querycoord: load %s on query node %d: %w", name, id, err)
		}
		c.logger.Info("shard leaders moved", "collection", name, "replica", to.ID, "node_id", id, "vchannels", after[id])
	}
	return nil
}

// snapshot returns a loaded collection with copies of its replicas and
// partitions (nil when it is not loaded).
func (c *Coordinator) snapshot(collectionID int64) (*loadedCollection, []placement.Replica, []int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	lc, ok := c.loaded[collectionID]
	if !ok {
		return nil, nil, nil
	}
	return lc, slices.Clone(lc.replicas), slices.Clone(lc.partitions)
}

// needsHeal reports whether a collection has a replica out of service, a
// node that is not live, or a node outside its resource group that a node
// of the group can replace (outgoing). The caller holds mu.
func (c *Coordinator) needsHeal(lc *loadedCollection) bool {
	if len(lc.down) > 0 {
		return true
	}
	for _, r := range lc.replicas {
		for _, n := range r.Nodes {
			if _, live := c.live[n]; !live {
				return true
			}
		}
	}
	return c.drainable(lc)
}
