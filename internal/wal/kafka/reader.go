package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-db/strata/internal/wal"
)

// pastEndBackoff is how long Next waits before fetching again an offset
// beyond the high watermark (opened past the end).
const pastEndBackoff = 20 * time.Millisecond

// reader is a wal.Reader: a consumer client of its own, assigned partition 0
// of the pchannel's topic at the requested offset, with no offset reset (an
// offset that falls below the log start is reported, never skipped).
type reader struct {
	log      *Log
	pchannel string
	topic    string
	cl       *kgo.Client

	// Next is not called concurrently (wal.Reader), so these need no lock.
	next int64         // offset of the next record to return
	buf  []*kgo.Record // fetched records not yet returned
	err  error         // sticky error (ErrTruncated, a gap)

	closeOnce sync.Once
	closed    chan struct{}
}

// Read implements wal.Log. It creates the pchannel's topic if it does not
// exist yet, so that a reader opened before the first append sees it.
func (l *Log) Read(ctx context.Context, pchannel string, from int64) (wal.Reader, error) {
	if from < 0 {
		return nil, fmt.Errorf("wal/kafka: %s: negative offset %d", pchannel, from)
	}
	l.closeMu.RLock()
	defer l.closeMu.RUnlock()
	if l.closed {
		return nil, wal.ErrClosed
	}
	c, err := l.channel(pchannel)
	if err != nil {
		return nil, err
	}
	if err := l.ensureTopic(ctx, c); err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(clientOpts(l.cfg),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.topic: {0: kgo.NewOffset().At(from)}}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxPartitionBytes(l.cfg.MaxRecordBytes+batchOverhead),
		kgo.FetchMaxBytes(max(l.cfg.MaxRecordBytes+batchOverhead, 50<<20)),
		kgo.BrokerMaxReadBytes(max(l.cfg.MaxRecordBytes+batchOverhead, 50<<20)+(1<<20)),
	)...)
	if err != nil {
		return nil, fmt.Errorf("wal/kafka: consumer for %s: %w", pchannel, err)
	}
	r := &reader{log: l, pchannel: pchannel, topic: c.topic, cl: cl, next: from, closed: make(chan struct{})}
	l.mu.Lock()
	l.readers[r] = struct{}{}
	l.mu.Unlock()
	return r, nil
}

// Next implements wal.Reader.
func (r *reader) Next(ctx context.Context) (wal.Record, error) {
	for {
		select {
		case <-r.closed:
			return wal.Record{}, wal.ErrClosed
		default:
		}
		if r.err != nil {
			return wal.Record{}, r.err
		}
		for len(r.buf) > 0 {
			rec := r.buf[0]
			r.buf[0] = nil
			r.buf = r.buf[1:]
			switch {
			case rec.Offset < r.next:
				continue // a batch can start before the requested offset
			case rec.Offset > r.next:
				r.err = fmt.Errorf("wal/kafka: %s: offset %d follows %d: the topic has a gap (compacted or transactional?)",
					r.pchannel, rec.Offset, r.next-1)
				return wal.Record{}, r.err
			}
			r.next++
			return wal.Record{Offset: rec.Offset, Data: rec.Value}, nil
		}
		if err := ctx.Err(); err != nil {
			return wal.Record{}, err
		}
		fs := r.cl.PollFetches(ctx)
		for _, fe := range fs.Errors() {
			if err := r.fetchErr(ctx, fe.Err); err != nil {
				return wal.Record{}, err
			}
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if rec.Topic == r.topic && rec.Partition == 0 {
				r.buf = append(r.buf, rec)
			}
		})
	}
}

// fetchErr maps a fetch error to Next's result; nil means keep polling.
func (r *reader) fetchErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, kgo.ErrClientClosed):
		return wal.ErrClosed
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil
	case errors.Is(err, kerr.OffsetOutOfRange):
		start, serr := r.log.start(ctx, r.topic)
		if serr != nil {
			return serr
		}
		if r.next < start {
			r.err = fmt.Errorf("%w: %s offset %d is below the log start %d", wal.ErrTruncated, r.pchannel, r.next, start)
			return r.err
		}
		// Past the end: the offset has not been written yet. The consumer
		// retries it; wait a little so that does not spin.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.closed:
			return wal.ErrClosed
		case <-time.After(pastEndBackoff):
		}
		return nil
	case kerr.IsRetriable(err):
		return nil
	}
	return fmt.Errorf("wal/kafka: fetch %s at %d: %w", r.pchannel, r.next, err)
}

// shutdown closes the consumer client; blocked Next calls return ErrClosed.
func (r *reader) shutdown() {
	r.closeOnce.Do(func() {
		close(r.closed)
		r.cl.Close()
	})
}

// Close implements wal.Reader; it is idempotent.
func (r *reader) Close() error {
	r.shutdown()
	r.log.mu.Lock()
	delete(r.log.readers, r)
	r.log.mu.Unlock()
	return nil
}
