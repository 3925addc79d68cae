package distance

import (
	"bytes"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// pairKernel is one float32 pairwise kernel under test.
type pairKernel struct {
	name string
	fn   func(a, b []float32) float32
	ref  func(a, b []float32) float32
}

// pairKernels lists every implementation available on this CPU, called
// directly, plus the dispatched public functions.
func pairKernels() []pairKernel {
	var out []pairKernel
	for _, k := range availableKernels() {
		out = append(out,
			pairKernel{"l2/" + k.name, k.l2, L2SquaredGeneric},
			pairKernel{"dot/" + k.name, k.dot, DotGeneric},
		)
	}
	return append(out,
		pairKernel{"l2/dispatch", L2Squared, L2SquaredGeneric},
		pairKernel{"dot/dispatch", Dot, DotGeneric},
		pairKernel{"cosine/dispatch", Cosine, CosineGeneric},
		pairKernel{"norm/dispatch", func(a, _ []float32) float32 { return Norm(a) }, func(a, _ []float32) float32 { return NormGeneric(a) }},
	)
}

// batchKernel is one batched kernel under test.
type batchKernel struct {
	name string
	fn   func(q, data, out []float32)
	ref  func(a, b []float32) float32
}

func batchKernels() []batchKernel {
	var out []batchKernel
	for _, k := range availableKernels() {
		out = append(out,
			batchKernel{"l2/" + k.name, k.l2Batch, L2SquaredGeneric},
			batchKernel{"dot/" + k.name, k.dotBatch, DotGeneric},
		)
	}
	return append(out,
		batchKernel{"l2/dispatch", L2SquaredBatch, L2SquaredGeneric},
		batchKernel{"dot/dispatch", DotBatch, DotGeneric},
	)
}

// requireClose checks got against want within 1e-5*|scale| + 1e-5.
func requireClose(t *testing.T, want, got, scale float32, msgAndArgs ...any) {
	t.Helper()
	if math.IsNaN(float64(want)) {
		require.True(t, math.IsNaN(float64(got)), msgAndArgs...)
		return
	}
	tol := 1e-5*math.Abs(float64(scale)) + 1e-5
	require.InDelta(t, float64(want), float64(got), tol, msgAndArgs...)
}

// randVec fills a fresh slice of n+off values in [-1, 1) and returns the
// sub-slice starting at off, so that the data is misaligned by off elements.
func randVec(r *rand.Rand, n, off int) []float32 {
	buf := make([]float32, n+off)
	for i := range buf {
		buf[i] = r.Float32()*2 - 1
	}
	return buf[off : off+n : off+n]
}

func TestImplSelected(t *testing.T) {
	ks := availableKernels()
	require.Equal(t, ks[0].name, Impl())
	require.Equal(t, "generic", ks[len(ks)-1].name)
	t.Logf("selected %q; available %d implementations", Impl(), len(ks))
}

func TestPairKernelsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range pairKernels() {
		t.Run(k.name, func(t *testing.T) {
			for n := 0; n <= 300; n++ {
				for off := 0; off < 16; off++ {
					a := randVec(r, n, off)
					b := randVec(r, n, (off*7)%16)
					want := k.ref(a, b)
					got := k.fn(a, b)
					requireClose(t, want, got, want, "n=%d off=%d", n, off)
				}
			}
		})
	}
}

func TestPairKernelsSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	abs := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(math.Abs(float64(x)))
		}
		return out
	}
	cases := map[string]func(n int) (a, b []float32){
		"zeros": func(n int) ([]float32, []float32) {
			return make([]float32, n), make([]float32, n)
		},
		"zero-and-random": func(n int) ([]float32, []float32) {
			return make([]float32, n), randVec(r, n, 3)
		},
		"equal": func(n int) ([]float32, []float32) {
			a := randVec(r, n, 1)
			return a, append([]float32(nil), a...)
		},
		"large-positive": func(n int) ([]float32, []float32) {
			a, b := randVec(r, n, 0), randVec(r, n, 5)
			for i := range a {
				a[i] = 1e15 * (2 + a[i])
				b[i] = 1e15 * (2 + b[i])
			}
			return a, b
		},
		"large-mixed": func(n int) ([]float32, []float32) {
			a, b := randVec(r, n, 2), randVec(r, n, 9)
			for i := range a {
				a[i] *= 1e17
				b[i] *= -3e16
			}
			return a, b
		},
		"tiny": func(n int) ([]float32, []float32) {
			a, b := randVec(r, n, 4), randVec(r, n, 11)
			for i := range a {
				a[i] *= 1e-20
				b[i] *= 1e-20
			}
			return a, b
		},
	}
	for name, gen := range cases {
		for _, k := range pairKernels() {
			t.Run(name+"/"+k.name, func(t *testing.T) {
				for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 100, 128, 257, 784} {
					a, b := gen(n)
					want := k.ref(a, b)
					got := k.fn(a, b)
					// Sums with cancelling terms are compared against the
					// sum of magnitudes, the natural error scale.
					scale := max(float32(math.Abs(float64(want))), DotGeneric(abs(a), abs(b)))
					if scale > 1 {
						requireClose(t, want/scale, got/scale, 1, "n=%d", n)
					} else {
						requireClose(t, want, got, scale, "n=%d", n)
					}
					if name == "zeros" {
						require.Zero(t, got)
					}
				}
			})
		}
	}
}

func TestPairKernelsNaN(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range pairKernels() {
		t.Run(k.name, func(t *testing.T) {
			for _, n := range []int{1, 5, 8, 13, 32, 47, 64, 100} {
				a, b := randVec(r, n, 0), randVec(r, n, 0)
				a[n-1] = float32(math.NaN())
				require.True(t, math.IsNaN(float64(k.fn(a, b))), "n=%d", n)
			}
		})
	}
}

func TestCosineAndNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	a := randVec(r, 100, 0)
	require.InDelta(t, 1.0, float64(Cosine(a, a)), 1e-6)
	neg := make([]float32, len(a))
	for i := range a {
		neg[i] = -2 * a[i]
	}
	require.InDelta(t, -1.0, float64(Cosine(a, neg)), 1e-6)
	require.Zero(t, Cosine(a, make([]float32, len(a))))
	require.Zero(t, Cosine(make([]float32, len(a)), a))
	require.Zero(t, Cosine(nil, nil))
	require.InDelta(t, 5.0, float64(Norm([]float32{3, 4})), 1e-6)
	require.Zero(t, Norm(nil))
}

func TestBatchKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	dims := []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 47, 64, 65, 100, 128, 300, 784}
	for _, k := range batchKernels() {
		t.Run(k.name, func(t *testing.T) {
			for _, dim := range dims {
				for n := 0; n <= 9; n++ {
					off := (dim + n) % 16
					q := randVec(r, dim, off)
					data := randVec(r, dim*n, 15-off)
					out := make([]float32, n)
					for i := range out {
						out[i] = float32(math.NaN())
					}
					k.fn(q, data, out)
					for i := range out {
						want := k.ref(q, data[i*dim:(i+1)*dim])
						requireClose(t, want, out[i], want, "dim=%d n=%d row=%d", dim, n, i)
					}
				}
			}
		})
	}
}

func TestBatchEmptyQuery(t *testing.T) {
	out := []float32{1, 2, 3}
	L2SquaredBatch(nil, nil, out)
	require.Equal(t, []float32{0, 0, 0}, out)
	out = []float32{1, 2}
	DotBatch([]float32{}, nil, out)
	require.Equal(t, []float32{0, 0}, out)
	L2SquaredBatch([]float32{1}, nil, nil)
}

func TestShapePanics(t *testing.T) {
	a, b := make([]float32, 3), make([]float32, 4)
	require.Panics(t, func() { L2Squared(a, b) })
	require.Panics(t, func() { Dot(a, b) })
	require.Panics(t, func() { Cosine(a, b) })
	require.Panics(t, func() { L2SquaredGeneric(a, b) })
	require.Panics(t, func() { Hamming([]byte{1}, nil) })
	require.Panics(t, func() { Jaccard([]byte{1}, []byte{1, 2}) })
	require.Panics(t, func() { L2SquaredBatch(a, b, make([]float32, 2)) })
	require.Panics(t, func() { DotBatch(a, make([]float32, 6), make([]float32, 3)) })
	require.Panics(t, func() { DotBatch(nil, a, make([]float32, 1)) })
}

