package ivf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// close32 reports whether got is within 1e-5 of want relative to mag, the
// sum of the magnitudes of the terms (float32 sums in different orders
// differ by about that much).
func close32(got, want, mag float32) bool {
	return math.Abs(float64(got-want)) <= 1e-5*math.Max(1, float64(mag))
}

// TestScanKernelsMatchReference checks every kernel implementation this CPU
// can run against the pure-Go references, over dimensions and row counts
// that exercise the 16-float chunks, the scalar dimension tail, the
// four-row groups and the single-row remainder.
func TestScanKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ks := availableScanKernels()
	require.Equal(t, "generic", ks[len(ks)-1].name)
	require.Equal(t, ks[0].name, scanImpl.name)
	for _, k := range ks {
		for _, dim := range []int{1, 7, 16, 17, 31, 32, 48, 100, 784} {
			for _, rows := range []int{0, 1, 3, 4, 5, 8, 11} {
				q := make([]float32, dim)
				scale := make([]float32, dim)
				for j := range q {
					q[j] = rng.Float32()*4 - 2
					scale[j] = rng.Float32() / 64
				}
				codes := make([]byte, rows*dim)
				for i := range codes {
					codes[i] = byte(rng.UintN(256))
				}
				want := make([]float32, rows)
				got := make([]float32, rows)
				for _, c := range []struct {
					name     string
					ref, fun sqKernel
				}{{"sq8L2", sq8L2Generic, k.sq8L2}, {"sq8Dot", sq8DotGeneric, k.sq8Dot}} {
					c.ref(q, scale, codes, dim, want)
					clear(got)
					sq8Rows(c.fun, c.ref, q, scale, codes, got)
					absQ := make([]float32, dim)
					for j, v := range q {
						absQ[j] = float32(math.Abs(float64(v)))
					}
					mag := make([]float32, rows)
					sq8DotGeneric(absQ, nil, codes, dim, mag)
					for i := range want {
						require.Truef(t, close32(got[i], want[i], max(mag[i], want[i])), "%s %s dim=%d rows=%d row %d: got %v want %v",
							k.name, c.name, dim, rows, i, got[i], want[i])
					}
				}
				// The reference itself is the decoded distance.
				if rows > 0 {
					var l2, dot float64
					for j := range dim {
						x := float64(scale[j]) * float64(codes[j])
						l2 += (float64(q[j]) - x) * (float64(q[j]) - x)
						dot += float64(q[j]) * float64(codes[j])
					}
					var o [1]float32
					sq8L2Generic(q, scale, codes, dim, o[:])
					require.InEpsilon(t, l2, float64(o[0]), 1e-4)
					sq8DotGeneric(q, nil, codes, dim, o[:])
					require.InDelta(t, dot, float64(o[0]), 1e-3*math.Max(1, math.Abs(dot)))
				}
			}
		}
		for _, n := range []int{0, 5, 16, 33, 256, 1000} {
			a, b := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i], b[i] = rng.Float32(), rng.Float32()
			}
			want, got := make([]float32, n), make([]float32, n)
			addGeneric(a, b, want)
			n16 := n &^ 15
			k.add(a[:n16], b[:n16], got[:n16])
			addGeneric(a[n16:], b[n16:], got[n16:])
			require.Equal(t, want, got, "%s add n=%d", k.name, n)
		}
	}
}

// TestPQInnerMatchesReference checks every pqInner implementation against
// the reference and the reference against plain inner products.
func TestPQInnerMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range availableScanKernels() {
		for _, dsub := range []int{1, 2, 3, 8, 16} {
			for _, n := range []int{16, 32, 256} {
				a := make([]float32, dsub)
				for i := range a {
					a[i] = rng.Float32()*2 - 1
				}
				tr := make([]float32, dsub*n)
				for i := range tr {
					tr[i] = rng.Float32()*2 - 1
				}
				want, got := make([]float32, n), make([]float32, n)
				pqInnerGeneric(a, tr, want)
				k.pqInner(a, tr, got)
				for c := range n {
					var dot, mag float64
					for d := range dsub {
						dot += float64(a[d]) * float64(tr[d*n+c])
						mag += math.Abs(float64(a[d]) * float64(tr[d*n+c]))
					}
					require.InDelta(t, dot, float64(want[c]), 1e-5*max(1, mag))
					require.Truef(t, close32(got[c], want[c], float32(mag)), "%s dsub=%d n=%d c=%d: got %v want %v",
						k.name, dsub, n, c, got[c], want[c])
				}
			}
		}
	}
}

// TestPQScan8MatchesReference: every pqScan8 implementation gives the
// reference's results bit for bit (they add in the same order), with rows
// packed (stride m) or strided (a block of a longer code), and the
// reference adds the plain sum of look-ups up to rounding.
func TestPQScan8MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, k := range availableScanKernels() {
		for _, m := range []int{1, 3, 4, 5, 8, 11, 12, 16, 98} {
			for _, extra := range []int{0, 5} {
				stride := m + extra
				for _, rows := range []int{0, 1, 2, 7, 8} {
					tab := make([]float32, m*256)
					for i := range tab {
						tab[i] = rng.Float32() * 10
					}
					codes := make([]byte, rows*stride)
					for i := range codes {
						codes[i] = byte(rng.UintN(256))
					}
					want, got := make([]float32, rows), make([]float32, rows)
					for i := range rows {
						want[i], got[i] = float32(i)+0.5, float32(i)+0.5
					}
					pqScan8Generic(tab, codes, m, stride, want)
					k.pqScan8(tab, codes, m, stride, got)
					require.Equal(t, want, got, "%s m=%d stride=%d rows=%d", k.name, m, stride, rows)
					for i := range rows {
						sum := float64(i) + 0.5
						for j := range m {
							sum += float64(tab[j*256+int(codes[i*stride+j])])
						}
						require.InEpsilon(t, sum, float64(want[i]), 1e-5)
					}
				}
			}
		}
	}
}

// TestPQScanBlocked: pqScan over 8-bit codes, which runs the kernel over
// blocks of sub-spaces, equals the plain sum of look-ups up to rounding.
func TestPQScanBlocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, m := range []int{1, 15, 16, 17, 40, 98} {
		const rows = 9
		tab := make([]float32, m*256)
		for i := range tab {
			tab[i] = rng.Float32()
		}
		codes := make([]byte, rows*m)
		for i := range codes {
			codes[i] = byte(rng.UintN(256))
		}
		out := make([]float32, rows)
		pqScan(tab, 256, codes, m, 2, out)
		for i := range rows {
			sum := 2.0
			for j := range m {
				sum += float64(tab[j*256+int(codes[i*m+j])])
			}
			require.InEpsilon(t, sum, float64(out[i]), 1e-5, "m=%d row %d", m, i)
		}
	}
}
