package ivf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

func TestRecallSweep(t *testing.T) {
	f := fix()
	for _, k := range []Kind{Flat, SQ8, PQ} {
		x := f.index(t, k, index.L2)
		truth := f.groundTruth(index.L2)
		for _, np := range []int{1, 4, 8, 16, 32, 128} {
			var sum float64
			for i := range fixQ {
				got, err := x.Search(f.query(i), 10, index.SearchParams{Nprobe: np}, nil)
				require.NoError(t, err)
				sum += recall(got, truth[i])
			}
			t.Logf("%v nprobe=%d recall@10=%.4f mem=%d", k, np, sum/fixQ, x.MemoryBytes())
		}
	}
}
