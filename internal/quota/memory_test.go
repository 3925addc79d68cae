package quota

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

// memQuotas returns quotas whose memory limit puts the process's current
// memory at about level of it (read once: the check interval is long).
func memQuotas(t *testing.T, level float64, dml bool) *Quotas {
	t.Helper()
	used := NewWatcher(MemProtection{Enabled: true, CheckInterval: time.Hour, MemoryLimit: 1}).read(time.Now())
	require.Positive(t, used)
	cfg := Defaults()
	cfg.LimitWriting.MemProtection.MemoryLimit = int64(float64(used) / level)
	cfg.LimitWriting.MemProtection.CheckInterval = time.Hour
	if dml {
		cfg.DML.Enabled = true
		cfg.DML.InsertRate.Max = 10 // MB/s
	}
	q, _ := newQuotas(t, cfg, nil)
	return q
}

// TestMemoryProtection: over highWaterLevel writes (insert, upsert and
// delete, as Milvus's memory state denies all DML) are refused with code 9
// and Milvus's reason; reads go on.
func TestMemoryProtection(t *testing.T) {
	q := memQuotas(t, 4, false) // 400% of the limit
	for _, k := range []Kind{Insert, Delete} {
		err := q.Check(Request{Kind: k, Collection: 1, N: 10})
		requireCode(t, err, errcode.QuotaExceeded,
			"quota exceeded[reason=memory quota exceeded, please allocate more resources: force deny writing for memory quota exceeded]")
		require.False(t, errcode.Status(err).GetRetriable())
	}
	require.NoError(t, q.Check(Request{Kind: Search, Collection: 1, N: 10}))
	require.NoError(t, q.Check(Request{Kind: Query, Collection: 1, N: 1}))

	// Far under lowWaterLevel: writes flow.
	q = memQuotas(t, 0.2, false)
	require.NoError(t, q.Check(Request{Kind: Insert, Collection: 1, N: 1 << 30}))

	// Disabled protection admits writes at any level.
	cfg := Defaults()
	cfg.LimitWriting.MemProtection.Enabled = false
	cfg.LimitWriting.MemProtection.MemoryLimit = 1
	q, _ = newQuotas(t, cfg, nil)
	require.NoError(t, q.Check(Request{Kind: Insert, Collection: 1, N: 1}))
}

// TestMemoryFactor: between the water levels a finite DML rate is scaled
// down linearly, as Milvus's quota center does; unlimited rates stay so.
func TestMemoryFactor(t *testing.T) {
	q := memQuotas(t, 0.9, true) // halfway between 0.85 and 0.95
	now := q.now()
	level := q.mem.Level(now)
	require.InDelta(t, 0.9, level, 0.01)
	factor := q.mem.Factor(now)
	require.InDelta(t, (0.95-level)/0.1, factor, 1e-9)
	require.NoError(t, q.Check(Request{Kind: Insert, Collection: 1, N: 20 << 20}))
	err := q.Check(Request{Kind: Insert, Collection: 1, N: 1})
	require.Equal(t, errcode.RateLimit, errcode.CodeOf(err))
	require.InDelta(t, 10*(1<<20)*factor, q.cluster[Insert].Rate(), 1)

	w := NewWatcher(MemProtection{Enabled: true, LowWaterLevel: 0.5, HighWaterLevel: 0.7, CheckInterval: time.Hour, MemoryLimit: 1 << 62})
	require.Equal(t, 1.0, w.Factor(now))
	require.Equal(t, int64(1<<62), w.Limit())
}

// TestMemoryReadInterval: the memory is read again once the interval has
// passed, so a process that grows past the limit is caught.
func TestMemoryReadInterval(t *testing.T) {
	w := NewWatcher(MemProtection{Enabled: true, LowWaterLevel: 0.85, HighWaterLevel: 0.95, CheckInterval: time.Minute, MemoryLimit: 1 << 40})
	t0 := time.Now()
	first := w.read(t0)
	ballast := make([]byte, 64<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	require.Equal(t, first, w.read(t0.Add(time.Second)), "within the interval: the last reading")
	later := w.read(t0.Add(time.Minute))
	require.Greater(t, later, first+32<<20, "the 64 MiB allocated since show")
	require.Equal(t, byte(1), ballast[len(ballast)-1])
	require.Positive(t, SystemMemory())
}
