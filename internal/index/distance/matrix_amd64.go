//go:build amd64 && !noasm

package distance

import "golang.org/x/sys/cpu"

//go:noescape
func sumAVX512(v []float32) float32

//go:noescape
func sumAVX2(v []float32) float32

// fmaLoopAVX512 runs n iterations of 24 independent 16-lane FMAs.
func fmaLoopAVX512(n int)

// fmaLoopAVX2 runs n iterations of 12 independent 8-lane FMAs.
func fmaLoopAVX2(n int)

// dotTileAVX512 is the AVX-512F tile kernel: six rows, 16 lanes, and a
// prefetch of the next tile's rows.
//
//go:noescape
func dotTileAVX512(x []float32, dim int, q []float32, groups int, out []float32, ostride int, next []float32)

// dotPanelAVX512 is the AVX-512F panel kernel: eight rows, panels of 48
// queries held in the lanes of three registers, and a prefetch of the next
// call's rows.
//
//go:noescape
func dotPanelAVX512(x []float32, dim int, q []float32, panels int, out []float32, ostride int, next []float32)

// firstBelowL2AVX512 is FirstL2Below over the whole 16-float chunks of
// dots (see matrixKernels.below).
//
//go:noescape
func firstBelowL2AVX512(dots, sq []float32, thr float32) int

// dotTileAVX2 is the AVX2+FMA tile kernel: three rows, 8 lanes, with mask
// selecting the last dim%8 lanes for VMASKMOVPS.
//
//go:noescape
func dotTileAVX2(x []float32, dim int, q []float32, groups int, out []float32, ostride int, mask []int32)

// tailMasks8[r] has r all-ones lanes followed by 8-r zero lanes.
var tailMasks8 = func() (m [8][]int32) {
	for r := range m {
		m[r] = make([]int32, 8)
		for i := range r {
			m[r][i] = -1
		}
	}
	return m
}()

// avx512Matrix is the AVX-512F implementation.
func avx512Matrix() matrixKernels {
	k := avx512TileMatrix()
	k.name, k.panel, k.panelQ, k.panelR, k.below = "avx512", dotPanelAVX512, 48, 8, firstBelowL2AVX512
	return k
}

// avx512TileMatrix is the AVX-512F implementation without the panel
// kernel: every query goes through the tile kernel. It is kept for
// comparison and so that tests cover the tile kernel on many queries.
func avx512TileMatrix() matrixKernels {
	return matrixKernels{
		name: "avx512-tile", sum: sumAVX512, fma: fmaLoopAVX512, flops: 24 * 16 * 2,
		lanes: 16, rows: 6, tile: dotTileAVX512,
	}
}

// firstBelowL2AVX2 is FirstL2Below over the whole 16-float chunks of dots
// (see matrixKernels.below), two 8-lane compares per step.
//
//go:noescape
func firstBelowL2AVX2(dots, sq []float32, thr float32) int

// dotPanelAVX2 is the AVX2+FMA panel kernel: four rows, panels of 24
// queries held in the lanes of three registers, and a prefetch of the next
// call's rows.
//
//go:noescape
func dotPanelAVX2(x []float32, dim int, q []float32, panels int, out []float32, ostride int, next []float32)

// avx2Matrix is the AVX2+FMA implementation.
func avx2Matrix() matrixKernels {
	k := avx2TileMatrix()
	k.name, k.panel, k.panelQ, k.panelR = "avx2", dotPanelAVX2, 24, 4
	return k
}

// avx2TileMatrix is the AVX2+FMA implementation without the panel kernel,
// kept for comparison and so that tests cover the tile kernel on many
// queries.
func avx2TileMatrix() matrixKernels {
	return matrixKernels{
		name: "avx2-tile", sum: sumAVX2, fma: fmaLoopAVX2, flops: 12 * 8 * 2, lanes: 8, rows: 3,
		below: firstBelowL2AVX2,
		tile: func(x []float32, dim int, q []float32, groups int, out []float32, ostride int, _ []float32) {
			dotTileAVX2(x, dim, q, groups, out, ostride, tailMasks8[dim%8])
		},
	}
}

// selectMatrix picks the widest matrix implementation this CPU supports.
func selectMatrix() matrixKernels { return availableMatrix()[0] }

// availableMatrix lists every matrix implementation usable on this CPU,
// preferred first; the generic one is always last.
func availableMatrix() []matrixKernels {
	var ks []matrixKernels
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Matrix(), avx512TileMatrix())
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Matrix(), avx2TileMatrix())
	}
	return append(ks, genericMatrix())
}
