package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/strata-db/strata/internal/wal"
)

// reader reads one pchannel from its segment files through a buffered
// reader (served from the OS page cache when tailing). It takes the
// channel lock only when it has consumed every record it knew to be durable.
type reader struct {
	c        *channel
	off      int64 // offset of the next record to return
	bufSize  int
	maxBytes int64

	f     *os.File
	seg   segment
	sc    recordScanner // positioned at record off when f != nil
	limit int64         // records < limit may be read without locking
	err   error         // sticky error (corruption, closed)
}

// Next implements wal.Reader.
func (r *reader) Next(ctx context.Context) (wal.Record, error) {
	if r.err != nil {
		return wal.Record{}, r.err
	}
	for r.off >= r.limit {
		if err := r.refresh(ctx); err != nil {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				r.err = err
			}
			return wal.Record{}, err
		}
	}
	pos := r.sc.pos
	data, err := r.sc.next(true, true)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = ErrSegmentGap
		}
		ce := &CorruptionErr{Segment: r.seg.path, Offset: pos, Err: err}
		r.c.noteReadDamage(ce)
		r.err = ce
		return wal.Record{}, r.err
	}
	rec := wal.Record{Offset: r.off, Data: data}
	r.off++
	return rec, nil
}

// refresh waits until record off is durable, then positions the reader on
// its segment and raises limit.
func (r *reader) refresh(ctx context.Context) error {
	c := r.c
	for {
		c.mu.Lock()
		switch {
		case c.halted:
			c.mu.Unlock()
			return wal.ErrClosed
		case r.off < c.start:
			c.mu.Unlock()
			return fmt.Errorf("%w: offset %d < start %d", wal.ErrTruncated, r.off, c.start)
		case r.off >= c.end && c.damaged != nil:
			err := c.damaged
			c.mu.Unlock()
			return err
		case r.off < c.end:
			i := sort.Search(len(c.segs), func(i int) bool { return c.segs[i].first > r.off }) - 1
			seg, bound := c.segs[i], c.end
			if i+1 < len(c.segs) {
				bound = c.segs[i+1].first
			}
			c.mu.Unlock()
			if r.f == nil || seg.first != r.seg.first {
				if err := r.open(seg); err != nil {
					return err
				}
			}
			r.limit = bound
			return nil
		}
		wait := c.notify
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// open switches to seg and skips to record off.
func (r *reader) open(seg segment) error {
	r.closeFile()
	f, err := os.Open(seg.path)
	if errors.Is(err, os.ErrNotExist) {
		r.c.mu.Lock()
		truncated := seg.first < r.c.start
		r.c.mu.Unlock()
		if truncated {
			return fmt.Errorf("%w: segment %s removed", wal.ErrTruncated, seg.path)
		}
		ce := &CorruptionErr{Segment: seg.path, Err: ErrMissingSegment}
		r.c.noteReadDamage(ce)
		return ce
	}
	if err != nil {
		return fmt.Errorf("wal: open segment: %w", err)
	}
	r.f, r.seg = f, seg
	if r.sc.br == nil {
		r.sc.br = bufio.NewReaderSize(f, r.bufSize)
	} else {
		r.sc.br.Reset(f)
	}
	r.sc.pos, r.sc.maxBytes = 0, r.maxBytes
	for i := seg.first; i < r.off; i++ {
		pos := r.sc.pos
		if _, err := r.sc.next(false, false); err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrSegmentGap
			}
			ce := &CorruptionErr{Segment: seg.path, Offset: pos, Err: err}
			r.c.noteReadDamage(ce)
			return ce
		}
	}
	return nil
}

func (r *reader) closeFile() {
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}

// Close implements wal.Reader.
func (r *reader) Close() error {
	r.closeFile()
	r.limit = 0
	r.err = wal.ErrClosed
	return nil
}
