package ivf

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

// TestBuildCancelled: a build of every kind whose context ends mid-way
// returns context.Canceled promptly, and one whose context has already
// ended returns it at once.
func TestBuildCancelled(t *testing.T) {
	const dim = 32
	data := clustered(9, 1, 60000, dim, 64, 8)
	for _, kind := range []Kind{Flat, SQ8, PQ} {
		t.Run(kind.String(), func(t *testing.T) {
			cfg := Defaults(kind)
			cfg.Nlist = 1024 // long k-means: seeding alone takes seconds
			cfg.M = dim / 4
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := Build(ctx, data, dim, index.L2, cfg)
				done <- err
			}()
			time.Sleep(50 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(20 * time.Second):
				t.Fatal("a cancelled build did not return")
			}

			_, err := Build(ctx, data, dim, index.L2, cfg)
			require.ErrorIs(t, err, context.Canceled, "an ended context builds nothing")
		})
	}
}
