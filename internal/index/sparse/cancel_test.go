package sparse

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBuildCancelled: a build whose context has ended returns
// context.Canceled instead of an index.
func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, kind := range []Kind{Inverted, WAND} {
		x, err := Build(ctx, synth(6, 10, 50, 5), BuildParams{Kind: kind})
		require.ErrorIs(t, err, context.Canceled)
		require.Nil(t, x)
	}
}
