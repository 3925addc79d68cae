package ivf

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// goldenCases are the small indexes whose files are pinned, one per kind.
var goldenCases = []struct {
	kind   Kind
	metric index.Metric
	file   string
}{
	{Flat, index.L2, "flat_l2.golden"},
	{SQ8, index.IP, "sq8_ip.golden"},
	{PQ, index.L2, "pq_l2.golden"},
}

// smallIndex builds the fixed 120-row, 8-dimensional index of a golden case.
func smallIndex(t testing.TB, kind Kind, metric index.Metric) *Index {
	t.Helper()
	cfg := Defaults(kind)
	cfg.Nlist, cfg.Iterations, cfg.Seed = 4, 5, 3
	if kind == PQ {
		cfg.M, cfg.Nbits = 2, 4
	}
	x, err := Build(context.Background(), clustered(5, 1, 120, 8, 4, 2), 8, metric, cfg)
	require.NoError(t, err)
	return x
}

// TestMarshalGolden pins the file format of each kind: a fixed small index
// marshals to the bytes of its golden file, that file still loads, and the
// loaded index marshals to the same bytes. No case uses COSINE: the
// normalised vectors round differently with and without the assembly
// kernels (-tags noasm), and the files must not depend on the build.
func TestMarshalGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.file, func(t *testing.T) {
			back := indextest.MarshalGolden(t, tc.file, smallIndex(t, tc.kind, tc.metric), load)
			require.Equal(t, 120, back.Len())
			require.Equal(t, tc.kind, back.Config().Kind)
		})
	}
}
