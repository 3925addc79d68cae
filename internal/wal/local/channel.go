package local

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/wal"
)

// appendReq is one queued AppendAsync call.
type appendReq struct {
	records [][]byte
	bytes   int64 // framed size of records
	first   int64 // offset assigned by the writer
	res     chan wal.AppendResult
}

// segment names one segment file of a pchannel.
type segment struct {
	first int64 // offset of its first record
	path  string
}

// channel is one pchannel: its durable state, its append queue and the
// writer goroutine that drains the queue (group commit).
type channel struct {
	name   string
	dir    string
	parent string // Log directory, synced when dir is created
	cfg    *Config
	sync   func(*os.File) error
	logger *slog.Logger

	mu      sync.Mutex
	queue   []*appendReq
	closed  bool          // no more appends are accepted
	damaged error         // found at Open: appends are refused, readers past end get it
	failing error         // the last write failure, until a commit succeeds
	readBad error         // the first damage a reader (or VerifySealed) found
	since   [3]time.Time  // when damaged, failing and readBad were first set
	segs    []segment     // durable segments, oldest first; the last is active
	start   int64         // lowest readable offset
	end     int64         // durable end: the offset of the next record
	notify  chan struct{} // closed and replaced when end advances or the log stops
	halted  bool          // the writer has exited; readers get wal.ErrClosed

	kick chan struct{} // coalescing wake-up for the writer (capacity 1)
	stop chan struct{} // closed by Log.Close
	done chan struct{} // closed when the writer goroutine exits

	// Owned by the writer goroutine.
	f           *os.File
	bw          *bufio.Writer
	fileBytes   int64
	fileRecords int64
	next        int64
	dirExists   bool
	newSegs     []segment
	batch       []*appendReq
	hdr         [headerSize]byte
	closeErr    error
	unsynced    int64     // bytes written to f since its last successful fsync
	ackBytes    int64     // size of the active segment at the durable end
	ackRecords  int64     // records of the active segment below the durable end
	orphans     []segment // segment files created by failed commits
	lastErr     error     // the last write failure; recover before writing again
	retryAt     time.Time // no recovery is tried before it
	backoff     time.Duration
}

// Indexes into channel.since.
const (
	sinceDamaged = iota
	sinceFailing
	sinceReadBad
)

