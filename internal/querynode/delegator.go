package querynode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/segment"
	"github.com/strata-db/strata/internal/wal"
)

// deleteBatch is one Delete message (or one L0 delta log): keys and their
// timestamps, and the largest of them. A Delete message stamps every key
// with its time tick, so a batch whose keys share one timestamp keeps only
// that one (tss nil) rather than a copy a key, which it held until pruned.
type deleteBatch struct {
	pks   column.Column
	tss   []uint64 // each key's timestamp; nil when every key's is maxTs
	maxTs uint64
}

func newDeleteBatch(pks column.Column, tss []uint64) deleteBatch {
	b := deleteBatch{pks: pks, tss: tss}
	uniform := true
	for _, t := range tss {
		b.maxTs = max(b.maxTs, t)
		uniform = uniform && t == tss[0]
	}
	if uniform {
		b.tss = nil
	}
	return b
}

// applyTo marks the batch's keys deleted in seg. scratch holds the
// timestamps of a batch of one timestamp; it is reused across calls.
func (b deleteBatch) applyTo(seg *segment.Segment, scratch *[]uint64) {
	tss := b.tss
	if tss == nil {
		n := b.pks.Len()
		if cap(*scratch) < n {
			*scratch = make([]uint64, n)
		}
		tss = (*scratch)[:n]
		for i := range tss {
			tss[i] = b.maxTs
		}
	}
	seg.Delete(b.pks, tss)
}

// replayDeletes applies every buffered delete batch to seg, a segment just
// loaded or attached. The caller holds d.mu.
func (d *delegator) replayDeletes(seg *segment.Segment) {
	var scratch []uint64
	for _, db := range d.deletes {
		db.applyTo(seg, &scratch)
	}
}

// delegator serves one vchannel of a loaded collection.
type delegator struct {
	node     *Node
	info     *catalog.Collection
	vchannel string
	pchannel string
	seek     int64
	end      int64 // WAL end when the load started; caught up past it
	pin      int64 // WAL pin at the next offset to read (node.pins; 0 = none)

	// follow serialises the steps that swap segments in from the
	// coordinator's view (handoffs and following compactions): each reads
	// the view, loads, then installs, and must not install what another
	// step has replaced meanwhile.
	follow sync.Mutex

	mu      sync.RWMutex
	growing map[int64]*segment.Segment
	sealed  map[int64]*segment.Segment
	flushed map[int64]bool // inserts for these segments are skipped
	pending map[int64]bool // flush seen, waiting for the flushed copy
	// deletes are kept to be applied to segments loaded later (handoffs,
	// compaction outputs) until pruneDeletes finds every such segment
	// already reflects them.
	deletes []deleteBatch
	// since is the first insert timestamp of each growing segment.
	since map[int64]uint64
	// cached lists the mmap cache keys of each sealed segment's mapped
	// files, removed from the cache when the segment is dropped for good.
	cached map[int64][]string

	tsMu     sync.Mutex
	tsafe    uint64
	next     int64
	advanced chan struct{} // closed and replaced whenever tsafe or next moves
	handoff  chan struct{}
	// done is closed when run returns; stopErr (under tsMu) says why.
	done     chan struct{}
	stopErr  error
	released bool // run stopped because the collection was released
	// abort stops run with an error (set before run starts).
	abort context.CancelCauseFunc

	// worker marks a worker shard (worker.go): it serves the sealed
	// segments a shard leader on another node gave it, applies the
	// vchannel's deletes to them and keeps no growing rows, follows no
	// handoff or compaction (the query coordinator tells it what to hold).
	worker bool
	// remote is a leader's distribution (under mu): the sealed segments of
	// the vchannel that worker nodes serve; they are not in sealed. A
	// read takes sealed, growing and remote in one step (readSnapshot).
	remote distribution
	// gen counts the reads that took the current distribution (under mu):
	// a change of the distribution waits for them before a worker
	// releases what they may still read.
	gen *readGen
}

// readGen counts the reads in progress that took one distribution.
type readGen struct{ reads sync.WaitGroup }