// naiveBits counts, bit by bit, the bits set in a XOR b, a AND b and a OR b.
func naiveBits(a, b []byte) (xor, and, or int) {
	for i := range a {
		for j := range 8 {
			x, y := a[i]>>j&1, b[i]>>j&1
			xor += int(x ^ y)
			and += int(x & y)
			or += int(x | y)
		}
	}
	return xor, and, or
}

// binaryKernel is one Hamming/Jaccard pair under test.
type binaryKernel struct {
	name    string
	hamming func(a, b []byte) int
	jaccard func(a, b []byte) float32
}

// binaryKernels lists every binary implementation available on this CPU,
// called directly, plus the dispatched public functions.
func binaryKernels() []binaryKernel {
	var out []binaryKernel
	for _, k := range availableKernels() {
		out = append(out, binaryKernel{k.name + "/" + k.binName, k.hamming, k.jaccard})
	}
	out = append(out, extraBinaryKernels()...)
	return append(out, binaryKernel{"dispatch", Hamming, Jaccard})
}

// wantJaccard is the Jaccard distance from bit counts.
func wantJaccard(and, or int) float32 {
	if or == 0 {
		return 0
	}
	return float32(1 - float64(and)/float64(or))
}

func TestBinaryKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	randBytes := func(n, off int) []byte {
		buf := make([]byte, n+off)
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		return buf[off:]
	}
	for _, k := range binaryKernels() {
		t.Run(k.name, func(t *testing.T) {
			for n := 0; n <= 300; n++ {
				for off := 0; off < 16; off++ {
					a, b := randBytes(n, off), randBytes(n, 15-off)
					xor, and, or := naiveBits(a, b)
					require.Equal(t, xor, k.hamming(a, b), "n=%d off=%d", n, off)
					require.Equal(t, wantJaccard(and, or), k.jaccard(a, b), "n=%d off=%d", n, off)
				}
			}
			ones := bytes.Repeat([]byte{0xff}, 200)
			zeros := make([]byte, len(ones))
			for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 200} {
				require.Equal(t, 8*n, k.hamming(ones[:n], zeros[:n]))
				require.Zero(t, k.hamming(ones[:n], ones[:n]))
				require.Zero(t, k.jaccard(zeros[:n], zeros[:n]))
				require.Zero(t, k.jaccard(ones[:n], ones[:n]))
				if n > 0 {
					require.Equal(t, float32(1), k.jaccard(ones[:n], zeros[:n]))
				}
			}
			require.Equal(t, bits.OnesCount8(0x5a), k.hamming([]byte{0x5a}, []byte{0}))
		})
	}
}

func TestBinaryBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, w := range []int{0, 1, 8, 13, 64, 100} {
		const n = 9
		q, data := make([]byte, w), make([]byte, w*n)
		for i := range q {
			q[i] = byte(r.Uint32())
		}
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		hs, js := make([]float32, n), make([]float32, n)
		HammingBatch(q, data, hs)
		JaccardBatch(q, data, js)
		for i := range n {
			row := data[i*w : (i+1)*w]
			require.Equal(t, float32(Hamming(q, row)), hs[i], "w=%d row %d", w, i)
			require.Equal(t, Jaccard(q, row), js[i], "w=%d row %d", w, i)
		}
	}
	require.Panics(t, func() { HammingBatch([]byte{1}, []byte{1, 2}, make([]float32, 1)) })
	require.Panics(t, func() { JaccardBatch(nil, []byte{1}, nil) })
}

// TestHammingBatchKernels holds every batch Hamming kernel to the pairwise
// reference over many row widths (blocks and tails) and row counts.
func TestHammingBatchKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, k := range availableKernels() {
		t.Run(k.name+"/"+k.binName, func(t *testing.T) {
			for w := 1; w <= 200; w++ {
				for _, n := range []int{0, 1, 3} {
					q, data := make([]byte, w), make([]byte, w*n)
					for i := range q {
						q[i] = byte(r.Uint32())
					}
					for i := range data {
						data[i] = byte(r.Uint32())
					}
					out := make([]float32, n)
					k.hammingBatch(q, data, out)
					for i := range n {
						require.Equal(t, float32(HammingGeneric(q, data[i*w:(i+1)*w])), out[i], "w=%d n=%d row %d", w, n, i)
					}
				}
			}
		})
	}
}
