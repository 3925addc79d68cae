package distance

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// L2SquaredGeneric is the portable reference for L2Squared. It sums with
// four independent accumulators over a 4-way unrolled loop.
func L2SquaredGeneric(a, b []float32) float32 {
	checkLen(len(a), len(b))
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		d0 := x[0] - y[0]
		d1 := x[1] - y[1]
		d2 := x[2] - y[2]
		d3 := x[3] - y[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// DotGeneric is the portable reference for Dot. It sums with four
// independent accumulators over a 4-way unrolled loop.
func DotGeneric(a, b []float32) float32 {
	checkLen(len(a), len(b))
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// NormGeneric is the portable reference for Norm.
func NormGeneric(a []float32) float32 {
	return sqrt32(DotGeneric(a, a))
}

// CosineGeneric is the portable reference for Cosine.
func CosineGeneric(a, b []float32) float32 {
	return cosine(DotGeneric(a, b), DotGeneric(a, a), DotGeneric(b, b))
}

// L2SquaredBatchGeneric is the portable reference for L2SquaredBatch.
func L2SquaredBatchGeneric(q, data, out []float32) {
	dim := checkBatch(len(q), len(data), len(out))
	if dim == 0 {
		clear(out)
		return
	}
	for i := range out {
		out[i] = L2SquaredGeneric(q, data[i*dim:(i+1)*dim])
	}
}

// DotBatchGeneric is the portable reference for DotBatch.
func DotBatchGeneric(q, data, out []float32) {
	dim := checkBatch(len(q), len(data), len(out))
	if dim == 0 {
		clear(out)
		return
	}
	for i := range out {
		out[i] = DotGeneric(q, data[i*dim:(i+1)*dim])
	}
}

// HammingGeneric is the portable reference for Hamming. It counts bits on
// 64-bit little-endian words, four words per iteration, then on the trailing
// bytes. math/bits.OnesCount64 compiles to POPCNT on amd64.
func HammingGeneric(a, b []byte) int {
	checkLen(len(a), len(b))
	b = b[:len(a)]
	var c0, c1, c2, c3 int
	i := 0
	for ; i+32 <= len(a); i += 32 {
		x, y := a[i:i+32:i+32], b[i:i+32:i+32]
		c0 += bits.OnesCount64(le64(x[0:]) ^ le64(y[0:]))
		c1 += bits.OnesCount64(le64(x[8:]) ^ le64(y[8:]))
		c2 += bits.OnesCount64(le64(x[16:]) ^ le64(y[16:]))
		c3 += bits.OnesCount64(le64(x[24:]) ^ le64(y[24:]))
	}
	for ; i+8 <= len(a); i += 8 {
		c0 += bits.OnesCount64(le64(a[i:i+8:i+8]) ^ le64(b[i:i+8:i+8]))
	}
	for ; i < len(a); i++ {
		c1 += bits.OnesCount8(a[i] ^ b[i])
	}
	return (c0 + c1) + (c2 + c3)
}

// JaccardGeneric is the portable reference for Jaccard. It counts the
// intersection and the union in one pass over 64-bit words.
func JaccardGeneric(a, b []byte) float32 {
	checkLen(len(a), len(b))
	b = b[:len(a)]
	var i0, i1, u0, u1 int
	i := 0
	for ; i+16 <= len(a); i += 16 {
		x, y := a[i:i+16:i+16], b[i:i+16:i+16]
		x0, y0 := le64(x[0:]), le64(y[0:])
		x1, y1 := le64(x[8:]), le64(y[8:])
		i0 += bits.OnesCount64(x0 & y0)
		u0 += bits.OnesCount64(x0 | y0)
		i1 += bits.OnesCount64(x1 & y1)
		u1 += bits.OnesCount64(x1 | y1)
	}
	for ; i+8 <= len(a); i += 8 {
		x, y := le64(a[i:i+8:i+8]), le64(b[i:i+8:i+8])
		i0 += bits.OnesCount64(x & y)
		u0 += bits.OnesCount64(x | y)
	}
	for ; i < len(a); i++ {
		i1 += bits.OnesCount8(a[i] & b[i])
		u1 += bits.OnesCount8(a[i] | b[i])
	}
	return jaccard(i0+i1, u0+u1)
}

// le64 loads a little-endian 64-bit word; it compiles to a single load.
func le64(p []byte) uint64 { return binary.LittleEndian.Uint64(p) }

// jaccard turns intersection and union bit counts into a distance.
func jaccard(inter, union int) float32 {
	if union == 0 {
		return 0
	}
	return float32(1 - float64(inter)/float64(union))
}

// cosine combines a dot product and two squared norms into a cosine
// similarity, in float64 so that the product of the norms cannot overflow.
func cosine(dot, aa, bb float32) float32 {
	if aa == 0 || bb == 0 {
		return 0
	}
	return float32(float64(dot) / math.Sqrt(float64(aa)*float64(bb)))
}

// sqrt32 is the float32 square root.
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// checkLen panics when two operands differ in length.
func checkLen(na, nb int) {
	if na != nb {
		panic("distance: operands differ in length")
	}
}

// checkBatch validates the shapes of a batched call and returns the
// dimension. With a zero-length query, data must be empty.
func checkBatch(dim, ndata, nout int) int {
	if dim == 0 {
		if ndata != 0 {
			panic("distance: non-empty data for an empty query")
		}
		return 0
	}
	if ndata != dim*nout {
		panic("distance: len(data) must equal len(q)*len(out)")
	}
	return dim
}
