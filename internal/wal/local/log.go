package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/wal"
)

// Errors returned by AppendAsync and Read besides the wal sentinels.
var (
	// ErrEmptyRecord reports an attempt to append a zero-length record.
	ErrEmptyRecord = errors.New("wal: empty record")
	// ErrRecordTooLarge reports a record larger than Config.MaxRecordBytes.
	ErrRecordTooLarge = errors.New("wal: record too large")
	// ErrInvalidPChannel reports a pchannel name that is not a plain file name.
	ErrInvalidPChannel = errors.New("wal: invalid pchannel name")
	// ErrInvalidOffset reports a negative read offset.
	ErrInvalidOffset = errors.New("wal: invalid offset")
	// ErrDamaged reports an append to a pchannel whose last segment holds
	// damage that is not a torn tail (or that could not be loaded): appending
	// after it would hide the damaged records behind new ones, so appends are
	// refused until an operator cuts the WAL (Cut). It wraps the cause, a
	// *CorruptionErr naming the file and byte offset.
	ErrDamaged = errors.New("wal: pchannel damaged, appends refused")
)

// Log is the embedded, file-based wal.Log. It is safe for concurrent use.
type Log struct {
	cfg    Config
	logger *slog.Logger

	mu       sync.Mutex
	channels map[string]*channel
	closed   bool

	closeOnce sync.Once
	closeErr  error
}

var _ wal.Log = (*Log)(nil)

// Open opens (creating if needed) the log in cfg.Dir, recovering every
// pchannel found there and repairing torn tails. Damage that is not a torn
// tail does not fail Open: the damaged pchannel keeps its files untouched,
// serves the records before the damage, refuses appends (ErrDamaged) and is
// reported by Problems; every other pchannel works normally. Open fails
// only when cfg is invalid or cfg.Dir itself cannot be created or listed.
func Open(cfg Config, logger *slog.Logger) (*Log, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("wal: create dir: %w", err)
	}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("wal: read dir: %w", err)
	}
	l := &Log{cfg: cfg, logger: logger, channels: make(map[string]*channel)}
	for _, e := range entries {
		if !e.IsDir() || validPChannel(e.Name()) != nil {
			continue
		}
		c := newChannel(e.Name(), cfg.Dir, &l.cfg, logger)
		if err := c.load(); err != nil {
			if c.f != nil {
				_ = c.f.Close()
				c.f = nil
			}
			c.setDamaged(err)
		}
		l.channels[c.name] = c
	}
	for _, c := range l.channels {
		go c.run()
	}
	return l, nil
}

// Problems implements health.Source: one Problem per damaged pchannel (its
// last segment holds damage that is not a torn tail: WritesUnavailable), per
// pchannel whose appends are failing (a full disk, a failed fsync:
// WritesUnavailable until a write succeeds again) and per pchannel where a
// reader (or Config.VerifySealed) found a damaged or missing sealed
// segment. The Subject is "pchannel <name>"; Reason names the file and
// byte offset.
func (l *Log) Problems() []health.Problem {
	l.mu.Lock()
	chans := make([]*channel, 0, len(l.channels))
	for _, c := range l.channels {
		chans = append(chans, c)
	}
	l.mu.Unlock()
	sort.Slice(chans, func(i, j int) bool { return chans[i].name < chans[j].name })
	var out []health.Problem
	for _, c := range chans {
		out = append(out, c.problems()...)
	}
	return out
}

// validPChannel reports whether name can be used as a directory name.
func validPChannel(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%w: %q", ErrInvalidPChannel, name)
	}
	return nil
}

// channel returns the named pchannel, creating it (without touching the
// disk) when create is set.
func (l *Log) channel(name string, create bool) (*channel, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, wal.ErrClosed
	}
	c, ok := l.channels[name]
	if ok || !create {
		return c, nil
	}
	if err := validPChannel(name); err != nil {
		return nil, err
	}
	c = newChannel(name, l.cfg.Dir, &l.cfg, l.logger)
	l.channels[name] = c
	go c.run()
	return c, nil
}

// AppendAsync implements wal.Log. Records must be non-empty and must not be
// modified until the result arrives.
func (l *Log) AppendAsync(pchannel string, records [][]byte) <-chan wal.AppendResult {
	res := make(chan wal.AppendResult, 1)
	req := &appendReq{records: records, res: res}
	for _, r := range records {
		switch {
		case len(r) == 0:
			res <- wal.AppendResult{Err: ErrEmptyRecord}
			return res
		case int64(len(r)) > l.cfg.MaxRecordBytes:
			res <- wal.AppendResult{Err: fmt.Errorf("%w: %d bytes", ErrRecordTooLarge, len(r))}
			return res
		}
		req.bytes += headerSize + int64(len(r))
	}
	c, err := l.channel(pchannel, true)
	if err != nil {
		res <- wal.AppendResult{Err: err}
		return res
	}
	c.enqueue(req)
	return res
}

// Read implements wal.Log. The Reader is not safe for concurrent use.
func (l *Log) Read(_ context.Context, pchannel string, from int64) (wal.Reader, error) {
	if from < 0 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidOffset, from)
	}
	c, err := l.channel(pchannel, true)
	if err != nil {
		return nil, err
	}
	return &reader{c: c, off: from, bufSize: l.cfg.ReadBufferSize, maxBytes: l.cfg.MaxRecordBytes}, nil
}

// Truncate implements wal.Log: it deletes every sealed segment whose
// records all have offsets < before. The active segment is never deleted.
func (l *Log) Truncate(_ context.Context, pchannel string, before int64) error {
	c, err := l.channel(pchannel, false)
	if err != nil || c == nil {
		return err
	}
	return c.truncate(before)
}

// End implements wal.Log.
func (l *Log) End(_ context.Context, pchannel string) (int64, error) {
	c, err := l.channel(pchannel, false)
	if err != nil || c == nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.end, nil
}

// Start returns the lowest offset of pchannel still kept (records below it
// were truncated); 0 for an unknown pchannel.
func (l *Log) Start(pchannel string) (int64, error) {
	c, err := l.channel(pchannel, false)
	if err != nil || c == nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.start, nil
}

// PChannels returns the names of the known pchannels, sorted.
func (l *Log) PChannels() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.channels))
	for name := range l.channels {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Close implements wal.Log. Appends queued before Close are written and
// completed; later ones fail with wal.ErrClosed. Blocked readers return
// wal.ErrClosed. Close is idempotent.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		chans := make([]*channel, 0, len(l.channels))
		for _, c := range l.channels {
			chans = append(chans, c)
		}
		l.mu.Unlock()
		for _, c := range chans {
			c.mu.Lock()
			c.closed = true
			c.mu.Unlock()
			close(c.stop)
		}
		var errs []error
		for _, c := range chans {
			<-c.done
			errs = append(errs, c.closeErr)
		}
		l.closeErr = errors.Join(errs...)
	})
	return l.closeErr
}

// Dir returns the directory of pchannel's segment files.
func (l *Log) Dir(pchannel string) string { return filepath.Join(l.cfg.Dir, pchannel) }
