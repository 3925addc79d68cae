package wal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Clock hands out hybrid timestamps (physical ms << 18 | logical).
type Clock interface {
	// Allocate reserves n consecutive timestamps and returns the first.
	// Successive calls return strictly increasing values.
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// DefaultTickInterval is the default WriterConfig.TickInterval.
const DefaultTickInterval = 200 * time.Millisecond

// Errors returned by Writer.
var (
	// ErrEmptyBatch reports an Append with no messages.
	ErrEmptyBatch = errors.New("wal: empty batch")
	// ErrInvalidWriterConfig reports a WriterConfig that fails Validate.
	ErrInvalidWriterConfig = errors.New("wal: invalid writer config")
)

// WriterConfig configures a Writer.
type WriterConfig struct {
	// TickInterval is how long a watched pchannel may go without an
	// append before Run appends a time tick to it.
	TickInterval time.Duration `json:"tickInterval"`
}

// WriterDefaults returns the default writer configuration.
func WriterDefaults() WriterConfig { return WriterConfig{}.withDefaults() }

// withDefaults returns c with zero fields set to their defaults.
func (c WriterConfig) withDefaults() WriterConfig {
	if c.TickInterval == 0 {
		c.TickInterval = DefaultTickInterval
	}
	return c
}

// Validate reports whether c is usable.
func (c WriterConfig) Validate() error {
	if c.TickInterval <= 0 {
		return fmt.Errorf("%w: TickInterval %v must be positive", ErrInvalidWriterConfig, c.TickInterval)
	}
	return nil
}

// Writer is the message layer's write path: it stamps messages with hybrid
// timestamps and appends them to the Log so that, on every pchannel,
// timestamps never decrease in offset order. It also emits time ticks on
// idle pchannels. It is safe for concurrent use.
type Writer struct {
	log    Log
	clock  Clock
	cfg    WriterConfig
	logger *slog.Logger

	mu    sync.Mutex
	chans map[string]*pchanState
}

// pchanState is the Writer's per-pchannel state.
type pchanState struct {
	// mu is held while a timestamp is allocated and the records are
	// enqueued, which orders timestamps like offsets.
	mu sync.Mutex
	// lastAppend is the time of the last append (guarded by mu).
	lastAppend time.Time
	// watched is guarded by Writer.mu.
	watched bool
}

// NewWriter returns a Writer appending to log with timestamps from clock.
// Zero fields of cfg take their defaults; a cfg that still fails Validate
// falls back to the defaults (with a warning).
func NewWriter(log Log, clock Clock, cfg WriterConfig, logger *slog.Logger) *Writer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		logger.Warn("wal: using default writer config", slog.Any("err", err))
		cfg = WriterDefaults()
	}
	return &Writer{log: log, clock: clock, cfg: cfg, logger: logger, chans: make(map[string]*pchanState)}
}

func (w *Writer) state(pchannel string) *pchanState {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.chans[pchannel]
	if !ok {
		s = &pchanState{}
		w.chans[pchannel] = s
	}
	return s
}

// Append assigns one timestamp to every message of batch (pchannel ->
// messages), setting each Message.TimeTick in place, and appends each
// pchannel's messages as one contiguous call. While it allocates the
// timestamp and enqueues the records it holds the locks of all the
// pchannels involved (taken in sorted name order), so on every pchannel
// timestamps are non-decreasing in offset order. It then waits until every
// append is durable and returns the timestamp, or the first error. On error
// the batch may be durable on some of its pchannels, and when ctx ends while
// waiting the messages may still become durable: callers retry or give up,
// never assume nothing was written.
func (w *Writer) Append(ctx context.Context, batch map[string][]Message) (uint64, error) {
	names := make([]string, 0, len(batch))
	for name, msgs := range batch {
		if len(msgs) > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return 0, ErrEmptyBatch
	}
	slices.Sort(names)
	return w.AppendBuild(ctx, names, func(uint64) (map[string][]Message, error) { return batch, nil })
}

// AppendBuild is Append for messages that must be built under the pchannel
// locks: it locks pchannels (in sorted order), allocates the timestamp,
// calls build with it, and appends what build returns, whose keys must be
// among pchannels. Data coordinators use it to assign segments and to seal
// them in the same order as the appends.
func (w *Writer) AppendBuild(ctx context.Context, pchannels []string,
	build func(ts uint64) (map[string][]Message, error),
) (uint64, error) {
	names := slices.Clone(pchannels)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return 0, ErrEmptyBatch
	}
	return w.appendLocked(ctx, names, func(ts uint64) ([][][]byte, error) {
		batch, err := build(ts)
		if err != nil {
			return nil, err
		}
		// Each pchannel's messages become one record, durable or lost together.
		recs := make([][][]byte, len(names))
		n := 0
		for i, name := range names {
			msgs := batch[name]
			if len(msgs) == 0 {
				continue
			}
			for j := range msgs {
				msgs[j].TimeTick = ts
			}
			recs[i] = [][]byte{EncodeRecord(msgs)}
			n += len(msgs)
		}
		total := 0
		for _, msgs := range batch {
			total += len(msgs)
		}
		if total != n {
			return nil, fmt.Errorf("wal: build returned messages for pchannels it did not lock")
		}
		return recs, nil
	})
}

