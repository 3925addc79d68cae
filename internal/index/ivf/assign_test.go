package ivf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index/distance"
)

// TestArgminL2 checks every implementation's argmin against a plain scan,
// with ties (small integer keys) so that the lowest index must win, on
// lengths around the 16-key chunks, and with NaN and infinite keys, which
// never win.
func TestArgminL2(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, k := range availableScanKernels() {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 100, 1024, 1031} {
			for trial := range 60 {
				dots, norms := make([]float32, n), make([]float32, n)
				for c := range n {
					dots[c], norms[c] = float32(rng.IntN(4)), float32(rng.IntN(8))
					if trial%3 == 0 {
						switch rng.IntN(6) {
						case 0:
							dots[c] = nan
						case 1:
							norms[c] = inf
						}
					}
				}
				if trial == 1 { // no key below +Inf
					for c := range n {
						norms[c] = inf
					}
				}
				want, wv := 0, inf
				for c := range n {
					if v := norms[c] - 2*dots[c]; v < wv {
						want, wv = c, v
					}
				}
				require.Equal(t, want, k.argmin(dots, norms), "%s n=%d trial=%d", k.name, n, trial)
			}
		}
	}
}

// TestAssignMatchesExact checks that the assignment picks a centroid at the
// exact minimum distance (the largest inner product) for every row,
// whatever the number of workers, with a small centroid table (per-row
// scoring) and a large one (blocked products, also from prepared blocks).
func TestAssignMatchesExact(t *testing.T) {
	for _, k := range []int{50, blockedMinBytes/4/37 + 10} {
		t.Run(fmt.Sprint(k), func(t *testing.T) { testAssignMatchesExact(t, k) })
	}
}

func testAssignMatchesExact(t *testing.T, k int) {
	const n, dim = 1000, 37
	rng := rand.New(rand.NewPCG(3, uint64(k)))
	data, cent := make([]float32, n*dim), make([]float32, k*dim)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	for i := range cent {
		cent[i] = float32(rng.NormFloat64())
	}
	one := assign(context.Background(), data, dim, cent, 1)
	require.Equal(t, one, assign(context.Background(), data, dim, cent, 3))
	// The blocks kmeans prepares once give the same labels.
	prepared := prepareBlocks(context.Background(), data, dim, k, 2)
	require.Equal(t, k*dim*4 >= blockedMinBytes, prepared != nil)
	require.Equal(t, one, assignPrepared(context.Background(), data, dim, cent, 3, prepared))
	for i, c := range one {
		x := data[i*dim : (i+1)*dim]
		got := distance.L2SquaredGeneric(x, cent[int(c)*dim:(int(c)+1)*dim])
		for j := range k {
			d := distance.L2SquaredGeneric(x, cent[j*dim:(j+1)*dim])
			require.GreaterOrEqual(t, d*(1+1e-4), got, "row %d: centroid %d is nearer than %d", i, j, c)
		}
	}
	ip := assignIP(context.Background(), data, dim, cent, 2)
	for i, c := range ip {
		x := data[i*dim : (i+1)*dim]
		got := distance.DotGeneric(x, cent[int(c)*dim:(int(c)+1)*dim])
		for j := range k {
			require.LessOrEqual(t, distance.DotGeneric(x, cent[j*dim:(j+1)*dim]), got+1e-4)
		}
	}
}

// TestDrawD2 checks the chunked D² draw against a walk over every row.
func TestDrawD2(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 3*seedChunk + 17
	minD := make([]float32, n)
	for i := range minD {
		if rng.IntN(3) > 0 {
			minD[i] = rng.Float32()
		}
	}
	part := make([]float64, (n+seedChunk-1)/seedChunk)
	var total float64
	for i, d := range minD {
		part[i/seedChunk] += float64(d)
		total += float64(d)
	}
	for range 200 {
		r := rng.Float64() * total
		want, rr := -1, r
		for i, d := range minD {
			rr -= float64(d)
			if rr < 0 {
				want = i
				break
			}
		}
		got := drawD2(minD, part, r)
		if want >= 0 && got != want {
			// Chunk sums round differently from the running sum; the draw
			// may then land on a neighbouring row with positive weight.
			require.InDelta(t, want, got, 2)
			require.Positive(t, minD[got])
			continue
		}
		require.Equal(t, want, got)
	}
	require.Equal(t, -1, drawD2(minD, part, total*2))
}