func newChannel(name, parent string, cfg *Config, logger *slog.Logger) *channel {
	c := &channel{
		name:   name,
		dir:    filepath.Join(parent, name),
		parent: parent,
		cfg:    cfg,
		sync:   cfg.sync,
		logger: logger.With(slog.String("pchannel", name)),
		notify: make(chan struct{}),
		kick:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	if c.sync == nil {
		c.sync = (*os.File).Sync
	}
	return c
}

// load recovers the channel's state from its directory, repairing a torn
// tail in the last segment. Damage that is not a torn tail leaves the
// segment untouched and sets c.damaged; damage in a sealed segment found
// with Config.VerifySealed is recorded in c.readBad. The error is what
// stops the channel from being used at all (c.damaged is then set by the
// caller).
func (c *channel) load() error {
	firsts, err := listSegments(c.dir)
	if err != nil {
		return err
	}
	c.dirExists = true
	if len(firsts) == 0 {
		return nil
	}
	for _, first := range firsts {
		c.segs = append(c.segs, segment{first: first, path: filepath.Join(c.dir, segmentName(first))})
	}
	c.start = c.segs[0].first
	c.end = c.segs[len(c.segs)-1].first
	if c.cfg.VerifySealed {
		for i := range len(c.segs) - 1 {
			res, err := scanSegment(c.segs[i].path, c.cfg.MaxRecordBytes)
			if err != nil {
				return err
			}
			if res.err == nil && c.segs[i].first+res.records != c.segs[i+1].first {
				res.err = ErrSegmentGap
			}
			if res.err != nil {
				c.noteReadDamage(&CorruptionErr{Segment: c.segs[i].path, Offset: res.size, Err: res.err})
				break
			}
		}
	}
	last := c.segs[len(c.segs)-1]
	res, err := scanSegment(last.path, c.cfg.MaxRecordBytes)
	if err != nil {
		return err
	}
	c.end = last.first + res.records
	if res.err != nil {
		fi, err := os.Stat(last.path)
		if err != nil {
			return fmt.Errorf("wal: stat segment: %w", err)
		}
		if why := classifyTail(last.path, res.size, fi.Size(), res.err, c.cfg); why != nil {
			return &CorruptionErr{Segment: last.path, Offset: res.size, Err: why}
		}
		c.logger.Warn("wal: repairing torn tail",
			slog.String("segment", last.path), slog.Int64("byte_offset", res.size),
			slog.Int64("record_offset", c.end), slog.Int64("bytes_removed", fi.Size()-res.size),
			slog.Any("cause", res.err))
		if err := os.Truncate(last.path, res.size); err != nil {
			return fmt.Errorf("wal: repair %s: %w", last.path, err)
		}
	}
	f, err := os.OpenFile(last.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("wal: open active segment: %w", err)
	}
	if res.err != nil {
		if err := c.sync(f); err != nil {
			_ = f.Close()
			return fmt.Errorf("wal: sync repaired segment %s: %w", last.path, err)
		}
	}
	c.f = f
	c.bw = bufio.NewWriterSize(f, c.cfg.WriteBufferSize)
	c.fileBytes, c.fileRecords = res.size, res.records
	c.ackBytes, c.ackRecords = res.size, res.records
	c.next = c.end
	return nil
}

// setDamaged marks the channel unusable for appends because of err, found
// while loading it.
func (c *channel) setDamaged(err error) {
	c.mu.Lock()
	c.damaged = err
	c.since[sinceDamaged] = time.Now()
	c.mu.Unlock()
	attrs := []any{slog.Int64("record_offset", c.end), slog.Any("err", err)}
	var ce *CorruptionErr
	if errors.As(err, &ce) {
		attrs = append(attrs, slog.String("segment", ce.Segment), slog.Int64("byte_offset", ce.Offset))
	}
	c.logger.Error("wal: pchannel damaged; its files are kept untouched, appends are refused and readers stop at the damage", attrs...)
}

// noteReadDamage records the first damage found by a reader.
func (c *channel) noteReadDamage(err error) {
	c.mu.Lock()
	first := c.readBad == nil
	if first {
		c.readBad = err
		c.since[sinceReadBad] = time.Now()
	}
	c.mu.Unlock()
	if first {
		c.logger.Error("wal: damaged segment; readers stop there", slog.Any("err", err))
	}
}

// problems returns the channel's current problems.
func (c *channel) problems() []health.Problem {
	c.mu.Lock()
	defer c.mu.Unlock()
	subject := "pchannel " + c.name
	var out []health.Problem
	if c.damaged != nil {
		out = append(out, health.Problem{
			Component: "wal", Subject: subject, Since: c.since[sinceDamaged], WritesUnavailable: true,
			Reason: fmt.Sprintf("%v; the file is kept and appends are refused until an operator cuts the WAL at the damage", c.damaged),
		})
	}
	if c.failing != nil {
		out = append(out, health.Problem{
			Component: "wal", Subject: subject, Since: c.since[sinceFailing], WritesUnavailable: true,
			Reason: fmt.Sprintf("appends fail: %v", c.failing),
		})
	}
	if c.readBad != nil {
		out = append(out, health.Problem{
			Component: "wal", Subject: subject, Since: c.since[sinceReadBad],
			Reason: fmt.Sprintf("%v; readers stop there", c.readBad),
		})
	}
	return out
}

// enqueue queues one append; it never blocks on I/O.
func (c *channel) enqueue(req *appendReq) {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		req.res <- wal.AppendResult{Err: wal.ErrClosed}
		return
	case c.damaged != nil:
		err := fmt.Errorf("%w: pchannel %s: %w", ErrDamaged, c.name, c.damaged)
		c.mu.Unlock()
		req.res <- wal.AppendResult{Err: err}
		return
	}
	c.queue = append(c.queue, req)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// run is the writer goroutine: it commits queued appends until stop is
// closed, then drains the queue and closes the active segment.
func (c *channel) run() {
	defer close(c.done)
	for {
		select {
		case <-c.kick:
			for c.commit() {
			}
		case <-c.stop:
			for c.commit() {
			}
			c.shutdown()
			return
		}
	}
}

// commit writes one group of queued appends, fsyncs once and completes
// them. It reports false when the queue was empty.
func (c *channel) commit() bool {
	c.mu.Lock()
	n, size := 0, int64(0)
	for n < len(c.queue) && (n == 0 || size+c.queue[n].bytes <= c.cfg.MaxBatchBytes) {
		size += c.queue[n].bytes
		n++
	}
	if n == 0 {
		c.mu.Unlock()
		return false
	}
	c.batch = append(c.batch[:0], c.queue[:n]...)
	rest := copy(c.queue, c.queue[n:])
	clear(c.queue[rest:])
	c.queue = c.queue[:rest]
	c.mu.Unlock()

	if err := c.writeGroup(c.batch); err != nil {
		c.mu.Lock()
		if c.failing == nil {
			c.since[sinceFailing] = time.Now()
		}
		c.failing = err
		c.mu.Unlock()
		for _, r := range c.batch {
			r.res <- wal.AppendResult{Err: err}
		}
	} else {
		c.mu.Lock()
		c.segs = append(c.segs, c.newSegs...)
		c.end = c.next
		resumed := c.failing != nil
		c.failing = nil
		old := c.notify
		c.notify = make(chan struct{})
		c.mu.Unlock()
		close(old)
		if resumed {
			c.logger.Info("wal: appends resumed", slog.Int64("end", c.next))
		}
		for _, r := range c.batch {
			r.res <- wal.AppendResult{Offset: r.first}
		}
	}
	clear(c.batch)
	c.newSegs = c.newSegs[:0]
	return true
}

// writeGroup writes one group after recovering from an earlier failure if
// there was one. While the backoff after a failure runs, it fails at once.
func (c *channel) writeGroup(batch []*appendReq) error {
	if c.lastErr != nil {
		if wait := time.Until(c.retryAt); wait > 0 {
			return fmt.Errorf("wal: pchannel %s: appends failing (next try in %v): %w", c.name, wait.Round(time.Millisecond), c.lastErr)
		}
		if err := c.recover(); err != nil {
			return c.writeFailed(err)
		}
	}
	if err := c.write(batch); err != nil {
		return c.writeFailed(err)
	}
	if c.lastErr != nil {
		c.lastErr, c.backoff = nil, 0
	}
	c.ackBytes, c.ackRecords = c.fileBytes, c.fileRecords
	return nil
}

// writeFailed records a failed write, sync or recovery and schedules the
// next recovery attempt (exponential backoff).
func (c *channel) writeFailed(err error) error {
	c.orphans = append(c.orphans, c.newSegs...)
	c.backoff = min(max(2*c.backoff, c.cfg.RetryBackoff), maxRetryBackoff*c.cfg.RetryBackoff)
	c.retryAt = time.Now().Add(c.backoff)
	if c.lastErr == nil {
		c.logger.Error("wal: append failed; the pchannel retries after repairing its active segment",
			slog.Int64("durable_end", c.end), slog.Any("err", err))
	}
	c.lastErr = err
	return err
}

// recover undoes what failed commits left behind, so that the next write
// starts exactly at the durable end: it closes the active segment, removes
// the segment files the failed commits created, and truncates the active
// segment to its size at the durable end (bytes after the last successful
// fsync were never acknowledged), fsyncing both.
func (c *channel) recover() error {
	if c.f != nil {
		_ = c.f.Close()
		c.f = nil
	}
	if len(c.orphans) > 0 {
		for _, s := range c.orphans {
			if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("wal: remove unacknowledged segment: %w", err)
			}
		}
		if err := syncDirFile(c.dir, c.sync); err != nil {
			return err
		}
		c.orphans = c.orphans[:0]
	}
	c.next = c.end
	c.fileBytes, c.fileRecords, c.unsynced = 0, 0, 0
	c.mu.Lock()
	var active *segment
	if len(c.segs) > 0 {
		active = &c.segs[len(c.segs)-1]
	}
	c.mu.Unlock()
	if active == nil {
		return nil // no segment yet: the next write creates one
	}
	f, err := os.OpenFile(active.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("wal: reopen active segment: %w", err)
	}
	if err := f.Truncate(c.ackBytes); err != nil {
		_ = f.Close()
		return fmt.Errorf("wal: truncate %s to the durable end: %w", filepath.Base(active.path), err)
	}
	if err := c.sync(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("wal: sync %s: %w", filepath.Base(active.path), err)
	}
	c.f = f
	if c.bw == nil {
		c.bw = bufio.NewWriterSize(f, c.cfg.WriteBufferSize)
	} else {
		c.bw.Reset(f)
	}
	c.fileBytes, c.fileRecords = c.ackBytes, c.ackRecords
	c.logger.Info("wal: active segment repaired after a failed append",
		slog.String("segment", active.path), slog.Int64("byte_offset", c.ackBytes), slog.Int64("record_offset", c.end))
	return nil
}

