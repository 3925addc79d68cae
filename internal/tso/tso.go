package tso

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/metastore"
)

// LogicalBits is the width of the logical counter in a hybrid timestamp.
const LogicalBits = 18

// MaxLogical is the number of logical values per millisecond; Allocate
// hands out at most this many timestamps in one call.
const MaxLogical = 1 << LogicalBits

const logicalMask = MaxLogical - 1

// MaxPhysical is the largest physical part (Unix ms, about the year
// 1,117,000) whose timestamps fit an int64: the Allocator never hands out a
// timestamp or ID above math.MaxInt64.
const MaxPhysical = 1<<(63-LogicalBits) - 1

// Well-known keys for the two allocators of a deployment.
const (
	// TimestampKey is the meta-store key of the timestamp allocator's window.
	TimestampKey = "timestamp"
	// IDKey is the meta-store key of the ID allocator's window, as in Milvus.
	IDKey = "idTimestamp"
)

// Sentinel errors.
var (
	// ErrInvalidCount is returned when Allocate is asked for 0 or more than
	// MaxLogical timestamps.
	ErrInvalidCount = errors.New("tso: invalid count")
	// ErrFenced is returned when another allocator saved a window over the
	// same key; this one must stop issuing timestamps.
	ErrFenced = errors.New("tso: fenced by another allocator")
	// ErrCorrupt is returned when the stored window cannot be decoded or is
	// not a window this allocator could have saved (negative, beyond
	// MaxPhysical, or more than Config.MaxAhead ahead of the clock).
	ErrCorrupt = errors.New("tso: corrupt stored window")
	// ErrExhausted is returned when a timestamp would have a physical part
	// above MaxPhysical (its ID would not fit an int64).
	ErrExhausted = errors.New("tso: timestamp space exhausted")
)

// ComposeTS builds a hybrid timestamp from a physical time in Unix
// milliseconds and a logical counter (its low LogicalBits are used).
func ComposeTS(physicalMs int64, logical uint64) uint64 {
	return uint64(physicalMs)<<LogicalBits | logical&logicalMask
}

// ParseTS splits a hybrid timestamp into its physical time and logical counter.
func ParseTS(ts uint64) (time.Time, uint64) {
	return time.UnixMilli(int64(ts >> LogicalBits)), ts & logicalMask
}

// Store is what the Allocator needs from the meta store; metastore.KV
// satisfies it.
type Store interface {
	// Get returns the value at key or an error wrapping metastore.ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Txn applies ops atomically and durably.
	Txn(ctx context.Context, ops ...metastore.Op) error
}

// Config configures an Allocator.
type Config struct {
	// Key is the meta-store key holding the reserved window (required),
	// e.g. TimestampKey or IDKey.
	Key string
	// SaveInterval is how far ahead of the clock each saved window reaches.
	// Default 3s.
	SaveInterval time.Duration
	// Now is the wall clock. Default time.Now; tests inject a fake.
	Now func() time.Time
	// MaxAhead is how far ahead of the clock a saved window may be at New;
	// a window further ahead is refused with ErrCorrupt (a damaged store,
	// or a clock set back by more than this). Default 24h; at least
	// SaveInterval.
	MaxAhead time.Duration
}

// DefaultSaveInterval is the default Config.SaveInterval.
const DefaultSaveInterval = 3 * time.Second

// DefaultMaxAhead is the default Config.MaxAhead.
const DefaultMaxAhead = 24 * time.Hour