// panicError is a panic recovered in a delegator; the log shows its stack.
type panicError struct {
	val   any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.val) }

// newDelegator builds the delegator of a vchannel: its recovery view, L0
// deletes and flushed segments, loaded in parallel (a few at a time). It
// counts the segments in progress as it goes (nil: not counted).
func newDelegator(ctx context.Context, n *Node, info *catalog.Collection, vchannel, pchannel string,
	progress *segmentProgress,
) (*delegator, error) {
	return buildDelegator(ctx, n, info, vchannel, pchannel, progress, nil)
}

// buildDelegator is newDelegator; only, when not nil, makes it a worker
// shard serving exactly those flushed segments (worker.go).
func buildDelegator(ctx context.Context, n *Node, info *catalog.Collection, vchannel, pchannel string,
	progress *segmentProgress, only map[int64]bool,
) (*delegator, error) {
	if progress == nil {
		progress = &segmentProgress{}
	}
	d := &delegator{
		node: n, info: info, vchannel: vchannel, pchannel: pchannel,
		growing: map[int64]*segment.Segment{}, sealed: map[int64]*segment.Segment{},
		flushed: map[int64]bool{}, pending: map[int64]bool{}, since: map[int64]uint64{}, cached: map[int64][]string{},
		advanced: make(chan struct{}), handoff: make(chan struct{}, 1), done: make(chan struct{}),
		worker: only != nil, gen: &readGen{},
	}
	// Pin the whole pchannel before reading where the replay starts, then
	// move the pin there: the segments load first, and meanwhile the
	// checkpoints (and the WAL truncation behind them) move on.
	if n.pins != nil {
		d.pin = n.pins.Pin(pchannel, 0)
	}
	ok := false
	defer func() {
		if !ok {
			d.unpin()
		}
	}()
	rec, err := n.segs.Recovery(ctx, vchannel)
	if err != nil {
		return nil, err
	}
	d.seek = rec.SeekOffset
	d.next = rec.SeekOffset
	d.movePin(rec.SeekOffset)
	end, err := n.log.End(ctx, pchannel)
	if err != nil {
		return nil, err
	}
	d.end = end
	var flushed []catalog.SegmentInfo
	for _, s := range rec.Segments {
		switch {
		case s.Level == catalog.LevelL0:
			if err := d.loadDeltas(ctx, s); err != nil {
				return nil, err
			}
		case d.worker:
			if only[s.ID] && s.State == catalog.SegmentFlushed {
				flushed = append(flushed, s)
			}
		case s.State == catalog.SegmentFlushed:
			flushed = append(flushed, s)
		case s.State == catalog.SegmentSealed:
			d.pending[s.ID] = true
		}
	}
	if d.worker && len(flushed) != len(only) {
		return nil, errcode.New(errcode.ChannelNotAvailable, "channel not available[channel=%s]: segments %v are not all flushed segments of it",
			vchannel, sortedKeys(only))
	}
	// Flushed segments load in parallel (a few at a time: each one also
	// loads its fields in parallel).
	progress.total.Add(int64(len(flushed)))
	var attached atomic.Int64
	defer func() {
		if !ok { // a retry counts this view's segments again
			progress.total.Add(-int64(len(flushed)))
			progress.done.Add(-attached.Load())
		}
	}()
	segs := make([]*segment.Segment, len(flushed))
	defer func() {
		if !ok { // the segments loaded before the failure
			for _, s := range segs {
				if s != nil {
					_ = s.Release()
				}
			}
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, s := range flushed {
		g.Go(func() error {
			seg, err := d.loadSealed(gctx, s)
			if err != nil {
				return err
			}
			segs[i] = seg
			attached.Add(1)
			progress.done.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, s := range flushed {
		d.sealed[s.ID] = segs[i]
		d.flushed[s.ID] = true
	}
	for _, seg := range d.sealed {
		d.replayDeletes(seg)
	}
	n.logger.Debug("querynode: vchannel view", "vchannel", vchannel, "seek", d.seek, "end", d.end,
		"checkpoint", rec.Checkpoint.Position.Offset, "flushed", len(flushed), "pending", sortedKeys(d.pending))
	ok = true
	return d, nil
}

func (d *delegator) movePin(next int64) {
	if d.pin != 0 {
		d.node.pins.Move(d.pin, next)
	}
}

// unpin releases the delegator's WAL pin (idempotent).
func (d *delegator) unpin() {
	if d.pin != 0 {
		d.node.pins.Release(d.pin)
	}
}

// loadDeltas reads an L0 segment's delta logs into the delete list.
func (d *delegator) loadDeltas(ctx context.Context, s catalog.SegmentInfo) error {
	for _, l := range s.Deltalogs {
		pks, tss, err := d.node.readDeltaLog(ctx, s, l)
		if err != nil {
			return err
		}
		d.deletes = append(d.deletes, newDeleteBatch(pks, tss))
	}
	return nil
}

// run consumes the vchannel until ctx ends; then it returns
// context.Cause(ctx): context.Canceled, or the error d.abort stopped it
// with. A panic while applying a message, or in the handoff loop, stops the
// delegator with an error (and so its collection), not the process.
func (d *delegator) run(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{val: r, stack: debug.Stack()}
		}
	}()
	sc, err := wal.OpenScanner(ctx, d.node.log, d.pchannel, d.seek)
	if err != nil {
		return err
	}
	defer sc.Close()
	// The handoff loop stops with the channel: when reading fails, run must
	// return (and report) rather than wait for it forever.
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			if r := recover(); r != nil {
				d.abort(fmt.Errorf("handoff: %w", &panicError{val: r, stack: debug.Stack()}))
			}
		}()
		if d.worker {
			d.pruneLoop(hctx)
			return
		}
		d.handoffLoop(hctx)
	}()
	defer wg.Wait()
	defer stop()
	for {
		e, err := sc.Next(ctx)
		var bad *wal.BadRecordError
		if errors.As(err, &bad) {
			d.quarantine(wal.Entry{Position: wal.Position{PChannel: d.pchannel, Offset: bad.Offset}}, err)
			d.advance(bad.Offset+1, 0)
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return err
		}
		if err := d.handle(ctx, e); err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			// A message this node cannot apply (malformed) must not stop the
			// channel: reads would wait forever. Quarantine it: report it
			// (log, count, health) and move on.
			d.quarantine(e, err)
			d.advance(e.Position.Offset+1, e.Message.TimeTick-1)
		}
	}
}