// write appends the framed records of batch to the active segment, rolling
// segments as needed, and makes them durable.
func (c *channel) write(batch []*appendReq) error {
	syncDir := false
	for _, r := range batch {
		r.first = c.next
		for _, rec := range r.records {
			if c.f == nil || (c.fileBytes >= c.cfg.SegmentSize && c.fileRecords > 0) {
				if err := c.roll(); err != nil {
					return err
				}
				syncDir = true
			}
			frame := headerSize + int64(len(rec))
			if c.unsynced > 0 && c.unsynced+frame > c.cfg.MaxBatchBytes {
				// Keep the unsynced part of the file within one group
				// commit's bound, which recovery relies on.
				if err := c.flushSync(); err != nil {
					return err
				}
			}
			frameHeader(&c.hdr, rec)
			if _, err := c.bw.Write(c.hdr[:]); err != nil {
				return fmt.Errorf("wal: write: %w", err)
			}
			if _, err := c.bw.Write(rec); err != nil {
				return fmt.Errorf("wal: write: %w", err)
			}
			c.fileBytes += frame
			c.unsynced += frame
			c.fileRecords++
			c.next++
		}
	}
	if err := c.flushSync(); err != nil {
		return err
	}
	if syncDir {
		return syncDirFile(c.dir, c.sync)
	}
	return nil
}

