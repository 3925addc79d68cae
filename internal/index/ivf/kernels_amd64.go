//go:build amd64 && !noasm

package ivf

import "golang.org/x/sys/cpu"

// Assembly kernels (kernels_amd64.s). The row kernels require len(q) to be
// a multiple of 16, len(scale) >= len(q) for the L2 ones, and codes to hold
// len(out) rows of stride >= len(q) bytes; add requires equal lengths that
// are a multiple of 16.

//go:noescape
func sq8L2AVX512(q, scale []float32, codes []byte, stride int, out []float32)

//go:noescape
func sq8DotAVX512(q, scale []float32, codes []byte, stride int, out []float32)

//go:noescape
func sq8L2AVX2(q, scale []float32, codes []byte, stride int, out []float32)

//go:noescape
func sq8DotAVX2(q, scale []float32, codes []byte, stride int, out []float32)

//go:noescape
func addAVX512(a, b, out []float32)

//go:noescape
func addAVX2(a, b, out []float32)

//go:noescape
func pqInnerAVX512(a, t, out []float32)

//go:noescape
func pqInnerAVX2(a, t, out []float32)

//go:noescape
func argminL2AVX2(dots, norms []float32, vals *[16]float32, idx *[16]int32)

//go:noescape
func pqScan8Asm(tab []float32, codes []byte, m, stride int, out []float32)

// selectScanKernels picks the widest implementation this CPU supports.
func selectScanKernels() scanKernels { return availableScanKernels()[0] }

// availableScanKernels lists every implementation usable on this CPU,
// preferred first; the generic one is always last.
func availableScanKernels() []scanKernels {
	var ks []scanKernels
	if cpu.X86.HasAVX512F {
		ks = append(ks, scanKernels{
			name: "avx512", sq8L2: sq8L2AVX512, sq8Dot: sq8DotAVX512, add: addAVX512, pqInner: pqInnerAVX512,
			pqScan8: pqScan8Asm2, argminL2: argminL2AVX2,
		})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, scanKernels{
			name: "avx2", sq8L2: sq8L2AVX2, sq8Dot: sq8DotAVX2, add: addAVX2, pqInner: pqInnerAVX2,
			pqScan8: pqScan8Asm2, argminL2: argminL2AVX2,
		})
	}
	return append(ks, genericScanKernels())
}

//go:noescape
func pqScan8x2Asm(tab []float32, codes []byte, m, stride int, out []float32)

// pqScan8Asm2 runs pqScan8x2Asm over pairs of rows and pqScan8Asm over
// the last row of an odd count.
func pqScan8Asm2(tab []float32, codes []byte, m, stride int, out []float32) {
	e := len(out) &^ 1
	if e > 0 {
		pqScan8x2Asm(tab, codes, m, stride, out[:e])
	}
	if e < len(out) {
		pqScan8Asm(tab, codes[e*stride:], m, stride, out[e:])
	}
}
