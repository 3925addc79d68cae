package binivf

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// TestMarshalGolden pins the file format: a fixed small index marshals to
// the bytes of testdata/hamming.golden, and that file still loads.
func TestMarshalGolden(t *testing.T) {
	data := clustered(150, 64, 4, 5)
	x, err := Build(context.Background(), data, 64, index.Hamming, Config{Nlist: 4, Seed: 2})
	require.NoError(t, err)
	back := indextest.MarshalGolden(t, "hamming.golden", x, indextest.FromReader(Unmarshal))
	require.Equal(t, 150, back.Len())
}