// quarantine reports a message (or a whole record) the delegator cannot
// apply and skips: logged with its position, counted and listed by the
// node's Problems.
func (d *delegator) quarantine(e wal.Entry, err error) {
	d.node.logger.Error("quarantined a WAL message the query node cannot apply", "vchannel", d.vchannel,
		"pchannel", d.pchannel, "offset", e.Position.Offset, "type", e.Message.Type.String(), "err", err)
	n := d.node.quarantined.Add(1)
	d.node.quarantine.Report(health.Problem{
		Component: "querynode", Subject: "vchannel " + d.vchannel,
		Reason: fmt.Sprintf("quarantined %s message at %s offset %d: %v (%d quarantined in all)",
			e.Message.Type, d.pchannel, e.Position.Offset, err, n),
	})
}

func (d *delegator) handle(ctx context.Context, e wal.Entry) error {
	m := e.Message
	ts := m.TimeTick
	if m.VChannel != "" && m.VChannel != d.vchannel {
		d.advance(e.Position.Offset+1, ts-1)
		return nil
	}
	switch m.Type {
	case wal.TypeInsert:
		if d.worker {
			ts-- // a worker keeps no growing rows
			break
		}
		if err := d.applyInsert(ctx, m); err != nil {
			return err
		}
		ts--
	case wal.TypeDelete:
		if err := d.applyDelete(m); err != nil {
			return err
		}
		ts--
	case wal.TypeFlush:
		if d.worker {
			break // the leader hands off; the coordinator places
		}
		ids, err := wal.DecodeFlush(m.Payload)
		if err != nil {
			return err
		}
		d.mu.Lock()
		for _, id := range ids {
			if !d.flushed[id] {
				d.pending[id] = true
			}
		}
		d.mu.Unlock()
		d.kickHandoff()
	}
	d.advance(e.Position.Offset+1, ts)
	return nil
}

