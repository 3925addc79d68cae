package distance

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// f16Value is the binary16 definition evaluated in float64.
func f16Value(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return s * math.Ldexp(m, -24)
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * math.Ldexp(1+m/1024, e-15)
}

func TestFloat16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		want := f16Value(h)
		got := Float16ToFloat32(h)
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(got)), "h=%#04x", h)
			require.True(t, math.IsNaN(float64(Float16ToFloat32(Float32ToFloat16(got)))))
			continue
		}
		require.Equal(t, want, float64(got), "h=%#04x", h)
		require.Equal(t, math.Signbit(want), math.Signbit(float64(got)), "h=%#04x", h)
		require.Equal(t, h, Float32ToFloat16(got), "round trip h=%#04x", h)
	}
}

// TestFloat32ToFloat16Nearest checks that the encoded value is the nearest
// binary16 neighbour, ties to even, over random values across the range.
func TestFloat32ToFloat16Nearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x := float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(40)-26))
		h := Float32ToFloat16(x)
		got := f16Value(h)
		if math.IsInf(got, 0) {
			require.Greater(t, math.Abs(float64(x)), 65504.0, "x=%g", x)
			continue
		}
		d := math.Abs(float64(x) - got)
		for _, nb := range []uint16{h + 1, h - 1} {
			if nb&0x7c00 == 0x7c00 || (h&0x7fff == 0 && nb&0x7fff == 0x7fff) {
				continue
			}
			nd := math.Abs(float64(x) - f16Value(nb))
			require.LessOrEqual(t, d, nd, "x=%g h=%#04x neighbour=%#04x", x, h, nb)
			if d == nd {
				require.Zero(t, h&1, "tie must round to even: x=%g", x)
			}
		}
	}
	require.Equal(t, uint16(0x7c00), Float32ToFloat16(70000))
	require.Equal(t, uint16(0xfc00), Float32ToFloat16(float32(math.Inf(-1))))
	require.Equal(t, uint16(0x3c00), Float32ToFloat16(1))
	require.Equal(t, uint16(0x0001), Float32ToFloat16(float32(math.Ldexp(1, -24))))
	require.Equal(t, uint16(0), Float32ToFloat16(float32(math.Ldexp(1, -26))))
}

func TestBFloat16(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := BFloat16ToFloat32(h)
		if math.IsNaN(float64(f)) {
			require.True(t, math.IsNaN(float64(BFloat16ToFloat32(Float32ToBFloat16(f)))))
			continue
		}
		require.Equal(t, h, Float32ToBFloat16(f), "round trip h=%#04x", h)
	}
	// Ties to even: 1 + 2^-8 is half way between 1 and 1 + 2^-7.
	require.Equal(t, uint16(0x3f80), Float32ToBFloat16(1+1.0/256))
	require.Equal(t, uint16(0x3f82), Float32ToBFloat16(1+3.0/256))
	require.Equal(t, uint16(0x3f81), Float32ToBFloat16(1+1.0/256+1.0/4096))
}

func TestDecodeVectors(t *testing.T) {
	src := []float32{1, -2.5, 0.099975586, 65504}
	b := make([]byte, 8)
	out := make([]float32, 4)
	EncodeFloat16(b, src)
	DecodeFloat16(out, b)
	require.Equal(t, src, out)
	EncodeBFloat16(b, []float32{1, -2.5, 0.5, 3})
	DecodeBFloat16(out, b)
	require.Equal(t, []float32{1, -2.5, 0.5, 3}, out)
	DecodeInt8(out, []byte{0x80, 0xff, 0, 0x7f})
	require.Equal(t, []float32{-128, -1, 0, 127}, out)
	require.Panics(t, func() { DecodeFloat16(out, b[:6]) })
	require.Panics(t, func() { DecodeInt8(out, b) })
}

func BenchmarkDecodeFloat16(b *testing.B) {
	src := make([]byte, 2*768)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]float32, 768)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		DecodeFloat16(dst, src)
	}
}
