package querynode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/fanout"
	"github.com/strata-db/strata/internal/segment"
)

// Sealed segments spread over a replica's query nodes.
//
// The shard leader of a vchannel (its delegator) keeps a distribution:
// the sealed segments of the vchannel that other query nodes of the
// replica, its workers, serve for it (Node.SetDistribution, set by the
// query coordinator). A worker holds such segments in a worker shard of
// the vchannel (Node.LoadSegments, ReleaseSegments): a delegator that
// tails the vchannel for its deletes and time ticks only, keeps no growing
// rows, follows no handoff or compaction, and serves exactly the flushed
// segments it was told to (Milvus's delegator forwards deletes to its
// workers instead; tailing costs each worker a read of the pchannel).
//
// A read goes to the leader, which takes its own segments and its
// distribution in one step (readSnapshot), reads its segments at its read
// timestamp and asks each worker, in parallel, for the segments it holds
// for it at that same timestamp (plan.Read.Segments and ReadTS), then
// merges with the query coordinator's reduce (package fanout). The worker
// waits until its shard has consumed the vchannel up to the timestamp, so
// every delete up to it is applied, and fails the read with 503 ("channel
// not available", retriable) when it does not hold a named segment: a
// segment is never answered without. A change of the distribution waits
// for the reads that took the previous one, so that the coordinator
// releases a segment on a worker only once no read can still ask for it.
//
// Exactness: a segment is in exactly one of the leader's sealed set and
// its distribution. The leader's handoffs add sealed segments of its own;
// when it follows a compaction it serves the outputs itself and removes
// the inputs from its sealed set and its distribution in the same step, so
// a read sees the inputs (local or remote) or the output, never both,
// never neither; the coordinator places the outputs later. The coordinator
// changes the distribution in the order load (on the new holder), switch
// (the leader's distribution), release (on the old holder).

// SegmentReader is a worker query node's read side as a shard leader asks
// it (the in-process *Node implements it, as queryrpc.Client does).
type SegmentReader = fanout.StatsReader

// workerShard is the node's worker shard of one vchannel of a collection.
type workerShard struct {
	d      *delegator
	c      *collection // the collection's schema, for reads
	cancel context.CancelFunc
	done   chan struct{} // closed when its delegator stopped
}

// stop stops the shard's delegator and releases its segments.
func (w *workerShard) stop() {
	w.cancel()
	<-w.done
}

// workerOf returns the worker shard of a collection's vchannel, or the
// retriable "channel not available" error when the node has none.
func (n *Node) workerOf(collectionID int64, vchannel string) (*workerShard, *collection, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	w, ok := n.workers[collectionID][vchannel]
	if !ok {
		return nil, nil, errcode.New(errcode.ChannelNotAvailable,
			"channel not available[channel=%s]: this query node holds no segment of it for collection %d", vchannel, collectionID)
	}
	return w, w.c, nil
}

