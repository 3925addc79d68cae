package distance

import (
	"encoding/binary"
	"math"
)

// Float16ToFloat32 converts an IEEE 754 half-precision value (binary16) to
// float32 exactly, including subnormals, infinities and NaN.
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal: normalise the fraction into a float32 exponent.
		e := uint32(113) // 127 - 15 + 1
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// Float32ToFloat16 converts f to the nearest IEEE 754 half-precision value,
// rounding ties to even; values beyond the half range become ±Inf and NaN
// stays NaN.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	frac := b & 0x7fffff
	if exp == 0xff {
		if frac != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign // underflows to ±0
		}
		m := frac | 0x800000 // implicit bit
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | frac>>13
	rem := frac & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which rounds up to Inf correctly
	}
	return sign | uint16(h)
}

// BFloat16ToFloat32 converts a bfloat16 value (the top half of a float32)
// to float32 exactly.
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToBFloat16 converts f to the nearest bfloat16 value, rounding ties
// to even; NaN stays NaN.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// DecodeFloat16 decodes len(dst) little-endian binary16 values from src into
// dst. It panics if len(src) != 2*len(dst).
func DecodeFloat16(dst []float32, src []byte) {
	checkLen(len(src), 2*len(dst))
	for i := range dst {
		dst[i] = Float16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// DecodeBFloat16 decodes len(dst) little-endian bfloat16 values from src
// into dst. It panics if len(src) != 2*len(dst).
func DecodeBFloat16(dst []float32, src []byte) {
	checkLen(len(src), 2*len(dst))
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
	}
}

// DecodeInt8 widens len(dst) signed bytes of src into dst. It panics if
// len(src) != len(dst).
func DecodeInt8(dst []float32, src []byte) {
	checkLen(len(src), len(dst))
	for i, b := range src {
		dst[i] = float32(int8(b))
	}
}

// EncodeFloat16 encodes src as little-endian binary16 values into dst. It
// panics if len(dst) != 2*len(src).
func EncodeFloat16(dst []byte, src []float32) {
	checkLen(len(dst), 2*len(src))
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], Float32ToFloat16(f))
	}
}

// EncodeBFloat16 encodes src as little-endian bfloat16 values into dst. It
// panics if len(dst) != 2*len(src).
func EncodeBFloat16(dst []byte, src []float32) {
	checkLen(len(dst), 2*len(src))
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], Float32ToBFloat16(f))
	}
}
