package sparse

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index/indextest"
)

// TestMarshalGolden pins the file format: fixed small indexes of both kinds
// marshal to the bytes of their testdata golden files, which still load.
func TestMarshalGolden(t *testing.T) {
	rows := synth(3, 40, 60, 4)
	for name, p := range map[string]BuildParams{
		"inverted.golden": {Kind: Inverted},
		"wand.golden":     {Kind: WAND, DropRatioBuild: 0.2},
	} {
		t.Run(name, func(t *testing.T) {
			x, err := Build(context.Background(), rows, p)
			require.NoError(t, err)
			back := indextest.MarshalGolden(t, name, x, indextest.FromReader(Unmarshal))
			require.Equal(t, len(rows), back.Len())
		})
	}
}