// flushSync flushes the buffered writer and fsyncs the active segment.
func (c *channel) flushSync() error {
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("wal: write: %w", err)
	}
	if err := c.sync(c.f); err != nil {
		return fmt.Errorf("wal: sync %s: %w", filepath.Base(c.f.Name()), err)
	}
	c.unsynced = 0
	return nil
}

// roll seals the active segment (flushing and syncing it) and creates a new
// one named after the next offset.
func (c *channel) roll() error {
	if c.f != nil {
		if err := c.flushSync(); err != nil {
			return err
		}
		err := c.f.Close()
		c.f = nil
		if err != nil {
			return fmt.Errorf("wal: close segment: %w", err)
		}
	}
	if !c.dirExists {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return fmt.Errorf("wal: create pchannel dir: %w", err)
		}
		if err := syncDirFile(c.parent, c.sync); err != nil {
			return err
		}
		c.dirExists = true
	}
	path := filepath.Join(c.dir, segmentName(c.next))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("wal: create segment: %w", err)
	}
	c.f = f
	if c.bw == nil {
		c.bw = bufio.NewWriterSize(f, c.cfg.WriteBufferSize)
	} else {
		c.bw.Reset(f)
	}
	c.fileBytes, c.fileRecords, c.unsynced = 0, 0, 0
	c.newSegs = append(c.newSegs, segment{first: c.next, path: path})
	c.logger.Debug("wal: new segment", slog.String("segment", path))
	return nil
}

// shutdown closes the active segment and wakes every reader.
func (c *channel) shutdown() {
	if c.f != nil {
		if err := c.f.Close(); err != nil {
			c.closeErr = fmt.Errorf("wal: close pchannel %s: %w", c.name, err)
		}
		c.f = nil
	}
	c.mu.Lock()
	c.halted = true
	old := c.notify
	c.mu.Unlock()
	close(old)
}

// truncate removes sealed segments whose records all precede before.
func (c *channel) truncate(before int64) error {
	c.mu.Lock()
	k := 0
	for k+1 < len(c.segs) && c.segs[k+1].first <= before {
		k++
	}
	removed := append([]segment(nil), c.segs[:k]...)
	if k > 0 {
		c.segs = append(c.segs[:0], c.segs[k:]...)
		c.start = c.segs[0].first
	}
	start := c.start
	c.mu.Unlock()
	var errs []error
	for _, s := range removed {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("wal: remove segment: %w", err))
		}
	}
	if len(removed) > 0 {
		c.logger.Info("wal: truncated", slog.Int("segments", len(removed)), slog.Int64("start", start))
	}
	return errors.Join(errs...)
}