func (d *delegator) advance(next int64, ts uint64) {
	d.movePin(next)
	d.tsMu.Lock()
	defer d.tsMu.Unlock()
	d.next = next
	if ts > d.tsafe {
		d.tsafe = ts
	}
	close(d.advanced)
	d.advanced = make(chan struct{})
}

func (d *delegator) applyInsert(ctx context.Context, m wal.Message) error {
	req := &msgpb.InsertRequest{}
	if err := proto.Unmarshal(m.Payload, req); err != nil {
		return fmt.Errorf("decode insert: %w", err)
	}
	d.mu.RLock()
	skip := d.flushed[req.GetSegmentID()]
	seg := d.growing[req.GetSegmentID()]
	if seg != nil && !seg.Acquire() {
		seg = nil // dropped meanwhile: flushed is set, checked below
	}
	d.mu.RUnlock()
	if seg != nil {
		// Held while appending: a handoff may drop the segment meanwhile,
		// and its memory is freed only once no one holds it.
		defer func() { _ = seg.Release() }()
	}
	if skip {
		return nil
	}
	if seg == nil {
		admitted, err := d.admit(ctx, req.GetSegmentID())
		if err != nil || !admitted {
			return err
		}
	}
	cols, err := column.InsertColumns(d.info.Schema, req.GetFieldsData(), int(req.GetNumRows()))
	if err != nil {
		return err
	}
	n := int(req.GetNumRows())
	if seg == nil {
		seg, err = segment.NewGrowing(segment.Info{
			ID: req.GetSegmentID(), CollectionID: d.info.ID,
			PartitionID: req.GetPartitionID(), VChannel: d.vchannel, Level: int(catalog.LevelL1),
		}, d.info.Schema, int(d.node.cfg.GrowingReserve))
		if err != nil {
			return err
		}
		d.mu.Lock()
		if d.flushed[req.GetSegmentID()] {
			// Replaced by a compaction's output since the check above.
			d.mu.Unlock()
			_ = seg.Release() // never read: an unmap error leaves the address space as it was
			return nil
		}
		_ = seg.Acquire() // a new segment: always held; released after appending, as above
		defer func() { _ = seg.Release() }()
		d.growing[req.GetSegmentID()] = seg
		d.since[req.GetSegmentID()] = m.TimeTick
		d.mu.Unlock()
	}
	tss := make([]uint64, n)
	for i := range tss {
		tss[i] = m.TimeTick
	}
	if err := seg.Append(cols, tss); err != nil {
		return err
	}
	// Deletes that arrived earlier on this channel cannot apply to rows
	// inserted later (delete ts < insert ts), so no replay is needed.
	return nil
}

