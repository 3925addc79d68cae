package quota

import (
	"runtime/metrics"
	"sync"
	"time"
)

// Watcher is memory-based write protection: it compares the process's
// memory with the memory limit and tells the limiters how far to let writes
// through (Factor). It reads the memory at most once per CheckInterval, on
// demand, so it needs no goroutine. It is safe for concurrent use.
type Watcher struct {
	cfg   MemProtection
	limit int64 // bytes; 0: unknown, the protection is off

	mu      sync.Mutex
	next    time.Time
	used    uint64
	samples []metrics.Sample
}

// NewWatcher returns a watcher for cfg: its limit is cfg.MemoryLimit, else
// the cgroup's memory limit, else the machine's memory.
func NewWatcher(cfg MemProtection) *Watcher {
	limit := cfg.MemoryLimit
	if limit <= 0 {
		limit = SystemMemory()
	}
	return &Watcher{cfg: cfg, limit: limit, samples: []metrics.Sample{
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
	}}
}

// Limit returns the memory limit in bytes (0: unknown).
func (w *Watcher) Limit() int64 { return w.limit }

// read returns the process's memory at now, re-read once the interval has
// passed: what the Go runtime has mapped from the OS and not returned, or
// the resident anonymous memory when that is more (segment rows kept
// outside the Go heap, package offheap, count as much as heap rows).
func (w *Watcher) read(now time.Time) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !now.Before(w.next) {
		metrics.Read(w.samples)
		total, released := w.samples[0].Value.Uint64(), w.samples[1].Value.Uint64()
		w.used = total - min(released, total)
		if anon, ok := anonResident(); ok {
			w.used = max(w.used, anon)
		}
		w.next = now.Add(w.cfg.CheckInterval)
	}
	return w.used
}

// Level returns the memory in use at now as a share of the limit (0 when
// the protection is off or the limit unknown).
func (w *Watcher) Level(now time.Time) float64 {
	if !w.cfg.Enabled || w.limit <= 0 {
		return 0
	}
	return float64(w.read(now)) / float64(w.limit)
}

// Factor returns the share of the configured DML rates writes may use at
// now, as Milvus's quota center computes it: 1 up to lowWaterLevel, 0 from
// highWaterLevel on (writes are refused), and in between falling linearly.
func (w *Watcher) Factor(now time.Time) float64 {
	level := w.Level(now)
	low, high := w.cfg.LowWaterLevel, w.cfg.HighWaterLevel
	switch {
	case level <= low:
		return 1
	case level >= high:
		return 0
	}
	return (high - level) / (high - low)
}