// appendLocked holds the locks of names (sorted), allocates a timestamp,
// gets the encoded records per pchannel from produce, enqueues them, and
// waits until every non-empty append is durable.
func (w *Writer) appendLocked(ctx context.Context, names []string, produce func(ts uint64) ([][][]byte, error)) (uint64, error) {
	states := make([]*pchanState, len(names))
	for i, name := range names {
		states[i] = w.state(name)
		states[i].mu.Lock()
	}
	unlock := func() {
		for i := len(states) - 1; i >= 0; i-- {
			states[i].mu.Unlock()
		}
	}
	ts, err := w.clock.Allocate(ctx, 1)
	if err != nil {
		unlock()
		return 0, fmt.Errorf("wal: allocate timestamp: %w", err)
	}
	recs, err := produce(ts)
	if err != nil {
		unlock()
		return 0, err
	}
	now := time.Now()
	results := make([]<-chan AppendResult, len(names))
	for i, name := range names {
		if len(recs[i]) == 0 {
			continue
		}
		results[i] = w.log.AppendAsync(name, recs[i])
		states[i].lastAppend = now
	}
	unlock()
	var first error
	for i, res := range results {
		if res == nil {
			continue
		}
		select {
		case r := <-res:
			if r.Err != nil && first == nil {
				first = fmt.Errorf("wal: append to %s: %w", names[i], r.Err)
			}
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if first != nil {
		return 0, first
	}
	return ts, nil
}

// End returns the offset the pchannel's next record will get.
func (w *Writer) End(ctx context.Context, pchannel string) (int64, error) {
	return w.log.End(ctx, pchannel)
}

// Tick appends a TimeTick message (VChannel "") on pchannel and returns its
// timestamp once durable.
func (w *Writer) Tick(ctx context.Context, pchannel string) (uint64, error) {
	return w.Append(ctx, map[string][]Message{pchannel: {{Type: TypeTimeTick}}})
}

// Watch makes Run tick pchannel when it is idle. It is idempotent.
func (w *Writer) Watch(pchannel string) {
	s := w.state(pchannel)
	w.mu.Lock()
	s.watched = true
	w.mu.Unlock()
}

// Unwatch stops periodic ticks on pchannel. It is idempotent.
func (w *Writer) Unwatch(pchannel string) {
	w.mu.Lock()
	if s, ok := w.chans[pchannel]; ok {
		s.watched = false
	}
	w.mu.Unlock()
}

// Run ticks every watched pchannel that has had no append for
// TickInterval, until ctx ends; it then returns nil. Idle pchannels found
// in one pass share one timestamp. It returns ErrClosed (wrapped) if the Log
// is closed. A failed tick latches nothing: it is retried on the next pass
// (the Log decides when its pchannel can write again); the first failure
// and the recovery are logged, not every failed pass.
func (w *Writer) Run(ctx context.Context) error {
	period := max(w.cfg.TickInterval/2, time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		idle := w.idle(time.Now())
		if len(idle) == 0 {
			continue
		}
		batch := make(map[string][]Message, len(idle))
		for _, name := range idle {
			batch[name] = []Message{{Type: TypeTimeTick}}
		}
		_, err := w.Append(ctx, batch)
		switch {
		case err == nil:
			if failing {
				w.logger.Info("wal: time ticks resumed", slog.Any("pchannels", idle))
			}
			failing = false
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrClosed):
			return err
		case !failing:
			failing = true
			w.logger.Warn("wal: time tick failed; retrying every pass", slog.Any("pchannels", idle), slog.Any("err", err))
		}
	}
}

// idle returns the watched pchannels without an append since now-TickInterval.
func (w *Writer) idle(now time.Time) []string {
	w.mu.Lock()
	watched := make(map[string]*pchanState)
	for name, s := range w.chans {
		if s.watched {
			watched[name] = s
		}
	}
	w.mu.Unlock()
	var idle []string
	for name, s := range watched {
		if !s.mu.TryLock() {
			continue // an append is in progress
		}
		if now.Sub(s.lastAppend) >= w.cfg.TickInterval {
			idle = append(idle, name)
		}
		s.mu.Unlock()
	}
	return idle
}
