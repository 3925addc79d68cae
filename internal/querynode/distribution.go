package querynode

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// leaderOf returns the node's delegator of a loaded collection's vchannel
// (it leads the shard), or "channel not available".
func (n *Node) leaderOf(collectionID int64, vchannel string) (*delegator, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c, ok := n.collections[collectionID]
	if ok {
		for _, d := range c.delegators {
			if d.vchannel == vchannel {
				return d, nil
			}
		}
	}
	return nil, errcode.New(errcode.ChannelNotAvailable, "channel not available[channel=%s]: query node does not lead it for collection %d",
		vchannel, collectionID)
}

// Sealed lists the sealed segments of a vchannel the node leads: those it
// serves itself (NodeIDs empty) and those its distribution gives worker
// nodes (NodeIDs: the worker), by ID.
func (n *Node) Sealed(collectionID int64, vchannel string) ([]plan.SegmentInfo, error) {
	d, err := n.leaderOf(collectionID, vchannel)
	if err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]plan.SegmentInfo, 0, len(d.sealed)+len(d.remote))
	for _, s := range d.sealed {
		out = append(out, plan.SegmentInfo{ID: s.ID, PartitionID: s.PartitionID, Rows: int64(s.Len()), Level: s.Level})
	}
	for id, rs := range d.remote {
		out = append(out, plan.SegmentInfo{ID: id, PartitionID: rs.partition, Rows: rs.rows, NodeIDs: []int64{rs.node}})
	}
	slices.SortFunc(out, func(a, b plan.SegmentInfo) int { return int(a.ID - b.ID) })
	return out, nil
}

// WorkerDialer reaches a worker query node, by its ID and internal
// address, for the sub-reads of a shard leader (a queryrpc.Client on a
// pooled connection, or an in-process node).
type WorkerDialer func(nodeID int64, address string) (SegmentReader, error)

// SetWorkerDialer sets how the node reaches its workers (before the query
// coordinator sets a distribution on it).
func (n *Node) SetWorkerDialer(dial WorkerDialer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dialWorker = dial
}

// SetDistribution sets which sealed segments of a vchannel the node leads
// are served by worker nodes: want maps each such segment to its worker
// (which has loaded it, Node.LoadSegments), workers gives each worker's
// address, which the node dials (SetWorkerDialer).
// Every other sealed segment is served by the leader itself: one a worker
// served until now is loaded here first. The switch is one step under the
// delegator's lock, so each read sees the old distribution or the new one;
// it returns once the reads that took the old one have ended, so that the
// caller may then release segments on the workers that no longer hold
// them for the leader. A segment of want the leader does not serve as
// sealed (still growing here, or compacted away meanwhile) is left out:
// the distribution it returns is the one set.
func (n *Node) SetDistribution(ctx context.Context, collectionID int64, vchannel string, want map[int64]int64,
	addresses map[int64]string,
) (map[int64]int64, error) {
	d, err := n.leaderOf(collectionID, vchannel)
	if err != nil {
		return nil, err
	}
	n.mu.RLock()
	dial := n.dialWorker
	n.mu.RUnlock()
	workers := map[int64]SegmentReader{}
	for _, node := range want {
		if workers[node] != nil {
			continue
		}
		addr, ok := addresses[node]
		if !ok || dial == nil {
			return nil, errcode.Invalid("the distribution of %s names query node %d, which this node cannot reach", vchannel, node)
		}
		if workers[node], err = dial(node, addr); err != nil {
			return nil, fmt.Errorf("querynode: dial worker query node %d at %s: %w", node, addr, err)
		}
	}
	// Serialised with handoffs and compaction following: the sealed set
	// does not change while segments come back from workers.
	d.follow.Lock()
	defer d.follow.Unlock()
	d.mu.RLock()
	var back []int64 // remote segments the leader serves again
	for id := range d.remote {
		if _, stays := want[id]; !stays {
			back = append(back, id)
		}
	}
	d.mu.RUnlock()
	loaded := make([]*segment.Segment, 0, len(back))
	keep := map[int64]bool{} // back, but no longer flushed: stays where it is
	release := func() {
		for _, s := range loaded {
			_ = s.Release()
		}
	}
	for _, id := range back {
		info, ok, err := n.segs.Segment(ctx, id)
		if err != nil {
			release()
			return nil, err
		}
		if !ok || info.State != catalog.SegmentFlushed {
			// Compacted away meanwhile: its worker serves it until the
			// leader follows the compaction (never a gap).
			keep[id] = true
			continue
		}
		seg, err := d.loadSealed(ctx, info)
		if err != nil {
			release()
			return nil, err
		}
		loaded = append(loaded, seg)
	}
	d.mu.Lock()
	next := distribution{}
	for id, node := range want {
		switch {
		case d.sealed[id] != nil:
			s := d.sealed[id]
			next[id] = remoteSegment{node: node, reader: workers[node], partition: s.PartitionID, rows: int64(s.Len())}
		case d.remote != nil && d.remote[id].reader != nil:
			rs := d.remote[id]
			rs.node, rs.reader = node, workers[node]
			next[id] = rs
		}
	}
	for id := range keep {
		if rs, ok := d.remote[id]; ok {
			next[id] = rs
		}
	}
	for id := range next {
		if s, ok := d.sealed[id]; ok {
			d.releaseLocked(s, false)
			delete(d.sealed, id)
		}
	}
	for _, seg := range loaded {
		d.replayDeletes(seg)
		d.sealed[seg.ID] = seg
		d.flushed[seg.ID] = true
	}
	d.remote = next
	old := d.gen
	d.gen = &readGen{}
	d.mu.Unlock()
	old.reads.Wait()
	out := make(map[int64]int64, len(next))
	for id, rs := range next {
		out[id] = rs.node
	}
	n.logger.Debug("querynode: distribution set", "vchannel", vchannel, "remote", slices.Sorted(maps.Keys(out)), "back", back)
	return out, nil
}
