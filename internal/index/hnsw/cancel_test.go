package hnsw

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// TestBuildCancelled: a build whose context ends returns context.Canceled
// long before it would have finished, with one worker and with several,
// and a build whose context has already ended does no work at all.
func TestBuildCancelled(t *testing.T) {
	const dim = 32
	data := indextest.Gaussian(newRng(), 20000, dim)
	cfg := Config{M: 16, EfConstruction: 400, Seed: 1}

	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			cfg := cfg
			cfg.Workers = workers
			ctx, cancel := context.WithCancel(context.Background())
			var stoppedAfter time.Duration
			done := make(chan error, 1)
			go func() {
				_, err := Build(ctx, data, dim, index.L2, cfg)
				done <- err
			}()
			time.Sleep(50 * time.Millisecond) // well into the build
			cancel()
			cancelled := time.Now()
			select {
			case err := <-done:
				stoppedAfter = time.Since(cancelled)
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(20 * time.Second):
				t.Fatal("a cancelled build did not return")
			}
			t.Logf("returned %v after the cancel", stoppedAfter)
		})
	}

	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		x, err := New(dim, index.L2, cfg)
		require.NoError(t, err)
		require.ErrorIs(t, x.Add(ctx, data), context.Canceled)
		require.Zero(t, x.Len(), "nothing was added")
	})
}