// Defaults fills unset fields with their defaults.
func (c *Config) Defaults() {
	if c.SaveInterval == 0 {
		c.SaveInterval = DefaultSaveInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxAhead == 0 {
		c.MaxAhead = DefaultMaxAhead
	}
}

// Validate reports a Config that cannot work.
func (c *Config) Validate() error {
	if c.Key == "" {
		return errors.New("tso: config: Key is required")
	}
	if c.SaveInterval < time.Millisecond {
		return fmt.Errorf("tso: config: SaveInterval %v is below 1ms", c.SaveInterval)
	}
	if c.Now == nil {
		return errors.New("tso: config: Now is nil")
	}
	if c.MaxAhead < c.SaveInterval {
		return fmt.Errorf("tso: config: MaxAhead %v is below SaveInterval %v", c.MaxAhead, c.SaveInterval)
	}
	return nil
}

// Allocator hands out strictly increasing hybrid timestamps. It is safe for
// concurrent use; only window saves do I/O.
type Allocator struct {
	store    Store
	key      string
	interval int64 // SaveInterval in ms
	now      func() time.Time
	logger   *slog.Logger

	mu       sync.Mutex
	physical int64  // physical part of the last issued timestamp
	logical  uint64 // next free logical value at physical (may be MaxLogical)
	bound    int64  // saved upper bound for physical
	stored   []byte // value last read or written at key; nil if absent
}

// New reads the saved window at cfg.Key and returns an Allocator that starts
// strictly above it.
func New(ctx context.Context, store Store, cfg Config, logger *slog.Logger) (*Allocator, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Allocator{
		store:    store,
		key:      cfg.Key,
		interval: max(cfg.SaveInterval.Milliseconds(), 1),
		now:      cfg.Now,
		logger:   logger,
	}
	raw, err := store.Get(ctx, cfg.Key)
	switch {
	case errors.Is(err, metastore.ErrNotFound):
		// First start: nothing issued before.
	case err != nil:
		return nil, fmt.Errorf("tso: load %q: %w", cfg.Key, err)
	default:
		if len(raw) != 8 {
			return nil, fmt.Errorf("%w: %q holds %d bytes", ErrCorrupt, cfg.Key, len(raw))
		}
		a.stored = raw
		a.bound = int64(binary.BigEndian.Uint64(raw))
		if err := checkBound(cfg, a.bound); err != nil {
			return nil, err
		}
	}
	// Everything at physical ≤ bound may have been issued: start above it.
	// The first Allocate saves a new window before issuing.
	a.physical, a.logical = a.bound, MaxLogical
	logger.Info("tso allocator started", slog.String("key", cfg.Key), slog.Int64("saved_bound_ms", a.bound))
	return a, nil
}

// Now returns one fresh timestamp; it is Allocate(ctx, 1).
func (a *Allocator) Now(ctx context.Context) (uint64, error) {
	return a.Allocate(ctx, 1)
}

// Allocate reserves n consecutive timestamps and returns the first. Every
// timestamp returned is strictly greater than all returned before, by this
// allocator or by any earlier one over the same key. n must be in
// [1, MaxLogical].
func (a *Allocator) Allocate(ctx context.Context, n uint32) (uint64, error) {
	if n == 0 || n > MaxLogical {
		return 0, fmt.Errorf("%w: %d not in [1, %d]", ErrInvalidCount, n, MaxLogical)
	}
	now := a.now().UnixMilli()

	a.mu.Lock()
	defer a.mu.Unlock()

	if now > MaxPhysical || now < 0 {
		return 0, fmt.Errorf("%w: key %q: the clock reads %d ms", ErrExhausted, a.key, now)
	}
	physical, logical := a.physical, a.logical
	if now > physical {
		physical, logical = now, 0 // the clock moved on
	}
	// If the clock stands still or went backwards, keep counting on the last
	// physical; when its logical space runs out, step physical ahead.
	if logical+uint64(n) > MaxLogical {
		physical, logical = physical+1, 0
	}
	if physical > MaxPhysical {
		return 0, fmt.Errorf("%w: key %q: physical time %d ms is past %d", ErrExhausted, a.key, physical, MaxPhysical)
	}
	if physical > a.bound {
		if err := a.save(ctx, min(max(physical, now)+a.interval, MaxPhysical)); err != nil {
			return 0, err
		}
	}
	a.physical, a.logical = physical, logical+uint64(n)
	return ComposeTS(physical, logical), nil
}

// checkBound refuses a saved window that this allocator could not have
// written: a bit flipped in the stored value, or a store from another
// deployment, must not become the base of every later timestamp and ID.
func checkBound(cfg Config, bound int64) error {
	switch {
	case bound < 0:
		return fmt.Errorf("%w: %q holds negative bound %d", ErrCorrupt, cfg.Key, bound)
	case bound > MaxPhysical:
		return fmt.Errorf("%w: %q holds bound %d ms, past the largest timestamp that fits an int64 (%d ms)", ErrCorrupt, cfg.Key, bound, MaxPhysical)
	}
	now := cfg.Now()
	if ahead := time.Duration(bound-now.UnixMilli()) * time.Millisecond; ahead > cfg.MaxAhead {
		return fmt.Errorf("%w: %q holds bound %d ms (%s), %v ahead of the clock (%s), more than the %v allowed: "+
			"the meta store is damaged, or the clock was set back by more than that",
			ErrCorrupt, cfg.Key, bound, time.UnixMilli(bound).UTC().Format(time.RFC3339), ahead.Round(time.Second),
			now.UTC().Format(time.RFC3339), cfg.MaxAhead)
	}
	return nil
}

// AllocateIDs reserves n consecutive IDs and returns the first; IDs are
// TSO-shaped (see the package documentation).
func (a *Allocator) AllocateIDs(ctx context.Context, n uint32) (int64, error) {
	ts, err := a.Allocate(ctx, n)
	if err != nil {
		return 0, err
	}
	if ts > math.MaxInt64 {
		return 0, fmt.Errorf("tso: id %d overflows int64", ts)
	}
	return int64(ts), nil
}

// save durably raises the window to bound. Called with a.mu held.
func (a *Allocator) save(ctx context.Context, bound int64) error {
	val := binary.BigEndian.AppendUint64(nil, uint64(bound))
	guard := metastore.IfAbsent(a.key)
	if a.stored != nil {
		guard = metastore.IfEquals(a.key, a.stored)
	}
	err := a.store.Txn(ctx, guard, metastore.Put(a.key, val))
	if errors.Is(err, metastore.ErrConflict) {
		return fmt.Errorf("%w: key %q: %w", ErrFenced, a.key, err)
	}
	if err != nil {
		return fmt.Errorf("tso: save window %q: %w", a.key, err)
	}
	a.stored, a.bound = val, bound
	return nil
}
