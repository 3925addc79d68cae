package ivf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// TestMarshalGolden pins the file format of each kind: a fixed small index
// marshals to the bytes of its golden file, that file still loads, and the
// loaded index marshals to the same bytes. No case uses COSINE: the
// normalised vectors round differently with and without the assembly
// kernels (-tags noasm), and the files must not depend on the build.
func TestMarshalGolden(t *testing.T) {
	data := clustered(5, 1, 120, 8, 4, 2)
	for _, tc := range []struct {
		kind   Kind
		metric index.Metric
		file   string
	}{
		{Flat, index.L2, "flat_l2.golden"},
		{SQ8, index.IP, "sq8_ip.golden"},
		{PQ, index.L2, "pq_l2.golden"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cfg := Defaults(tc.kind)
			cfg.Nlist, cfg.Iterations, cfg.Seed = 4, 5, 3
			if tc.kind == PQ {
				cfg.M, cfg.Nbits = 2, 4
			}
			x, err := Build(data, 8, tc.metric, cfg)
			require.NoError(t, err)
			back := indextest.MarshalGolden(t, tc.file, x, indextest.FromReader(Unmarshal))
			require.Equal(t, 120, back.Len())
			require.Equal(t, tc.kind, back.Config().Kind)
		})
	}
}
