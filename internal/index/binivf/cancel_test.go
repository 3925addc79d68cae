package binivf

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

// TestBuildCancelled: a build whose context has ended returns
// context.Canceled instead of an index.
func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x, err := Build(ctx, clustered(40, 32, 3, 6), 32, index.Hamming, Config{Nlist: 3, Seed: 1})
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, x)
}