// LoadSegments makes the node serve sealed segments of a collection's
// vchannel for the vchannel's shard leader on another node: they are
// loaded into the node's worker shard of the vchannel (started when the
// node has none, and caught up with the WAL before it returns), beside
// those it holds. The segments must be flushed segments of the vchannel.
func (n *Node) LoadSegments(ctx context.Context, collectionID int64, vchannel string, segments []int64) error {
	n.workMu.Lock()
	defer n.workMu.Unlock()
	n.mu.RLock()
	w, ok := n.workers[collectionID][vchannel]
	closed := n.closed
	n.mu.RUnlock()
	if closed {
		return errStopped
	}
	if ok {
		select {
		case <-w.done: // stopped on an error: start over
			n.dropWorker(collectionID, vchannel, w)
			ok = false
		default:
		}
	}
	if ok {
		return w.d.addSealed(ctx, segments)
	}
	info, err := n.colls.CollectionByID(collectionID)
	if err != nil {
		return err
	}
	i := slices.Index(info.VChannels, vchannel)
	if i < 0 {
		return errcode.Invalid("vchannel %s is not a vchannel of collection %s", vchannel, info.Name)
	}
	only := map[int64]bool{}
	for _, id := range segments {
		only[id] = true
	}
	d, err := buildDelegator(ctx, n, info, vchannel, info.PChannels[i], nil, only)
	if err != nil {
		return fmt.Errorf("querynode: load segments of %s: %w", vchannel, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	dctx, abort := context.WithCancelCause(sctx)
	d.abort = abort
	w = &workerShard{d: d, c: &collection{info: info}, cancel: cancel, done: make(chan struct{})}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		cancel()
		d.unpin()
		d.releaseAll()
		return errStopped
	}
	if n.workers[collectionID] == nil {
		n.workers[collectionID] = map[string]*workerShard{}
	}
	n.workers[collectionID][vchannel] = w
	n.serving.Add(1)
	n.mu.Unlock()
	go func() {
		defer n.serving.Done()
		defer close(w.done)
		defer abort(nil)
		err := d.run(dctx)
		d.stopped(err)
		d.unpin()
		d.releaseAll()
		if err != nil && !errors.Is(err, context.Canceled) {
			n.logger.Error("a worker shard stopped", "collection", info.Name, "vchannel", vchannel, "err", err)
		}
	}()
	return d.waitCaughtUp(ctx)
}

// dropWorker forgets a worker shard (if it is still the vchannel's).
func (n *Node) dropWorker(collectionID int64, vchannel string, w *workerShard) {
	n.mu.Lock()
	if n.workers[collectionID][vchannel] == w {
		delete(n.workers[collectionID], vchannel)
		if len(n.workers[collectionID]) == 0 {
			delete(n.workers, collectionID)
		}
	}
	n.mu.Unlock()
}

// ReleaseSegments stops serving sealed segments of a collection's
// vchannel for its shard leader; the worker shard stops with its last
// segment. Reads in progress keep the segments they hold.
func (n *Node) ReleaseSegments(collectionID int64, vchannel string, segments []int64) {
	n.workMu.Lock()
	defer n.workMu.Unlock()
	n.mu.RLock()
	w, ok := n.workers[collectionID][vchannel]
	n.mu.RUnlock()
	if !ok {
		return
	}
	w.d.mu.Lock()
	for _, id := range segments {
		if s, ok := w.d.sealed[id]; ok {
			w.d.releaseLocked(s, false)
			delete(w.d.sealed, id)
		}
	}
	empty := len(w.d.sealed) == 0
	w.d.mu.Unlock()
	if empty {
		n.dropWorker(collectionID, vchannel, w)
		w.stop()
	}
}

// releaseWorkers stops the worker shards of a collection (every
// collection when all).
func (n *Node) releaseWorkers(collectionID int64, all bool) {
	n.mu.Lock()
	var ws []*workerShard
	for id, byChan := range n.workers {
		if all || id == collectionID {
			for _, w := range byChan {
				ws = append(ws, w)
			}
			delete(n.workers, id)
		}
	}
	n.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
}

// WorkerSegments lists, by vchannel, the sealed segments of a collection
// the node serves for shard leaders on other nodes.
func (n *Node) WorkerSegments(collectionID int64) map[string][]int64 {
	n.mu.RLock()
	ws := maps.Clone(n.workers[collectionID])
	n.mu.RUnlock()
	out := map[string][]int64{}
	for v, w := range ws {
		w.d.mu.RLock()
		ids := slices.Sorted(maps.Keys(w.d.sealed))
		w.d.mu.RUnlock()
		if len(ids) > 0 {
			out[v] = ids
		}
	}
	return out
}

// addSealed loads flushed segments into a worker shard (those it does not
// hold yet), each with the deletes the shard has seen applied.
func (d *delegator) addSealed(ctx context.Context, ids []int64) error {
	// Serialised with pruneLoop: the deletes pruned meanwhile are in the
	// files read (see deleteWatermark).
	d.follow.Lock()
	defer d.follow.Unlock()
	d.mu.RLock()
	var todo []int64
	for _, id := range ids {
		if _, ok := d.sealed[id]; !ok {
			todo = append(todo, id)
		}
	}
	d.mu.RUnlock()
	loaded := make([]*segment.Segment, 0, len(todo))
	release := func() {
		for _, s := range loaded {
			_ = s.Release()
		}
	}
	for _, id := range todo {
		info, ok, err := d.node.segs.Segment(ctx, id)
		if err != nil {
			release()
			return err
		}
		if !ok || info.State != catalog.SegmentFlushed || info.VChannel != d.vchannel {
			release()
			return errcode.New(errcode.ChannelNotAvailable, "channel not available[channel=%s]: segment %d is not a flushed segment of it",
				d.vchannel, id)
		}
		seg, err := d.loadSealed(ctx, info)
		if err != nil {
			release()
			return err
		}
		loaded = append(loaded, seg)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, seg := range loaded {
		d.replayDeletes(seg)
		d.sealed[seg.ID] = seg
		d.flushed[seg.ID] = true
	}
	return nil
}

// pruneLoop drops, every half second, the deletes a worker shard keeps for
// segments it may load later once their files reflect them (see
// deleteWatermark; a worker has no growing segment), and attaches the
// indexes finished since its segments loaded, as a leader's handoff loop
// does.
func (d *delegator) pruneLoop(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.follow.Lock()
		rec, err := d.node.segs.Recovery(ctx, d.vchannel)
		if err == nil {
			d.mu.Lock()
			d.pruneDeletes(deleteWatermark(rec, nil))
			d.mu.Unlock()
		}
		d.follow.Unlock()
		d.attachAll(ctx)
	}
}
