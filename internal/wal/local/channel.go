package local

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

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

	mu     sync.Mutex
	queue  []*appendReq
	closed bool          // no more appends are accepted
	failed error         // sticky write or sync failure
	segs   []segment     // durable segments, oldest first; the last is active
	start  int64         // lowest readable offset
	end    int64         // durable end: the offset of the next record
	notify chan struct{} // closed and replaced when end advances or the log stops
	halted bool          // the writer has exited; readers get wal.ErrClosed

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
}

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
// tail in the last segment.
func (c *channel) load() error {
	firsts, err := listSegments(c.dir)
	if err != nil {
		return err
	}
	c.dirExists = true
	if len(firsts) == 0 {
		return nil
	}
	for i, first := range firsts {
		c.segs = append(c.segs, segment{first: first, path: filepath.Join(c.dir, segmentName(first))})
		if i == len(firsts)-1 || !c.cfg.VerifySealed {
			continue
		}
		res, err := scanSegment(c.segs[i].path, c.cfg.MaxRecordBytes)
		if err != nil {
			return err
		}
		if res.err == nil && first+res.records != firsts[i+1] {
			res.err = ErrSegmentGap
		}
		if res.err != nil {
			return &CorruptionErr{Segment: c.segs[i].path, Offset: res.size, Err: res.err}
		}
	}
	last := c.segs[len(c.segs)-1]
	res, err := scanSegment(last.path, c.cfg.MaxRecordBytes)
	if err != nil {
		return err
	}
	if res.err != nil {
		c.logger.Warn("wal: repairing torn tail",
			slog.String("segment", last.path), slog.Int64("byte_offset", res.size),
			slog.Int64("record_offset", last.first+res.records), slog.Any("cause", res.err))
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
	c.start = c.segs[0].first
	c.end = last.first + res.records
	c.next = c.end
	return nil
}

// enqueue queues one append; it never blocks on I/O.
func (c *channel) enqueue(req *appendReq) {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		req.res <- wal.AppendResult{Err: wal.ErrClosed}
		return
	case c.failed != nil:
		err := c.failed
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
	failed := c.failed
	c.mu.Unlock()

	err := failed
	if err == nil {
		err = c.write(c.batch)
	}
	if err != nil {
		c.mu.Lock()
		if c.failed == nil {
			c.failed = err
			c.logger.Error("wal: append failed; pchannel refuses further appends", slog.Any("err", err))
		}
		c.mu.Unlock()
		for _, r := range c.batch {
			r.res <- wal.AppendResult{Err: err}
		}
	} else {
		c.mu.Lock()
		c.segs = append(c.segs, c.newSegs...)
		c.end = c.next
		old := c.notify
		c.notify = make(chan struct{})
		c.mu.Unlock()
		close(old)
		for _, r := range c.batch {
			r.res <- wal.AppendResult{Offset: r.first}
		}
	}
	clear(c.batch)
	c.newSegs = c.newSegs[:0]
	return true
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
			frameHeader(&c.hdr, rec)
			if _, err := c.bw.Write(c.hdr[:]); err != nil {
				return fmt.Errorf("wal: write: %w", err)
			}
			if _, err := c.bw.Write(rec); err != nil {
				return fmt.Errorf("wal: write: %w", err)
			}
			c.fileBytes += headerSize + int64(len(rec))
			c.fileRecords++
			c.next++
		}
	}
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("wal: write: %w", err)
	}
	if err := c.sync(c.f); err != nil {
		return fmt.Errorf("wal: sync %s: %w", filepath.Base(c.f.Name()), err)
	}
	if syncDir {
		return syncDirFile(c.dir, c.sync)
	}
	return nil
}

// roll seals the active segment (flushing and syncing it) and creates a new
// one named after the next offset.
func (c *channel) roll() error {
	if c.f != nil {
		if err := c.bw.Flush(); err != nil {
			return fmt.Errorf("wal: write: %w", err)
		}
		if err := c.sync(c.f); err != nil {
			return fmt.Errorf("wal: sync %s: %w", filepath.Base(c.f.Name()), err)
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
	c.fileBytes, c.fileRecords = 0, 0
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