// admit decides, on the first insert of a segment the delegator neither
// serves nor skips yet, whether its rows go into a growing segment here.
// The view the delegator started from serves every segment Flushed then
// from its binlogs (their inserts are skipped); every other segment's rows
// are replayed, and must stay visible until what replaces them is served:
//
//   - Growing or Sealed: a growing segment, handed off when it is flushed.
//   - Flushed since the view was taken: a growing segment too, queued for
//     the handoff at once (skipping its rows would hide them until then).
//   - Dropped (compacted away, its partition or collection dropped) or
//     unknown (dropped and garbage collected): its rows are in a live
//     compaction output or were deleted. The delegator follows compactions
//     first, so that the outputs are served before the rows are skipped.
func (d *delegator) admit(ctx context.Context, id int64) (bool, error) {
	info, ok, err := d.node.segs.Segment(ctx, id)
	if err != nil {
		return false, err
	}
	if ok && (info.State == catalog.SegmentGrowing || info.State == catalog.SegmentSealed) {
		return true, nil
	}
	d.node.logger.Debug("querynode: replaying inserts of a segment not growing", "vchannel", d.vchannel,
		"segment", id, "known", ok, "state", info.State.String())
	if ok && info.State == catalog.SegmentFlushed {
		d.mu.Lock()
		d.pending[id] = true
		d.mu.Unlock()
		d.kickHandoff()
		return true, nil
	}
	backoff := 50 * time.Millisecond
	for {
		err := d.followCompactions(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		d.node.logger.Warn("following compactions failed; will retry", "vchannel", d.vchannel, "err", err)
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	d.mu.Lock()
	d.flushed[id] = true
	d.mu.Unlock()
	return false, nil
}

func (d *delegator) applyDelete(m wal.Message) error {
	req := &msgpb.DeleteRequest{}
	if err := proto.Unmarshal(m.Payload, req); err != nil {
		return fmt.Errorf("decode delete: %w", err)
	}
	pks := column.FromIDs(req.GetPrimaryKeys(), req.GetInt64PrimaryKeys())
	tss := make([]uint64, pks.Len())
	for i := range tss {
		tss[i] = m.TimeTick
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deletes = append(d.deletes, newDeleteBatch(pks, tss))
	for _, s := range d.growing {
		s.Delete(pks, tss)
	}
	for _, s := range d.sealed {
		s.Delete(pks, tss)
	}
	return nil
}

// handoffLoop swaps growing segments for their flushed copies.
func (d *delegator) handoffLoop(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	lastAttach := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.handoff:
		}
		if time.Since(lastAttach) >= 500*time.Millisecond {
			lastAttach = time.Now()
			if err := d.followCompactions(ctx); err != nil && ctx.Err() == nil {
				d.node.logger.Warn("following compactions failed; will retry", "vchannel", d.vchannel, "err", err)
			}
			d.attachAll(ctx)
		}
		d.mu.RLock()
		var ids []int64
		for id := range d.pending {
			ids = append(ids, id)
		}
		d.mu.RUnlock()
		for _, id := range ids {
			if err := d.handoffOne(ctx, id); err != nil && ctx.Err() == nil {
				d.node.logger.Warn("segment handoff failed; will retry", "segment", id, "err", err)
			}
		}
	}
}

func (d *delegator) handoffOne(ctx context.Context, id int64) error {
	d.follow.Lock()
	defer d.follow.Unlock()
	info, ok, err := d.node.segs.Segment(ctx, id)
	if err != nil {
		return err
	}
	if ok && info.State != catalog.SegmentFlushed && info.State != catalog.SegmentDropped {
		return nil // not flushed yet
	}
	if !ok || info.State == catalog.SegmentDropped {
		// Flushed and compacted away before its handoff: switch to the
		// compaction's output first (committed with the drop), so that the
		// segment's rows are never missing in between.
		if err := d.followCompactionsLocked(ctx); err != nil {
			return err
		}
	}
	var seg *segment.Segment
	if ok && info.State == catalog.SegmentFlushed {
		var err error
		if seg, err = d.loadSealed(ctx, info); err != nil {
			return err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if seg != nil {
		d.replayDeletes(seg)
		if old, ok := d.sealed[id]; ok && old != seg {
			d.releaseLocked(old, false)
		}
		d.sealed[id] = seg
	}
	_, hadGrowing := d.growing[id]
	d.dropGrowing(id)
	delete(d.pending, id)
	d.flushed[id] = true
	d.node.logger.Debug("querynode: handoff", "vchannel", d.vchannel, "segment", id, "loaded", seg != nil,
		"replaced_growing", hadGrowing)
	return nil
}

// kickHandoff wakes the handoff loop (a pending wake-up suffices).
func (d *delegator) kickHandoff() {
	select {
	case d.handoff <- struct{}{}:
	default:
	}
}

// dropGrowing forgets a growing segment and drops the delegator's hold
// on it: its memory is freed once no read or append holds it. The caller
// holds d.mu.
func (d *delegator) dropGrowing(id int64) {
	if s, ok := d.growing[id]; ok {
		if err := s.Release(); err != nil {
			d.node.logger.Warn("releasing a growing segment failed", "segment", id, "err", err)
		}
	}
	delete(d.growing, id)
	delete(d.since, id)
}

// currentTSafe returns the delegator's tsafe.
func (d *delegator) currentTSafe() uint64 {
	d.tsMu.Lock()
	defer d.tsMu.Unlock()
	return d.tsafe
}

// stopped records why run returned and wakes every waiter.
func (d *delegator) stopped(err error) {
	released := err == nil || errors.Is(err, context.Canceled) || errors.Is(err, wal.ErrClosed)
	if released {
		err = errors.New("the collection was released")
	}
	d.tsMu.Lock()
	d.stopErr, d.released = err, released
	d.tsMu.Unlock()
	close(d.done)
}

// stoppedErr is the error a waiter gets once run has returned: 503,
// "channel not available", when the delegator stopped on an error after it
// had caught up (the collection was serving), else 101, "collection not
// loaded".
func (d *delegator) stoppedErr() error {
	d.tsMu.Lock()
	defer d.tsMu.Unlock()
	if !d.released && d.next >= d.end {
		return channelNotAvailable(d.vchannel, d.info.Name, d.stopErr)
	}
	return errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: vchannel %s stopped: %v",
		d.info.Name, d.vchannel, d.stopErr)
}

// caughtUp reports whether the delegator has consumed the WAL up to the end
// it saw when its load started.
func (d *delegator) caughtUp() bool {
	d.tsMu.Lock()
	defer d.tsMu.Unlock()
	return d.next >= d.end
}

// waitTSafe waits until tsafe ≥ ts and returns the tsafe.
func (d *delegator) waitTSafe(ctx context.Context, ts uint64) (uint64, error) {
	for {
		d.tsMu.Lock()
		cur, ch := d.tsafe, d.advanced
		d.tsMu.Unlock()
		if cur >= ts {
			return cur, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("querynode: waiting for %s to reach timestamp %d (at %d): %w", d.vchannel, ts, cur, ctx.Err())
		case <-d.done:
			return 0, d.stoppedErr()
		case <-ch:
		}
	}
}

// waitCaughtUp waits until the delegator has consumed the WAL up to the end
// it saw when the load started.
func (d *delegator) waitCaughtUp(ctx context.Context) error {
	for {
		d.tsMu.Lock()
		next, ch := d.next, d.advanced
		d.tsMu.Unlock()
		if next >= d.end {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("querynode: load interrupted"), ctx.Err())
		case <-d.done:
			return d.stoppedErr()
		case <-ch:
		}
	}
}

// snapshot returns the segments to read, each exactly once: the sealed ones,
// and the growing ones unless growing is false (ignore_growing). Each is
// acquired (segment Holders): the caller releases them with
// releaseSegments once done, so that no mapping they read is unmapped
// under it. A delegator that has stopped (its collection released or
// replaced, or it failed) drops its segments (releaseAll), so a read of it
// would see part of the vchannel or none of it: snapshot then acquires
// nothing and returns why it stopped (stoppedErr, a code the query
// coordinator retries on the current placement). The check is made under
// d.mu, which releaseAll takes only after done is closed.
func (d *delegator) snapshot(growing bool) ([]*segment.Segment, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	select {
	case <-d.done:
		return nil, d.stoppedErr()
	default:
	}
	out := make([]*segment.Segment, 0, len(d.growing)+len(d.sealed))
	for _, s := range d.sealed {
		if s.Acquire() {
			out = append(out, s)
		}
	}
	if !growing {
		return out, nil
	}
	for _, s := range d.growing {
		if s.Acquire() {
			out = append(out, s)
		}
	}
	return out, nil
}

// readSnapshot returns what a read of the delegator reads, taken in one
// step: its sealed and growing segments (acquired) and its distribution
// (the sealed segments worker nodes serve for it). release ends the
// read's hold on the distribution: the caller calls it (and releases the
// segments) when the read is done. A delegator that has stopped gives
// nothing and says why (as snapshot does): its segments are being dropped.
func (d *delegator) readSnapshot() (sealed, growing []*segment.Segment, remote distribution, release func(), err error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	select {
	case <-d.done:
		return nil, nil, nil, nil, d.stoppedErr()
	default:
	}
	for _, s := range d.sealed {
		if s.Acquire() {
			sealed = append(sealed, s)
		}
	}
	for _, s := range d.growing {
		if s.Acquire() {
			growing = append(growing, s)
		}
	}
	if len(d.remote) > 0 {
		remote = maps.Clone(d.remote)
	}
	g := d.gen
	g.reads.Add(1)
	return sealed, growing, remote, g.reads.Done, nil
}

// releaseSegments releases segments a snapshot acquired.
func releaseSegments(segs []*segment.Segment) {
	for _, s := range segs {
		_ = s.Release() // an unmap error leaves the address space as it was
	}
}

// noteCached records the mmap cache keys of a sealed segment's files.
func (d *delegator) noteCached(id int64, keys []string) {
	if len(keys) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cached[id] = append(d.cached[id], keys...)
}

// releaseLocked drops the delegator's hold on a sealed segment leaving it:
// its mappings are unmapped once no read holds it. A segment dropped for
// good (compacted away, gone from the coordinator) also loses its cache
// files; one merely released keeps them for the next load. The caller
// holds d.mu.
func (d *delegator) releaseLocked(s *segment.Segment, drop bool) {
	keys := d.cached[s.ID]
	delete(d.cached, s.ID)
	if drop && len(keys) > 0 {
		if cache, err := d.node.mmapCache(); err == nil {
			for _, k := range keys {
				if err := cache.Remove(k); err != nil {
					d.node.logger.Warn("removing an mmap cache file failed", "key", k, "err", err)
				}
			}
		}
	}
	if err := s.Release(); err != nil {
		d.node.logger.Warn("releasing a segment failed", "segment", s.ID, "err", err)
	}
}

// releaseAll releases every sealed and growing segment of a delegator
// that stopped serving (idempotent).
func (d *delegator) releaseAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, s := range d.sealed {
		d.releaseLocked(s, false)
		delete(d.sealed, id)
	}
	for id := range d.growing {
		d.dropGrowing(id)
	}
}

