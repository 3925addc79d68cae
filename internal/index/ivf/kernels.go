package ivf

// List-scan kernels. Each exists as a pure-Go reference (the *Generic
// functions, used by noasm builds and other architectures) and, on amd64,
// as AVX-512 and AVX2 assembly in kernels_amd64.s, chosen once at package
// initialisation from the CPU features (see kernels_amd64.go).
//
// The row kernels score len(out) rows of 8-bit codes, row i at
// codes[i*stride:], against a query prepared once per search:
//
//   - sq8L2: out[i] = sum_j (q[j] - scale[j]*code[i][j])^2, the squared L2
//     distance to the decoded row when q is the query minus the
//     per-dimension minimum.
//   - sq8Dot: out[i] = sum_j q[j]*code[i][j], the inner product with the
//     decoded row less <query, minimum> when q is the query times the
//     per-dimension scale.
//
// Both read the first len(q) bytes of each row and never decode to float32
// vectors. add adds two tables element-wise (the IVF_PQ per-list table).
// pqInner computes the inner products of one query sub-vector a with every
// codeword of a sub-space stored transposed (dimension-major, t[d*n+c] is
// dimension d of codeword c), as len(a) scaled additions of contiguous rows.

// sqKernel is the shape of the SQ8 row kernels. scale is only read by
// sq8L2.
type sqKernel func(q, scale []float32, codes []byte, stride int, out []float32)

// scanKernels is one implementation of the list-scan kernels. The assembly
// ones require len(q) (and len(scale)) to be a multiple of 16 and the add
// length to be a multiple of 16; the wrappers below handle the rest.
type scanKernels struct {
	name   string
	sq8L2  sqKernel
	sq8Dot sqKernel
	add    func(a, b, out []float32)
	// pqInner sets out[c] = sum_d a[d]*t[d*len(out)+c]; the assembly
	// requires len(out) to be a multiple of 16.
	pqInner func(a, t, out []float32)
	// pqScan8 adds to out[i] the look-ups of sub-spaces 0..m-1 of row i
	// (row i at codes[i*stride:]) in the 8-bit tables tab (256 floats per
	// sub-space). The assembly is scalar SSE, two rows at a time with four
	// partial sums each, bit-identical to the reference.
	pqScan8 func(tab []float32, codes []byte, m, stride int, out []float32)
	// argminL2, when set, runs the argmin of the k-means assignment over
	// the whole 16-float chunks of dots in sixteen lanes: lane l keeps the
	// least key norms[c] - 2*dots[c] over c = l mod 16 and the first c with
	// it (+Inf and 0 when no key is below +Inf); see scanKernels.argmin.
	argminL2 func(dots, norms []float32, vals *[16]float32, idx *[16]int32)
}

// genericScanKernels is the portable implementation.
func genericScanKernels() scanKernels {
	return scanKernels{
		name: "generic", sq8L2: sq8L2Generic, sq8Dot: sq8DotGeneric, add: addGeneric,
		pqInner: pqInnerGeneric, pqScan8: pqScan8Generic,
	}
}

// scanImpl is the dispatch table, written once at initialisation.
var scanImpl = selectScanKernels()

// sq8L2Generic is the reference for sq8L2.
func sq8L2Generic(q, scale []float32, codes []byte, stride int, out []float32) {
	d := len(q)
	scale = scale[:d]
	for i := range out {
		row := codes[i*stride : i*stride+d]
		var s float32
		for j, c := range row {
			t := q[j] - scale[j]*float32(c)
			s += t * t
		}
		out[i] = s
	}
}

// sq8DotGeneric is the reference for sq8Dot.
func sq8DotGeneric(q, _ []float32, codes []byte, stride int, out []float32) {
	d := len(q)
	for i := range out {
		row := codes[i*stride : i*stride+d]
		var s float32
		for j, c := range row {
			s += q[j] * float32(c)
		}
		out[i] = s
	}
}

// addGeneric is the reference for add: out[i] = a[i] + b[i].
func addGeneric(a, b, out []float32) {
	a, b = a[:len(out)], b[:len(out)]
	for i := range out {
		out[i] = a[i] + b[i]
	}
}

// sq8Rows runs the row kernel k of impl over the first len(q)&^15 dimensions
// and finishes the remaining ones with the reference, so the assembly only
// sees whole 16-float chunks. stride is the row length in bytes, len(q).
func sq8Rows(k, ref sqKernel, q, scale []float32, codes []byte, out []float32) {
	dim := len(q)
	d16 := dim &^ 15
	if d16 == 0 {
		ref(q, scale, codes, dim, out)
		return
	}
	k(q[:d16], scale[:d16], codes, dim, out)
	if d16 == dim {
		return
	}
	for i := range out {
		var t [1]float32
		ref(q[d16:], scale[d16:], codes[i*dim+d16:(i+1)*dim], dim-d16, t[:])
		out[i] += t[0]
	}
}

// sq8L2 is the dispatched sq8L2 kernel over rows of len(q) bytes.
func sq8L2(q, scale []float32, codes []byte, out []float32) {
	sq8Rows(scanImpl.sq8L2, sq8L2Generic, q, scale, codes, out)
}

// sq8Dot is the dispatched sq8Dot kernel over rows of len(q) bytes.
func sq8Dot(q []float32, codes []byte, out []float32) {
	sq8Rows(scanImpl.sq8Dot, sq8DotGeneric, q, q, codes, out)
}

// addTables sets out = a + b element-wise; all three have equal length.
func addTables(a, b, out []float32) {
	n16 := len(out) &^ 15
	scanImpl.add(a[:n16], b[:n16], out[:n16])
	addGeneric(a[n16:], b[n16:], out[n16:])
}

// pqInnerGeneric is the reference for pqInner.
func pqInnerGeneric(a, t, out []float32) {
	n := len(out)
	clear(out)
	for d, v := range a {
		row := t[d*n : (d+1)*n]
		for c, w := range row {
			out[c] += v * w
		}
	}
}

// pqInner is the dispatched pqInner kernel.
func pqInner(a, t, out []float32) {
	if len(out)%16 != 0 {
		pqInnerGeneric(a, t, out)
		return
	}
	scanImpl.pqInner(a, t, out)
}

// SQ8L2 sets out[i] = sum_j (q[j] - scale[j]*codes[i*len(q)+j])^2 for the
// len(out) rows of len(q) code bytes in codes: the squared L2 distance of
// each row, decoded as minimum + scale*code, to the query when q is the
// query minus the per-dimension minimum. It runs the dispatched IVF_SQ8
// row kernel (AVX-512 or AVX2 where the CPU has it), exported for the
// scalar-quantized graphs of package hnsw.
func SQ8L2(q, scale []float32, codes []byte, out []float32) { sq8L2(q, scale, codes, out) }

// SQ8Dot sets out[i] = sum_j q[j]*codes[i*len(q)+j] for the len(out) rows
// of len(q) code bytes in codes: with q the query times the per-dimension
// scale, the inner product of the decoded row with the query less
// <query, minimum>. It runs the dispatched IVF_SQ8 row kernel.
func SQ8Dot(q []float32, codes []byte, out []float32) { sq8Dot(q, codes, out) }
