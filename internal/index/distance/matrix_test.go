package distance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// absSum is the sum of |v[i]|, the scale of the rounding error of a sum.
func absSum(v []float32) float32 {
	var s float32
	for _, x := range v {
		s += float32(math.Abs(float64(x)))
	}
	return s
}

func TestSumKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, k := range availableMatrix() {
		for n := 0; n <= 300; n++ {
			v := guardedFloats(t, n)
			copy(v, randVec(r, n, 0))
			requireClose(t, SumGeneric(v), k.sum(v), absSum(v), "%s n=%d", k.name, n)
		}
	}
	big := randVec(r, 1<<20+3, 1)
	requireClose(t, SumGeneric(big), Sum(big), absSum(big))
	require.Equal(t, float32(6), SumGeneric([]float32{1, 2, 3}))
}

// TestDotMatrixKernels compares every implementation's DotMatrix with the
// reference over shapes that exercise whole tiles, leftover rows, leftover
// queries and every tail length, with rows that end at a guard page.
func TestDotMatrixKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	dims := []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 784}
	for _, k := range availableMatrix() {
		for _, dim := range dims {
			for _, nq := range []int{0, 1, 3, 4, 5, 8, 9, 13, 24, 29, 48, 53, 100} {
				for _, nx := range []int{0, 1, 2, 3, 5, 6, 7, 8, 9, 12, 13, 16, 20, 25} {
					q := randVec(r, nq*dim, nq%3)
					x := guardedFloats(t, nx*dim)
					copy(x, randVec(r, nx*dim, 0))
					want := make([]float32, nq*nx)
					DotMatrixGeneric(q, x, dim, want)
					got := make([]float32, nq*nx)
					for i := range got {
						got[i] = float32(math.NaN()) // every output must be written
					}
					newQueries(q, dim, k).DotMatrix(x, got)
					for i := range want {
						requireClose(t, want[i], got[i], float32(dim),
							"%s dim=%d nq=%d nx=%d out[%d]", k.name, dim, nq, nx, i)
					}
				}
			}
		}
	}
}

// TestDotMatrixSpecialValues checks that zero padding of the packed queries
// and masked row tails do not turn into NaN, and that NaN and Inf in a row
// propagate to that row's products only.
func TestDotMatrixSpecialValues(t *testing.T) {
	const dim, nq, nx = 21, 101, 17
	r := rand.New(rand.NewPCG(25, 26))
	q := randVec(r, nq*dim, 0)
	x := randVec(r, nx*dim, 0)
	x[2*dim+5] = float32(math.NaN())
	x[7*dim+20] = float32(math.Inf(1))
	for _, k := range availableMatrix() {
		got := make([]float32, nq*nx)
		newQueries(q, dim, k).DotMatrix(x, got)
		want := make([]float32, nq*nx)
		DotMatrixGeneric(q, x, dim, want)
		for i := range want {
			requireClose(t, want[i], got[i], float32(dim), "%s out[%d]", k.name, i)
		}
		for i := range nq {
			require.True(t, math.IsNaN(float64(got[i*nx+2])), "%s query %d", k.name, i)
			require.False(t, math.IsNaN(float64(got[i*nx+3])), "%s query %d", k.name, i)
		}
	}
}

func TestDotMatrixShapes(t *testing.T) {
	require.Panics(t, func() { NewQueries(make([]float32, 5), 2) })
	require.Panics(t, func() { NewQueries(nil, 0) })
	qs := NewQueries(make([]float32, 8), 4)
	require.Equal(t, 2, qs.Len())
	require.Equal(t, 4, qs.Dim())
	require.Panics(t, func() { qs.DotMatrix(make([]float32, 6), make([]float32, 2)) })
	require.Panics(t, func() { qs.DotMatrix(make([]float32, 8), make([]float32, 3)) })
	qs.DotMatrix(nil, nil) // no rows, no outputs

	norms := make([]float32, 3)
	SquaredNorms([]float32{1, 2, 0, 0, 3, 4}, 2, norms)
	require.Equal(t, []float32{5, 0, 25}, norms)
	require.Panics(t, func() { SquaredNorms(make([]float32, 5), 2, norms) })
}

// BenchmarkDotMatrix scores query batches against 1,020 rows of
// Fashion-MNIST's dimension (3.2 MB, from the L3 cache) and against 1,024
// rows of dimension 128 (512 KiB, the centroid table of the IVF build's
// assignment): the kernels are compute-bound, so the figure to watch is
// GFLOP/s (2*dim per product).
func BenchmarkDotMatrix(b *testing.B) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, shape := range []struct{ dim, nx int }{{784, 1020}, {128, 1024}} {
		x := randVec(r, shape.nx*shape.dim, 0)
		for _, k := range availableMatrix() {
			for _, nq := range []int{4, 16, 48, 64, 96, 192} {
				b.Run(fmt.Sprintf("%s/dim=%d/nx=%d/nq=%d", k.name, shape.dim, shape.nx, nq), func(b *testing.B) {
					benchDotMatrix(b, newQueries(randVec(r, nq*shape.dim, 0), shape.dim, k), x)
				})
			}
		}
	}
}

