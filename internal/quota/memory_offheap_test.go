//go:build linux

package quota

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/offheap"
)

// TestMemoryCountsOffHeap: memory written outside the Go heap (an offheap
// region, as growing and loaded segments keep their rows) counts as the
// process's memory.
func TestMemoryCountsOffHeap(t *testing.T) {
	w := NewWatcher(MemProtection{Enabled: true, LowWaterLevel: 0.85, HighWaterLevel: 0.95, CheckInterval: time.Minute, MemoryLimit: 1 << 40})
	t0 := time.Now()
	first := w.read(t0)
	r, err := offheap.Reserve(128 << 20)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	b, err := offheap.Slice[byte](r)
	require.NoError(t, err)
	b = b[:cap(b)]
	for i := range b {
		b[i] = 1
	}
	later := w.read(t0.Add(time.Minute))
	require.Greater(t, later, first+96<<20, "the 128 MiB written outside the heap show")
}
