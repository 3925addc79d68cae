package datanode

import (
	"context"
	"errors"
	"time"

	"github.com/strata-db/strata/internal/catalog"
)

// Syncs run on a worker per vchannel, so that one slow object-store write
// (a Put stuck on a throttled bucket) does not stall the pchannel: the
// pchannel's reader goes on feeding the other vchannels, and this one's
// channel loop goes on buffering, while the worker writes.
//
// The channel loop plans each sync (requestSync): it detaches the buffers
// the sync writes, computes the checkpoint the sync may report (the first
// message still only in memory, else just past the last one, exactly as if
// the sync ran inline), updates its own state as if the sync were done, and
// queues the job. The worker runs jobs in order. A job's checkpoint is
// reported together with its files, and only after they are durable; since
// every earlier job of the vchannel completed before (and the checkpoint
// never covers a buffer still in the channel), a reported checkpoint never
// covers a row that is not in object storage. A failed job is retried with
// backoff until it succeeds or the pchannel stops: the jobs after it wait,
// so checkpoints stay in order, and the WAL keeps everything meanwhile. When
// the pchannel stops, queued jobs are dropped unreported and their rows are
// read again from the checkpoint at the restart, like the channel's buffers.
//
// The queue is bounded (syncQueueLength): when it is full the channel loop
// waits, so a vchannel whose store stays slow holds back its pchannel's
// reader instead of buffering without limit. Bytes handed to the worker no
// longer count towards MemoryHighWatermark; the queue bounds them.

// syncQueueLength is how many syncs a vchannel may have queued.
const syncQueueLength = 4

// syncOpts name what a sync writes besides the listed segments' buffers.
type syncOpts uint8

const (
	// withDeletes also writes the delete buffer, as a new L0 segment.
	withDeletes syncOpts = 1 << iota
	// asFlush marks the listed segments Flushed: the answer to a Flush message.
	asFlush
)

// jobKind is what a syncJob does.
type jobKind uint8

const (
	jobSync    jobKind = iota // write buffers, report files and the checkpoint
	jobStart                  // report a segment's start position
	jobBarrier                // close done: every job before it completed
)

// syncJob is one unit of the worker's work, planned by the channel loop.
type syncJob struct {
	kind jobKind
	coll *catalog.Collection // the schema the buffers were written with
	// segs are the segments synced (a nil buffer: no rows to write, as for
	// a flushed segment whose rows were all synced before).
	segs  []jobSeg
	flush bool
	// dels is written as an L0 segment (nil = none).
	dels *deleteBuffer
	// lastOffset is the last message the sync covers.
	lastOffset int64
	// cp is the checkpoint reported with the files.
	cp catalog.ChannelCheckpoint
	// start is a jobStart's report.
	start catalog.SegmentSync
	// done is a jobBarrier's signal.
	done chan struct{}
}

type jobSeg struct {
	id  int64
	buf *segBuffer
}

// errWorkerStopped reports a job submitted to a worker that stopped.
var errWorkerStopped = errors.New("datanode: sync worker stopped")

// syncWorker runs one vchannel's sync jobs in order.
type syncWorker struct {
	node     *Node
	vchannel string
	// epoch is the assignment epoch every report carries (0: unfenced).
	epoch int64
	// fence stops the vchannel: the coordinator refused a report as stale.
	fence   func()
	queue   chan *syncJob
	cancel  context.CancelFunc
	stopped chan struct{}
	// reported is the last checkpoint reported to the coordinator (only the
	// worker's goroutine uses it once started).
	reported catalog.ChannelCheckpoint
}

// startWorker starts the sync worker of a vchannel whose checkpoint in the
// coordinator is cp; its reports carry epoch, and one refused as stale
// calls fence (and ends the worker's job). stop ends it.
func (n *Node) startWorker(ctx context.Context, vchannel string, epoch int64, cp catalog.ChannelCheckpoint,
	fence func(),
) *syncWorker {
	ctx, cancel := context.WithCancel(ctx)
	w := &syncWorker{
		node: n, vchannel: vchannel, epoch: epoch, fence: fence, queue: make(chan *syncJob, syncQueueLength),
		cancel: cancel, stopped: make(chan struct{}), reported: cp,
	}
	go w.loop(ctx)
	return w
}

func (w *syncWorker) loop(ctx context.Context) {
	defer close(w.stopped)
	for {
		select {
		case <-ctx.Done():
			return
		case job := <-w.queue:
			w.handle(ctx, job)
		}
	}
}

// stop cancels the worker (a running job's writes are cut short, queued
// jobs are dropped) and waits for it. It is idempotent.
func (w *syncWorker) stop() {
	w.cancel()
	<-w.stopped
}

