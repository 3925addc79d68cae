//go:build amd64 && !noasm

package distance

import "golang.org/x/sys/cpu"

// Assembly kernels. The pairwise kernels require len(a) == len(b); the
// four-row batch kernels require len(q) > 0, len(out)%4 == 0 and
// len(data) == len(q)*len(out).

//go:noescape
func l2AVX2(a, b []float32) float32

//go:noescape
func dotAVX2(a, b []float32) float32

//go:noescape
func l2Batch4AVX2(q, data, out []float32)

//go:noescape
func dotBatch4AVX2(q, data, out []float32)

//go:noescape
func l2AVX512(a, b []float32) float32

//go:noescape
func dotAVX512(a, b []float32) float32

//go:noescape
func l2Batch4AVX512(q, data, out []float32)

//go:noescape
func dotBatch4AVX512(q, data, out []float32)

//go:noescape
func hammingPOPCNT(a, b []byte) int

//go:noescape
func jaccardCountsPOPCNT(a, b []byte) (inter, union int)

//go:noescape
func hammingAVX512(a, b []byte) int

//go:noescape
func jaccardCountsAVX512(a, b []byte) (inter, union int)

//go:noescape
func hammingBatchAVX512(q, data []byte, out []float32)

//go:noescape
func hammingBlocksAVX2(a, b []byte) int

//go:noescape
func jaccardBlocksAVX2(a, b []byte) (inter, union int)

func jaccardPOPCNT(a, b []byte) float32 { return jaccard(jaccardCountsPOPCNT(a, b)) }

func jaccardAVX512(a, b []byte) float32 { return jaccard(jaccardCountsAVX512(a, b)) }

// Below these lengths in bytes the scalar POPCNT loops are at least as fast
// as the AVX2 nibble lookup (measured with BenchmarkHamming and
// BenchmarkJaccard in thread CPU time: at 1536 bits Hamming costs 11 ns with
// POPCNT and 13 ns with VPSHUFB, at 8192 bits 44 ns and 38 ns; Jaccard
// costs 11.5 and 12.7 ns at 768 bits, 21 and 17 ns at 1536 bits).
const (
	avx2HammingMin = 512
	avx2JaccardMin = 128
)

// hammingAVX2 counts the whole 32-byte blocks of long operands with the
// AVX2 nibble lookup and everything else with scalar POPCNT.
func hammingAVX2(a, b []byte) int {
	if len(a) < avx2HammingMin {
		return hammingPOPCNT(a, b)
	}
	n := len(a) &^ 31
	return hammingBlocksAVX2(a[:n], b[:n]) + hammingPOPCNT(a[n:], b[n:len(a)])
}

// jaccardAVX2 is jaccardPOPCNT with the whole 32-byte blocks of long
// operands counted by the AVX2 nibble lookup.
func jaccardAVX2(a, b []byte) float32 {
	if len(a) < avx2JaccardMin {
		return jaccardPOPCNT(a, b)
	}
	n := len(a) &^ 31
	inter, union := jaccardBlocksAVX2(a[:n], b[:n])
	i, u := jaccardCountsPOPCNT(a[n:], b[n:len(a)])
	return jaccard(inter+i, union+u)
}

//go:noescape
func float16ToFloat32F16C(dst []float32, src []byte)

// cpuidECX1 returns ECX of CPUID leaf 1, whose bit 29 is F16C (which
// golang.org/x/sys/cpu does not report).
func cpuidECX1() uint32

// hasF16C reports whether the CPU converts half precision (VCVTPH2PS) and
// the OS saves YMM registers.
func hasF16C() bool { return cpu.X86.HasAVX && cpuidECX1()&(1<<29) != 0 }

// decodeFloat16F16C converts eight values at a time with VCVTPH2PS and the
// last 0..7 in Go.
func decodeFloat16F16C(dst []float32, src []byte) {
	n := len(dst) &^ 7
	if n > 0 {
		float16ToFloat32F16C(dst[:n], src[:2*n])
	}
	DecodeFloat16Generic(dst[n:], src[2*n:])
}

//go:noescape
func bfloat16ToFloat32AVX2(dst []float32, src []byte)

//go:noescape
func int8ToFloat32AVX2(dst []float32, src []byte)