// followCompactions switches to the outputs of committed compactions and
// forgets dropped segments. An output is loaded before its inputs are
// removed, in one step under the lock, so a read sees either the inputs or
// the output: never both, never neither.
func (d *delegator) followCompactions(ctx context.Context) error {
	d.follow.Lock()
	defer d.follow.Unlock()
	return d.followCompactionsLocked(ctx)
}

// followCompactionsLocked is followCompactions; the caller holds d.follow.
func (d *delegator) followCompactionsLocked(ctx context.Context) error {
	// The coordinator's view is read under our lock, so that a growing
	// segment created meanwhile cannot look "gone".
	d.mu.RLock()
	rec, err := d.node.segs.Recovery(ctx, d.vchannel)
	if err != nil {
		d.mu.RUnlock()
		return err
	}
	live := map[int64]catalog.SegmentInfo{}
	for _, s := range rec.Segments {
		live[s.ID] = s
	}
	var outputs []catalog.SegmentInfo
	for _, s := range rec.Segments {
		// Compaction outputs and bulk-import segments (whose rows never
		// went through the WAL) are served as they are committed.
		if (len(s.CompactedFrom) == 0 && s.ImportJob == 0) || s.State != catalog.SegmentFlushed || s.Level == catalog.LevelL0 {
			continue
		}
		if _, have := d.sealed[s.ID]; have {
			continue
		}
		if _, have := d.remote[s.ID]; have {
			continue
		}
		outputs = append(outputs, s)
	}
	pendingInputs := map[int64]bool{}
	for _, o := range outputs {
		for _, in := range o.CompactedFrom {
			pendingInputs[in] = true
		}
	}
	var gone []int64
	for id := range d.sealed {
		if _, ok := live[id]; !ok && !pendingInputs[id] {
			gone = append(gone, id)
		}
	}
	for id := range d.remote {
		if _, ok := live[id]; !ok && !pendingInputs[id] {
			gone = append(gone, id)
		}
	}
	// A growing copy of a segment flushed and compacted away (possibly
	// through a chain of compactions) whose handoff has not run yet: its
	// rows are in a live output.
	for id := range d.growing {
		if _, ok := live[id]; !ok && !pendingInputs[id] {
			gone = append(gone, id)
		}
	}
	keepFrom := deleteWatermark(rec, d.since)
	d.mu.RUnlock()
	loaded := make([]*segment.Segment, len(outputs))
	for i, o := range outputs {
		seg, err := d.loadSealed(ctx, o)
		if err != nil {
			return err
		}
		loaded[i] = seg
	}
	// One step: every output in, its inputs and the segments they replaced
	// (compacted further since) out.
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.pruneDeletes(keepFrom)
	for i, o := range outputs {
		seg := loaded[i]
		d.replayDeletes(seg)
		d.sealed[o.ID] = seg
		d.flushed[o.ID] = true
		for _, in := range o.CompactedFrom {
			if old, ok := d.sealed[in]; ok {
				d.releaseLocked(old, true)
			}
			delete(d.sealed, in)
			delete(d.remote, in) // its worker drops it when the coordinator says
			d.dropGrowing(in)
			delete(d.pending, in)
			d.flushed[in] = true // inserts still to come for it are in the output
		}
	}
	for _, id := range gone {
		if old, ok := d.sealed[id]; ok {
			d.releaseLocked(old, true)
		}
		delete(d.sealed, id)
		delete(d.remote, id)
		d.dropGrowing(id)
		delete(d.pending, id)
		d.flushed[id] = true
	}
	for _, o := range outputs {
		d.node.logger.Debug("querynode: compaction output served", "vchannel", d.vchannel, "segment", o.ID,
			"rows", o.NumRows, "inputs", o.CompactedFrom)
	}
	if len(gone) > 0 {
		d.node.logger.Debug("querynode: segments gone", "vchannel", d.vchannel, "segments", gone)
	}
	return nil
}

