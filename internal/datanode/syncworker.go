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
	jobSync  jobKind = iota // write buffers, report files and the checkpoint
	jobStart                // report a segment's start position
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
	queue    chan *syncJob
	cancel   context.CancelFunc
	stopped  chan struct{}
	// reported is the last checkpoint reported to the coordinator (only the
	// worker's goroutine uses it once started).
	reported catalog.ChannelCheckpoint
}

// startWorker starts the sync worker of a vchannel whose checkpoint in the
// coordinator is cp. stop ends it.
func (n *Node) startWorker(ctx context.Context, vchannel string, cp catalog.ChannelCheckpoint) *syncWorker {
	ctx, cancel := context.WithCancel(ctx)
	w := &syncWorker{
		node: n, vchannel: vchannel, queue: make(chan *syncJob, syncQueueLength), cancel: cancel,
		stopped: make(chan struct{}), reported: cp,
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

// handle runs one job; a sync is retried with backoff until it succeeds or
// ctx ends.
func (w *syncWorker) handle(ctx context.Context, job *syncJob) {
	switch job.kind {
	case jobStart:
		// Not fatal, and not retried: the start stays unknown (L0
		// compaction waits for the segment's first sync).
		err := w.node.coord.Synced(ctx, catalog.SyncReport{
			VChannel: w.vchannel, Checkpoint: w.reported,
			Segments: []catalog.SegmentSync{job.start},
		})
		if err != nil && ctx.Err() == nil {
			w.node.logger.Warn("recording a segment's start position failed", "segment", job.start.SegmentID, "err", err)
		}
	case jobSync:
		backoff := 100 * time.Millisecond
		for {
			err := w.sync(ctx, job)
			if err == nil || ctx.Err() != nil {
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