// decodeBFloat16AVX2 widens eight values at a time with AVX2 and the last
// 0..7 in Go.
func decodeBFloat16AVX2(dst []float32, src []byte) {
	n := len(dst) &^ 7
	if n > 0 {
		bfloat16ToFloat32AVX2(dst[:n], src[:2*n])
	}
	DecodeBFloat16Generic(dst[n:], src[2*n:])
}

// decodeInt8AVX2 widens eight values at a time with AVX2 and the last 0..7
// in Go.
func decodeInt8AVX2(dst []float32, src []byte) {
	n := len(dst) &^ 7
	if n > 0 {
		int8ToFloat32AVX2(dst[:n], src[:n])
	}
	DecodeInt8Generic(dst[n:], src[n:])
}

// withHalf fills in the widening decoders of the AVX2 and AVX-512 sets:
// VCVTPH2PS for float16 where the CPU has F16C, AVX2 shifts and sign
// extension for bfloat16 and int8.
func withHalf(k kernels) kernels {
	k.decodeF16 = DecodeFloat16Generic
	if hasF16C() {
		k.decodeF16 = decodeFloat16F16C
	}
	k.decodeBF16, k.decodeI8 = decodeBFloat16AVX2, decodeInt8AVX2
	return k
}

// withBinary fills in the fastest binary kernels this CPU supports: 512-bit
// VPOPCNTQ when the AVX-512 set includes it, else the AVX2 nibble lookup
// (VPSHUFB), else scalar POPCNT, else Go.
func withBinary(k kernels, allowAVX512 bool) kernels {
	k.hammingBatch = nil
	switch {
	case allowAVX512 && cpu.X86.HasAVX512VPOPCNTDQ && cpu.X86.HasAVX512BW:
		k.binName, k.hamming, k.jaccard = "vpopcntq", hammingAVX512, jaccardAVX512
		k.hammingBatch = hammingBatchAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT:
		k.binName, k.hamming, k.jaccard = "vpshufb", hammingAVX2, jaccardAVX2
	case cpu.X86.HasPOPCNT:
		k.binName, k.hamming, k.jaccard = "popcnt", hammingPOPCNT, jaccardPOPCNT
	default:
		k.binName, k.hamming, k.jaccard = "generic", HammingGeneric, JaccardGeneric
	}
	if k.hammingBatch == nil {
		h := k.hamming
		k.hammingBatch = func(q, data []byte, out []float32) { hammingLoop(h, q, data, out) }
	}
	return k
}

// avx512Kernels is the AVX-512F implementation.
func avx512Kernels() kernels {
	return withHalf(withBinary(kernels{
		name:     "avx512",
		l2:       l2AVX512,
		dot:      dotAVX512,
		l2Batch:  func(q, data, out []float32) { batch4(q, data, out, l2Batch4AVX512, l2AVX512) },
		dotBatch: func(q, data, out []float32) { batch4(q, data, out, dotBatch4AVX512, dotAVX512) },
	}, true))
}

// avx2Kernels is the AVX2+FMA implementation.
func avx2Kernels() kernels {
	return withHalf(withBinary(kernels{
		name:     "avx2",
		l2:       l2AVX2,
		dot:      dotAVX2,
		l2Batch:  func(q, data, out []float32) { batch4(q, data, out, l2Batch4AVX2, l2AVX2) },
		dotBatch: func(q, data, out []float32) { batch4(q, data, out, dotBatch4AVX2, dotAVX2) },
	}, false))
}

// batch4 runs a four-row batch kernel over the largest multiple of four rows
// and the single-vector kernel over the rest. The shapes are already valid
// and len(q) > 0.
func batch4(q, data, out []float32, four func(q, data, out []float32), one func(a, b []float32) float32) {
	dim := len(q)
	n4 := len(out) &^ 3
	if n4 > 0 {
		four(q, data[:n4*dim], out[:n4])
	}
	for i := n4; i < len(out); i++ {
		out[i] = one(q, data[i*dim:(i+1)*dim])
	}
}

// selectKernels picks the widest implementation this CPU supports.
func selectKernels() kernels {
	ks := availableKernels()
	return ks[0]
}

// availableKernels lists every implementation usable on this CPU, preferred
// first; the generic one is always last.
func availableKernels() []kernels {
	var ks []kernels
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernels())
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernels())
	}
	return append(ks, genericKernels())
}
