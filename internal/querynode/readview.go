package querynode

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/fanout"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// readView is what one read sees, fixed when it starts: the collection,
// its MVCC timestamp, the segments this node reads (acquired, every
// partition and growing ones included: each request filters them) and
// the sealed segments the read's shard leaders gave worker nodes (remote),
// all taken in one step per delegator, so that each live row is in
// exactly one of them. A grouped search that asks its parts again for
// more groups reads the same view.
type readView struct {
	c      *collection
	loaded map[int64]bool // loaded partitions (nil = all)
	ts     uint64
	expire uint64
	segs   []*segment.Segment
	grow   []bool // by segs: a growing segment
	remote []remoteShare
	done   []func() // run by close
}

// remoteShare is one worker's part of a leader's read: the sealed
// segments of one vchannel it holds, in the loaded partitions.
type remoteShare struct {
	node     int64
	reader   SegmentReader
	vchannel string
	segments []int64
}

// close releases what the view holds.
func (v *readView) close() {
	releaseSegments(v.segs)
	for _, f := range v.done {
		f()
	}
}

// view starts a read: of the node's delegators of the read's vchannels (a
// shard leader's read), or, when the read names segments, of those sealed
// segments of the worker shard of its vchannel (a leader's sub-read).
func (n *Node) view(ctx context.Context, r *plan.Read) (*readView, error) {
	if len(r.Segments) > 0 {
		return n.workerView(ctx, r)
	}
	c, loaded, err := n.loaded(r)
	if err != nil {
		return nil, err
	}
	v := &readView{c: c, loaded: loaded, done: []func(){c.readers.Done}}
	ok := false
	defer func() {
		if !ok {
			v.close()
		}
	}()
	ds, err := readDelegators(c, r.VChannels)
	if err != nil {
		return nil, err
	}
	if v.ts, err = n.readTimestamp(ctx, ds, r.GuaranteeTS, r.Strong); err != nil {
		return nil, err
	}
	if v.expire, err = n.expireBefore(ctx, r); err != nil {
		return nil, err
	}
	for _, d := range ds {
		sealed, growing, remote, release, err := d.readSnapshot()
		if err != nil {
			return nil, err
		}
		v.done = append(v.done, release)
		for _, s := range sealed {
			v.segs, v.grow = append(v.segs, s), append(v.grow, false)
		}
		for _, s := range growing {
			v.segs, v.grow = append(v.segs, s), append(v.grow, true)
		}
		v.remote = append(v.remote, remote.shares(d.vchannel, loaded)...)
	}
	ok = true
	return v, nil
}

// selected returns the view's segments a request reads: in its partitions
// and the loaded ones, growing ones unless it ignores them, skipping L2
// segments whose clustering-key range the filter excludes.
func (v *readView) selected(r *plan.Read, e *expr.Expr) []*segment.Segment {
	var req map[int64]bool
	if len(r.PartitionIDs) > 0 {
		req = map[int64]bool{}
		for _, p := range r.PartitionIDs {
			req[p] = true
		}
	}
	var out []*segment.Segment
	for i, s := range v.segs {
		switch {
		case v.grow[i] && r.IgnoreGrowing:
		case !partitionSelected(s.PartitionID, req, v.loaded):
		case e != nil && s.ClusterLo != nil && !e.MayMatchRange(s.ClusterField, s.ClusterLo, s.ClusterHi):
			// pruned by the clustering-key range
		default:
			out = append(out, s)
		}
	}
	return out
}

// all returns every segment of the view in the loaded partitions (the
// BM25 statistics' rows).
func (v *readView) all() []*segment.Segment {
	var out []*segment.Segment
	for _, s := range v.segs {
		if partitionSelected(s.PartitionID, nil, v.loaded) {
			out = append(out, s)
		}
	}
	return out
}