func benchDotMatrix(b *testing.B, qs *Queries, x []float32) {
	nx := len(x) / qs.Dim()
	out := make([]float32, qs.Len()*nx)
	flops := float64(2 * qs.Dim() * qs.Len() * nx)
	clk := startCPU(b, 0)
	for b.Loop() {
		qs.DotMatrix(x, out)
	}
	cpu := threadCPUTime() - clk.start
	clk.stop(b, 0)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if clk.start > 0 && cpu > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "cpu-GFLOP/s")
	}
}

// BenchmarkSum streams 256 MiB, far more than the caches hold: the result
// is the single-core memory read bandwidth.
func BenchmarkSum(b *testing.B) {
	v := make([]float32, 64<<20)
	for i := range v {
		v[i] = float32(i & 7)
	}
	bytes := int64(len(v) * 4)
	for _, k := range availableMatrix() {
		b.Run(k.name, func(b *testing.B) {
			var sink float32
			clk := startCPU(b, bytes)
			for b.Loop() {
				sink += k.sum(v)
			}
			clk.stop(b, bytes)
			_ = sink
		})
	}
}

func TestFMALoop(t *testing.T) {
	for _, k := range availableMatrix() {
		if k.fma == nil {
			continue
		}
		k.fma(0)
		k.fma(1000)
	}
	if mimpl.fma != nil {
		require.Equal(t, 10*mimpl.flops, FMALoop(10))
	} else {
		require.Zero(t, FMALoop(10))
	}
	require.Zero(t, FMALoop(0))
}

// BenchmarkFMALoop measures the core's peak FMA rate in GFLOP/s of thread
// CPU time, the ceiling of BenchmarkDotMatrix.
func BenchmarkFMALoop(b *testing.B) {
	for _, k := range availableMatrix() {
		if k.fma == nil {
			continue
		}
		b.Run(k.name, func(b *testing.B) {
			const iters = 1 << 20
			clk := startCPU(b, 0)
			for b.Loop() {
				k.fma(iters)
			}
			cpu := threadCPUTime() - clk.start
			clk.stop(b, 0)
			if clk.start > 0 && cpu > 0 {
				b.ReportMetric(float64(iters*k.flops)*float64(b.N)/cpu.Seconds()/1e9, "cpu-GFLOP/s")
			}
		})
	}
}

// TestFirstL2Below compares every implementation with the reference over
// lengths that cover whole chunks and tails, thresholds below, between and
// above the keys, exact ties, and NaN and Inf dot products and norms.
func TestFirstL2Below(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for n := 0; n <= 70; n++ {
		for trial := range 40 {
			dots := guardedFloats(t, n)
			sq := make([]float32, n)
			for j := range n {
				dots[j] = float32(r.IntN(9)) / 2 // small integers: exact ties
				sq[j] = float32(r.IntN(20))
				switch r.IntN(12) {
				case 0:
					dots[j] = nan
				case 1:
					sq[j] = inf
				case 2:
					dots[j] = -inf
				}
			}
			thr := float32(r.IntN(24)) - 6
			switch trial {
			case 0:
				thr = inf
			case 1:
				thr = -inf
			case 2:
				thr = nan
			}
			want := FirstL2BelowGeneric(dots, sq, thr)
			require.Equal(t, want, FirstL2Below(dots, sq, thr), "n=%d thr=%v", n, thr)
			for _, k := range availableMatrix() {
				if k.below == nil || n < 16 {
					continue
				}
				got := k.below(dots, sq, thr)
				if want < n&^15 {
					require.Equal(t, want, got, "%s n=%d thr=%v", k.name, n, thr)
				} else {
					require.Equal(t, n&^15, got, "%s n=%d thr=%v", k.name, n, thr)
				}
			}
		}
	}
	require.Panics(t, func() { FirstL2Below(make([]float32, 3), make([]float32, 2), 0) })
}

// TestPrefetch checks that Prefetch leaves its operand unchanged and does
// not fault on empty slices, slices of every short length and slices that
// end at a guard page.
func TestPrefetch(t *testing.T) {
	Prefetch(nil)
	for n := range 70 {
		v := guardedFloats(t, n)
		for i := range v {
			v[i] = float32(i)
		}
		Prefetch(v)
		for i := range v {
			require.Equal(t, float32(i), v[i])
		}
		if n > 3 {
			Prefetch(v[3:])
		}
	}
}
