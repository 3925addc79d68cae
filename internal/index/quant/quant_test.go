package quant

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/indexfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func gaussian(seed uint64, n, dim int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64()) * float32(1+i%dim%3)
	}
	return v
}

// TestStore: every encoding decodes each row within its error bound, Dist
// equals the distance to the decoded row (L2 and negated inner product),
// DistMany equals Dist row by row (the SIMD row kernels against the
// one-row path), and Write/Read round-trips the store.
func TestStore(t *testing.T) {
	const n, dim = 300, 40 // 40: the SQ kernels' 16-wide body and a tail
	data := gaussian(1, n, dim)
	q := gaussian(2, 1, dim)
	for _, tc := range []struct {
		kind  Kind
		m, nb int
		tol   float32 // relative decode error per row (L2 norm)
	}{
		{FP32, 0, 0, 0}, {SQ8, 0, 0, 0.02}, {SQ6, 0, 0, 0.08}, {FP16, 0, 0, 0.001}, {BF16, 0, 0, 0.01}, {PQ, 10, 6, 0.8},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			s := New(tc.kind, dim, tc.m, tc.nb)
			require.NoError(t, s.Train(context.Background(), data, 2, 7))
			if tc.kind == FP32 {
				s.Adopt(data)
			} else {
				require.NoError(t, s.Encode(context.Background(), data, 2))
			}
			dec := make([]float32, dim)
			ids := make([]uint32, n)
			for i := range n {
				ids[i] = uint32(i)
				row := data[i*dim : (i+1)*dim]
				s.Decode(uint32(i), dec)
				require.LessOrEqual(t, distance.L2Squared(row, dec), tc.tol*tc.tol*distance.Dot(row, row)+1e-12, "row %d", i)
			}
			for _, ip := range []bool{false, true} {
				var p Query
				p.Prepare(s, q, ip)
				many := make([]float32, n)
				p.DistMany(ids, many)
				for i := range n {
					s.Decode(uint32(i), dec)
					want := distance.L2Squared(q, dec)
					if ip {
						want = -distance.Dot(q, dec)
					}
					d := p.Dist(uint32(i))
					require.InDelta(t, want, d, 1e-3*(1+float64(max(want, -want))), "ip=%v row %d", ip, i)
					require.InDelta(t, d, many[i], 1e-4*(1+float64(max(d, -d))), "DistMany ip=%v row %d", ip, i)
				}
			}
			f := indexfile.Format{Magic: "QTEST\x00\x00\x00", Version: 1, VersionSize: 4, Corrupt: errors.New("corrupt")}
			var buf bytes.Buffer
			w := f.NewWriter(&buf)
			s.Write(w)
			require.NoError(t, w.Close())
			r, err := f.NewReader(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			back, err := Read(r, f, tc.kind, dim, tc.m, tc.nb, n)
			require.NoError(t, err)
			require.NoError(t, r.Close())
			for i := range n {
				a, b := make([]float32, dim), make([]float32, dim)
				s.Decode(uint32(i), a)
				back.Decode(uint32(i), b)
				require.Equal(t, a, b)
			}
			require.Equal(t, s.MemoryBytes(), back.MemoryBytes())
		})
	}
}

func TestParseKind(t *testing.T) {
	for s, want := range map[string]Kind{"sq8": SQ8, "SQ6": SQ6, "fp16": FP16, "BF16": BF16, "FP32": FP32, "flat": FP32} {
		k, ok := ParseKind(s)
		require.True(t, ok, s)
		require.Equal(t, want, k)
	}
	for _, s := range []string{"", "PQ", "SQ4U", " SQ8", "INT8"} {
		_, ok := ParseKind(s)
		require.False(t, ok, s)
	}
}
