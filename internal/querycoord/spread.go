package querycoord

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/plan"
)

// SegmentServer is a query node's side of sealed segments spread over a
// replica's nodes (Config.SpreadSegments; the in-process *querynode.Node
// implements it): as a shard leader it lists its sealed segments and sets
// its distribution, as a worker it loads and releases the segments it
// serves for other nodes' leaders.
type SegmentServer interface {
	// Sealed lists the sealed segments of a vchannel the node leads,
	// those its distribution gives a worker with the worker in NodeIDs.
	Sealed(collectionID int64, vchannel string) ([]plan.SegmentInfo, error)
	// SetDistribution sets the segments of a vchannel the node leads that
	// workers serve (segment → worker) and returns the one set, once the
	// reads that took the previous one ended.
	// workers gives each worker's internal address, which the leader
	// dials.
	SetDistribution(ctx context.Context, collectionID int64, vchannel string, want map[int64]int64,
		workers map[int64]string) (map[int64]int64, error)
	// LoadSegments and ReleaseSegments change the sealed segments of a
	// vchannel the node serves as a worker; WorkerSegments lists them.
	LoadSegments(ctx context.Context, collectionID int64, vchannel string, segments []int64) error
	ReleaseSegments(collectionID int64, vchannel string, segments []int64)
	WorkerSegments(collectionID int64) map[string][]int64
}

// spreadAll spreads the sealed segments of every loaded collection whose
// replicas all serve (new segments of flushes and compactions are placed
// so). The caller holds jobs.
func (c *Coordinator) spreadAll(ctx context.Context) {
	for _, id := range c.settled() {
		if err := c.spreadCollection(ctx, id); err != nil && ctx.Err() == nil {
			c.logger.Warn("sealed segments not spread; retrying", "collection", id, "err", err)
		}
	}
}

