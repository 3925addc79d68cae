package querycoord

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/strata-db/strata/internal/placement"
)

// Rebalance moves shard leaderships of every loaded collection whose
// replicas all serve so that no two nodes of a replica lead more than one
// shard apart, and gives free query nodes to replicas whose nodes each
// lead more than one (placement.Rebalance). Run calls it when a node
// joins; it is also the explicit trigger. Each move is a handoff that
// reads never see fail:
//
//  1. the new leader loads the shard (beside the shards it leads, which
//     serve on: querynode's LoadVChannels replaces a node's set at once);
//  2. reads switch to it: the replica names it leader of the shard, and
//     each leader is asked for the shards it leads only (plan.Read
//     VChannels), so the old leader, which still holds the shard, does not
//     answer for it too;
//  3. the old leader drops the shard: it loads the shards it keeps (its
//     reads in progress end first), or releases the collection when it
//     keeps none (its reads in progress fail with 101 and are tried again,
//     see read; a query node never answers from a stopped delegator).
//     When that fails it serves the shard on, unasked, and resync drops
//     it later.
//
// The replicas are saved after each move. A read that failed on a shard
// moved under it is tried again on the new placement (read). It returns
// the errors of the collections it could not finish; their remaining
// moves are planned again on the next call.
func (c *Coordinator) Rebalance(ctx context.Context) error {
	c.jobs.Lock()
	defer c.jobs.Unlock()
	var errs []error
	for _, id := range c.settled() {
		if err := c.rebalanceCollection(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// settled returns the loaded collections whose replicas all serve (none
// needs a heal), by ID.
func (c *Coordinator) settled() []int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var ids []int64
	for id, lc := range c.loaded {
		if lc.done && !c.needsHeal(lc) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// rebalanceCollection plans and runs one collection's moves. The caller
// holds jobs.
func (c *Coordinator) rebalanceCollection(ctx context.Context, collectionID int64) error {
	live, _ := c.liveNodes()
	lc, current, _ := c.snapshot(collectionID)
	if lc == nil {
		return nil
	}
	var moves []placement.ShardMove
	c.byGroup(current, live, func(sub []placement.Replica, nodes []int64) []placement.Replica {
		out, m := placement.Rebalance(sub, nodes, nil)
		moves = append(moves, m...)
		return out
	})
	for _, m := range moves {
		if err := c.handoff(ctx, lc, m); err != nil {
			return fmt.Errorf("querycoord: move shard %s of %s from query node %d to %d: %w", m.VChannel, lc.info.Name, m.From, m.To, err)
		}
		c.logger.Info("shard leader moved", "collection", lc.info.Name, "replica", m.Replica, "vchannel", m.VChannel,
			"from", m.From, "to", m.To)
	}
	if len(moves) > 0 {
		// A new leader loads every sealed segment of its shard; the
		// spread gives some back to workers (and a node that joined).
		return c.spreadCollection(ctx, collectionID)
	}
	return nil
}

// handoff moves one shard leadership (see Rebalance).
func (c *Coordinator) handoff(ctx context.Context, lc *loadedCollection, m placement.ShardMove) error {
	c.mu.RLock()
	i := slices.IndexFunc(lc.replicas, func(r placement.Replica) bool { return r.ID == m.Replica })
	var r placement.Replica
	if i >= 0 {
		r = lc.replicas[i]
	}
	partitions := slices.Clone(lc.partitions)
	c.mu.RUnlock()
	if i < 0 || r.Leaders[m.VChannel] != m.From {
		return errors.New("the placement changed meanwhile")
	}
	to, from := c.nodeOf(m.To), c.nodeOf(m.From)
	if to == nil {
		return errNodeGone(m.To)
	}
	id := lc.info.ID

	// 1. The new leader loads the shard beside those it leads.
	toChans := leaderChannels(r)[m.To]
	had := len(toChans) > 0
	toChans = append(slices.Clone(toChans), m.VChannel)
	slices.Sort(toChans)
	if err := to.LoadVChannels(ctx, id, partitions, toChans); err != nil {
		if !had {
			to.Release(id)
		}
		return err
	}

	// 2. Reads switch to it.
	next := placement.Replica{
		ID: r.ID, Nodes: slices.Clone(r.Nodes), Leaders: maps.Clone(r.Leaders), Segments: maps.Clone(r.Segments),
		ResourceGroup: r.ResourceGroup,
	}
	next.Leaders[m.VChannel] = m.To
	if !slices.Contains(next.Nodes, m.To) {
		next.Nodes = append(next.Nodes, m.To)
		slices.Sort(next.Nodes)
	}
	c.mu.Lock()
	lc.replicas[i] = next
	lc.version = c.versions.Add(1)
	replicas := slices.Clone(lc.replicas)
	c.mu.Unlock()
	saveErr := c.store.SaveReplicas(ctx, id, replicas)

	// 3. The old leader drops it.
	if from != nil {
		if err := c.shrink(ctx, from, id, partitions, leaderChannels(next)[m.From]); err != nil {
			c.logger.Warn("the old shard leader still serves the shard; dropping it later", "collection", lc.info.Name,
				"node_id", m.From, "vchannel", m.VChannel, "err", err)
			c.mu.Lock()
			lc.stale[m.From] = true
			c.mu.Unlock()
		}
	}
	return saveErr
}

// shrink makes a node serve only chans of a collection (none: it releases
// the collection).
func (c *Coordinator) shrink(ctx context.Context, node Node, collectionID int64, partitions []int64, chans []string) error {
	if len(chans) == 0 {
		node.Release(collectionID)
		return nil
	}
	return node.LoadVChannels(ctx, collectionID, partitions, chans)
}

// resync drops what the stale nodes of each collection serve beyond the
// shards they lead (a rebalance's step 3 that failed).
func (c *Coordinator) resync(ctx context.Context) {
	c.jobs.Lock()
	defer c.jobs.Unlock()
	type job struct {
		lc         *loadedCollection
		node       int64
		partitions []int64
		chans      []string
	}
	var jobs []job
	c.mu.RLock()
	for _, id := range slices.Sorted(maps.Keys(c.loaded)) {
		lc := c.loaded[id]
		for _, n := range slices.Sorted(maps.Keys(lc.stale)) {
			var chans []string
			for _, r := range lc.replicas {
				chans = append(chans, leaderChannels(r)[n]...)
			}
			jobs = append(jobs, job{lc: lc, node: n, partitions: slices.Clone(lc.partitions), chans: chans})
		}
	}
	c.mu.RUnlock()
	for _, j := range jobs {
		node := c.nodeOf(j.node)
		var err error
		if node != nil { // a node that is gone serves nothing
			err = c.shrink(ctx, node, j.lc.info.ID, j.partitions, j.chans)
		}
		if err != nil {
			c.logger.Warn("a query node still serves shards it does not lead; retrying", "collection", j.lc.info.Name,
				"node_id", j.node, "err", err)
			continue
		}
		c.mu.Lock()
		delete(j.lc.stale, j.node)
		c.mu.Unlock()
	}
}