// deleteWatermark returns the timestamp below which a delete no longer
// needs to be kept for segments loaded later. Those are (1) flushed copies
// of growing segments, whose rows are all at or after the growing copy's
// first insert, and (2) compaction outputs and other flushed segments,
// loaded with their own delta logs. A flushed segment's files reflect every
// delete that L0 compaction has applied (the L0 segments it dropped), and a
// mix compaction applies every live L0 segment it sees; only deletes still
// in a live L0 segment or not synced yet (after the checkpoint) may be
// missing from them. So deletes are kept from the smallest of: the first
// insert of every growing copy, the oldest delete of every live L0 segment,
// and the vchannel checkpoint. The caller holds d.mu (read or write).
func deleteWatermark(rec catalog.RecoveryInfo, since map[int64]uint64) uint64 {
	w := rec.Checkpoint.Position.TimeTick
	for _, s := range rec.Segments {
		if s.Level != catalog.LevelL0 {
			continue
		}
		for _, l := range s.Deltalogs {
			if l.TsFrom == 0 {
				return 0 // unknown: keep everything
			}
			w = min(w, l.TsFrom)
		}
	}
	for _, ts := range since {
		w = min(w, ts)
	}
	return w
}

// pruneDeletes drops the delete batches entirely below keepFrom. The
// caller holds d.mu.
func (d *delegator) pruneDeletes(keepFrom uint64) {
	kept := d.deletes[:0]
	for _, b := range d.deletes {
		if b.maxTs >= keepFrom {
			kept = append(kept, b)
		}
	}
	clear(d.deletes[len(kept):])
	d.deletes = kept
}

// sortedKeys returns a set's members in order (for logs).
func sortedKeys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