// spreadCollection spreads the sealed segments of each replica of a
// loaded collection over its nodes and saves the placement. The caller
// holds jobs.
func (c *Coordinator) spreadCollection(ctx context.Context, collectionID int64) error {
	if !c.cfg.SpreadSegments {
		return nil
	}
	lc, reps, _ := c.snapshot(collectionID)
	if lc == nil {
		return nil
	}
	var errs []error
	changed := false
	for i, r := range reps {
		if len(r.Nodes) == 0 || len(r.Leaders) == 0 {
			continue
		}
		out, err := c.spreadReplica(ctx, lc, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.mu.Lock()
		if lc.replicas[i].ID == r.ID && maps.Equal(lc.replicas[i].Leaders, r.Leaders) {
			lc.replicas[i].Segments = out.Segments
			changed = true
		}
		c.mu.Unlock()
	}
	if changed {
		if err := c.store.SaveReplicas(ctx, collectionID, c.replicasOf(lc)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// spreadReplica places the sealed segments of a replica's vchannels on
// its nodes (placement.Assign: those already on a node stay, the others
// go to the node with the fewest rows) and moves each vchannel's to its
// place in three steps: the workers load the segments they get; the
// leader switches its distribution (from then on reads ask the workers,
// and a segment it gets back it loads first); the workers release what
// they no longer serve for it (the switch returned once the reads that
// could still ask for them ended). It returns the replica with the
// segments' placement.
func (c *Coordinator) spreadReplica(ctx context.Context, lc *loadedCollection, r placement.Replica) (placement.Replica, error) {
	coll := lc.info.ID
	servers := map[int64]SegmentServer{}
	addrs := map[int64]string{}
	spreads := true
	for _, id := range r.Nodes {
		m := c.memberOf(id)
		if m == nil {
			return r, errNodeGone(id)
		}
		if ss, ok := m.node.(SegmentServer); ok {
			servers[id], addrs[id] = ss, m.info.Address
		} else {
			spreads = false
		}
	}
	if !spreads {
		// A node that cannot serve spread segments (its server is not a
		// query node's): every leader serves all of its shards' segments.
		return c.gather(ctx, coll, r, servers, addrs)
	}
	chans := slices.Sorted(maps.Keys(r.Leaders))
	var segs []placement.Segment
	byChan := map[string][]int64{}
	prev := map[int64]int64{} // where each segment is now (leader-local ones: as last placed)
	for _, v := range chans {
		leader := r.Leaders[v]
		list, err := servers[leader].Sealed(coll, v)
		if err != nil {
			return r, fmt.Errorf("querycoord: sealed segments of %s on query node %d: %w", v, leader, err)
		}
		for _, s := range list {
			segs = append(segs, placement.Segment{ID: s.ID, VChannel: v, Rows: s.Rows})
			byChan[v] = append(byChan[v], s.ID)
			switch {
			case len(s.NodeIDs) > 0:
				prev[s.ID] = s.NodeIDs[0]
			case r.Segments[s.ID] == leader:
				prev[s.ID] = leader
			}
		}
	}
	placed := placement.Assign(placement.Replica{ID: r.ID, Nodes: r.Nodes, Leaders: r.Leaders, Segments: prev},
		chans, segs, nil)
	out := r
	out.Segments = map[int64]int64{}
	var errs []error
	for _, v := range chans {
		leader := r.Leaders[v]
		want := map[int64]int64{}
		for _, id := range byChan[v] {
			if n := placed.Segments[id]; n != leader {
				want[id] = n
			}
		}
		got, err := c.moveSegments(ctx, coll, v, leader, r.Nodes, want, servers, addrs)
		if err != nil {
			errs = append(errs, fmt.Errorf("querycoord: spread segments of %s: %w", v, err))
		}
		for _, id := range byChan[v] {
			out.Segments[id] = leader
			if n, ok := got[id]; ok {
				out.Segments[id] = n
			}
		}
	}
	return out, errors.Join(errs...)
}

// gather brings every sealed segment of a replica back to its shard
// leader (the leaders that have a distribution: those that can spread).
func (c *Coordinator) gather(ctx context.Context, coll int64, r placement.Replica, servers map[int64]SegmentServer,
	addrs map[int64]string,
) (placement.Replica, error) {
	out := r
	out.Segments = nil
	var errs []error
	for _, v := range slices.Sorted(maps.Keys(r.Leaders)) {
		leader := r.Leaders[v]
		if servers[leader] == nil {
			continue
		}
		capable := slices.Sorted(maps.Keys(servers))
		if _, err := c.moveSegments(ctx, coll, v, leader, capable, nil, servers, addrs); err != nil {
			errs = append(errs, fmt.Errorf("querycoord: gather segments of %s on its leader: %w", v, err))
		}
	}
	return out, errors.Join(errs...)
}

// moveSegments gives worker nodes the sealed segments of a vchannel in
// want (segment → node) and the leader the others: load, switch, release.
// It returns the distribution the leader set (its current one when the
// loads failed).
func (c *Coordinator) moveSegments(ctx context.Context, coll int64, vchannel string, leader int64, nodes []int64,
	want map[int64]int64, servers map[int64]SegmentServer, addrs map[int64]string,
) (map[int64]int64, error) {
	held := func(n int64) []int64 { return servers[n].WorkerSegments(coll)[vchannel] }
	byNode := map[int64][]int64{}
	for id, n := range want {
		byNode[n] = append(byNode[n], id)
	}
	for _, n := range slices.Sorted(maps.Keys(byNode)) {
		have := held(n)
		var load []int64
		for _, id := range byNode[n] {
			if !slices.Contains(have, id) {
				load = append(load, id)
			}
		}
		if len(load) == 0 {
			continue
		}
		slices.Sort(load)
		if err := servers[n].LoadSegments(ctx, coll, vchannel, load); err != nil {
			// Not switched: the leader's distribution stays as it is.
			return c.currentDistribution(coll, vchannel, leader, servers),
				fmt.Errorf("load segments %v on query node %d: %w", load, n, err)
		}
	}
	workers := map[int64]string{}
	for _, n := range want {
		workers[n] = addrs[n]
	}
	got, err := servers[leader].SetDistribution(ctx, coll, vchannel, want, workers)
	if err != nil {
		return c.currentDistribution(coll, vchannel, leader, servers), fmt.Errorf("switch on query node %d: %w", leader, err)
	}
	if len(got) > 0 {
		c.logger.Debug("sealed segments spread", "collection", coll, "vchannel", vchannel, "leader", leader, "on_workers", len(got))
	}
	for _, n := range nodes {
		var drop []int64
		for _, id := range held(n) {
			if got[id] != n {
				drop = append(drop, id)
			}
		}
		if len(drop) > 0 {
			servers[n].ReleaseSegments(coll, vchannel, drop)
		}
	}
	return got, nil
}

// currentDistribution is the distribution a vchannel's leader has now.
func (c *Coordinator) currentDistribution(coll int64, vchannel string, leader int64, servers map[int64]SegmentServer) map[int64]int64 {
	out := map[int64]int64{}
	list, err := servers[leader].Sealed(coll, vchannel)
	if err != nil {
		return out
	}
	for _, s := range list {
		if len(s.NodeIDs) > 0 {
			out[s.ID] = s.NodeIDs[0]
		}
	}
	return out
}