// submit queues a job, waiting while the queue is full.
func (w *syncWorker) submit(ctx context.Context, job *syncJob) error {
	select {
	case w.queue <- job:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-w.stopped:
		return errWorkerStopped
	}
}

// drain waits until every job queued so far has completed. It fails when
// ctx ends or the worker stopped (the vchannel was fenced).
func (w *syncWorker) drain(ctx context.Context) error {
	done := make(chan struct{})
	if err := w.submit(ctx, &syncJob{kind: jobBarrier, done: done}); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-w.stopped:
		return errWorkerStopped
	}
}

// fenced reports whether err is the coordinator's refusal of a stale
// report; if so it stops the vchannel (fence).
func (w *syncWorker) fenced(err error) bool {
	if !catalog.IsStaleEpoch(err) {
		return false
	}
	w.node.logger.Warn("the data coordinator refused a sync report as stale: the vchannel moved to another data node; stopping it",
		"vchannel", w.vchannel, "epoch", w.epoch, "err", err)
	if w.fence != nil {
		w.fence()
	}
	return true
}

// handle runs one job; a sync is retried with backoff until it succeeds,
// ctx ends or the report is refused as stale.
func (w *syncWorker) handle(ctx context.Context, job *syncJob) {
	switch job.kind {
	case jobBarrier:
		close(job.done)
	case jobStart:
		// Not fatal, and not retried: the start stays unknown (L0
		// compaction waits for the segment's first sync).
		err := w.node.coord.Synced(ctx, catalog.SyncReport{
			VChannel: w.vchannel, Epoch: w.epoch, Checkpoint: w.reported,
			Segments: []catalog.SegmentSync{job.start},
		})
		if w.fenced(err) {
			return
		}
		if err != nil && ctx.Err() == nil {
			w.node.logger.Warn("recording a segment's start position failed", "segment", job.start.SegmentID, "err", err)
		}
	case jobSync:
		backoff := 100 * time.Millisecond
		for {
			err := w.sync(ctx, job)
			if err == nil || ctx.Err() != nil || w.fenced(err) {
				return
			}
			ids := make([]int64, len(job.segs))
			for i, s := range job.segs {
				ids[i] = s.id
			}
			w.node.logger.Warn("sync failed; retrying", "vchannel", w.vchannel, "segments", ids, "flush", job.flush,
				"err", err, "backoff", backoff.String())
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
		}
	}
}

// requestSync plans a sync of the segments ids (and what opts add) and
// queues it on the worker; the channel's state moves on as if it were done.
// It fails only when ctx ends or the worker stopped.
func (c *channel) requestSync(ctx context.Context, ids []int64, opts syncOpts) error {
	job := &syncJob{kind: jobSync, coll: c.coll, flush: opts&asFlush != 0, lastOffset: c.lastOffset}
	var freed int64
	for _, id := range ids {
		b := c.segs[id]
		job.segs = append(job.segs, jobSeg{id: id, buf: b})
		if b != nil {
			freed += b.bytes
		}
	}
	if opts&withDeletes != 0 && c.dels != nil {
		job.dels = c.dels
	}
	job.cp = c.checkpointAfter(ids, job.dels != nil)
	if err := c.worker.submit(ctx, job); err != nil {
		return err
	}
	for _, id := range ids {
		delete(c.segs, id)
		c.synced[id] = c.lastOffset
		if job.flush {
			c.flushed[id] = true
		}
	}
	if job.dels != nil {
		c.dels = nil
	}
	c.node.addBuffered(-freed)
	c.cp = job.cp
	c.lastSave = time.Now()
	return nil
}

// checkpointAfter is the checkpoint once the segments ids (and the delete
// buffer, with deletes) are synced: the first message still only in
// memory, else just past the last one; never behind the current one.
func (c *channel) checkpointAfter(ids []int64, deletes bool) catalog.ChannelCheckpoint {
	cp := catalog.ChannelCheckpoint{
		VChannel: c.vchannel, Position: catalog.Position{Offset: c.lastOffset + 1, TimeTick: c.lastTS},
		DeltaSyncedOffset: c.cp.DeltaSyncedOffset,
	}
	if deletes {
		cp.DeltaSyncedOffset = c.lastOffset
	}
	synced := map[int64]bool{}
	for _, id := range ids {
		synced[id] = true
	}
	lower := func(p catalog.Position) {
		if p.Offset < cp.Position.Offset {
			cp.Position = catalog.Position{Offset: p.Offset, TimeTick: p.TimeTick - 1}
		}
	}
	for id, b := range c.segs {
		if !synced[id] {
			lower(b.start)
		}
	}
	if c.dels != nil && !deletes {
		lower(c.dels.start)
	}
	if cp.Position.Offset < c.cp.Position.Offset {
		cp.Position = c.cp.Position // never move backwards
	}
	return cp
}