// parts returns the fan-out of a leader's read over workers: this view's
// own segments, then each worker's share, read at the view's timestamp.
func (v *readView) parts() []fanout.Part {
	parts := []fanout.Part{{Name: "the shard leader", Reader: localPart{v}, Scope: func(*plan.Read) {}}}
	for _, sh := range v.remote {
		parts = append(parts, fanout.Part{
			Name: fmt.Sprintf("worker query node %d (%s)", sh.node, sh.vchannel), Reader: sh.reader,
			Scope: func(r *plan.Read) {
				r.VChannels = []string{sh.vchannel}
				r.Segments = sh.segments
				r.ReadTS = v.ts
				r.GuaranteeTS, r.Strong = 0, false
				r.ExpireBefore, r.HasExpireBefore = v.expire, true
			},
		})
	}
	return parts
}

// localPart is a leader's own share of a read it fans out to workers: its
// view's segments.
type localPart struct{ v *readView }

// Search implements fanout.Reader.
func (p localPart) Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	return p.v.search(ctx, req)
}

// Query implements fanout.Reader.
func (p localPart) Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	return p.v.query(ctx, req)
}

// BM25Stats implements fanout.BM25Stater.
func (p localPart) BM25Stats(_ context.Context, req *plan.Search) (*plan.BM25Stats, error) {
	return p.v.bm25Stats(req)
}

// distribution is a leader delegator's record of the sealed segments of
// its vchannel that worker nodes serve (the query coordinator sets it,
// Node.SetDistribution): segment → holder.
type distribution map[int64]remoteSegment

// remoteSegment is a sealed segment a worker node serves for the leader.
type remoteSegment struct {
	node      int64
	reader    SegmentReader
	partition int64
	rows      int64
}

// shares groups the remote segments of the loaded partitions by worker
// (sorted by node, segments sorted).
func (dist distribution) shares(vchannel string, loaded map[int64]bool) []remoteShare {
	byNode := map[int64]*remoteShare{}
	for id, rs := range dist {
		if !partitionSelected(rs.partition, nil, loaded) {
			continue
		}
		sh, ok := byNode[rs.node]
		if !ok {
			sh = &remoteShare{node: rs.node, reader: rs.reader, vchannel: vchannel}
			byNode[rs.node] = sh
		}
		sh.segments = append(sh.segments, id)
	}
	out := make([]remoteShare, 0, len(byNode))
	for _, sh := range byNode {
		slices.Sort(sh.segments)
		out = append(out, *sh)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].node < out[j].node })
	return out
}

// workerView starts a leader's sub-read of named sealed segments: at
// exactly the leader's read timestamp, once the worker shard of the
// vchannel has consumed its WAL up to it, so that every delete up to it is
// applied. A segment the node does not hold fails the read (503, "channel
// not available", retriable): it is never answered without it.
func (n *Node) workerView(ctx context.Context, r *plan.Read) (*readView, error) {
	if len(r.VChannels) != 1 || r.ReadTS == 0 || !r.HasExpireBefore {
		return nil, errcode.Invalid("a read of named segments needs one vchannel, a read timestamp and a TTL cut-off")
	}
	w, c, err := n.workerOf(r.CollectionID, r.VChannels[0])
	if err != nil {
		return nil, err
	}
	d := w.d
	if _, err := d.waitTSafe(ctx, r.ReadTS); err != nil {
		return nil, err
	}
	v := &readView{c: c, ts: r.ReadTS, expire: r.ExpireBefore}
	d.mu.RLock()
	defer d.mu.RUnlock()
	select {
	case <-d.done: // stopped: its segments are being dropped
		return nil, d.stoppedErr()
	default:
	}
	for _, id := range r.Segments {
		s, ok := d.sealed[id]
		if !ok || !s.Acquire() {
			v.close()
			return nil, errcode.New(errcode.ChannelNotAvailable,
				"channel not available[channel=%s]: segment %d of collection %s is not loaded on this worker query node",
				d.vchannel, id, c.info.Name)
		}
		v.segs, v.grow = append(v.segs, s), append(v.grow, false)
	}
	return v, nil
}
