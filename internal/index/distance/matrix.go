package distance

import "fmt"

// matrixKernels is one implementation of the streaming sum and of the
// many-query dot-product tile. A tile kernel scores rows consecutive rows of
// x against every query of groups packed groups of four (see packQueries)
// and stores the dot product of query i and row j at out[i*ostride+j]; it
// requires len(x) == rows*dim and dim > 0. next holds the rows the following
// call will score (empty for the last), which a kernel may prefetch.
type matrixKernels struct {
	name  string
	sum   func(v []float32) float32
	fma   func(n int) // n iterations of fmaFlops floating-point operations
	flops int         // per fma iteration; 0 when fma is nil
	lanes int         // floats per query chunk in a packed group; 0 when tile is nil
	rows  int         // rows per tile
	tile  func(x []float32, dim int, q []float32, groups int, out []float32, ostride int, next []float32)
	// panel, when set, is the GEMM-style kernel preferred for whole panels
	// of panelQ queries: it scores panelR consecutive rows of x against
	// every query of panels packed panels (see packPanels) and stores and
	// prefetches like tile; it requires len(x) == panelR*dim and dim > 0.
	panel  func(x []float32, dim int, q []float32, panels int, out []float32, ostride int, next []float32)
	panelQ int // queries per packed panel: the lanes of the query registers
	panelR int // rows per panel call
	// below, when set, is FirstL2Below over the whole 16-float chunks of
	// dots: it returns len(dots)&^15 when none of them qualifies.
	below func(dots, sq []float32, thr float32) int
}

// genericMatrix is the portable implementation: no tile kernel, so every
// query is scored with the batched single-query kernel.
func genericMatrix() matrixKernels { return matrixKernels{name: "generic", sum: SumGeneric} }

// mimpl is the CPU-dispatch table of the matrix kernels, written once during
// package initialisation.
var mimpl = selectMatrix()

// Sum returns the sum of the elements of v. The assembly versions stream v
// through eight independent accumulators, so on a slice larger than the
// caches Sum runs at the core's memory read bandwidth; internal/bench uses it
// to measure that bandwidth.
func Sum(v []float32) float32 { return mimpl.sum(v) }

// FMALoop runs iters iterations of a loop of independent fused multiply-adds
// on registers only, as wide and as many as the selected implementation
// keeps in flight, and returns the floating-point operations done (2 per
// lane per FMA), or 0 when there is no assembly implementation. Timing it
// gives the core's peak arithmetic rate, the limit of compute-bound kernels
// such as DotMatrix; internal/bench reports it.
func FMALoop(iters int) int {
	if mimpl.fma == nil || iters <= 0 {
		return 0
	}
	mimpl.fma(iters)
	return iters * mimpl.flops
}

// SumGeneric is the portable reference for Sum.
func SumGeneric(v []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(v); i += 4 {
		x := v[i : i+4 : i+4]
		s0 += x[0]
		s1 += x[1]
		s2 += x[2]
		s3 += x[3]
	}
	for ; i < len(v); i++ {
		s0 += v[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Queries is a set of query vectors prepared for scoring many queries
// against the same rows at once (DotMatrix). Preparing copies the queries
// into the layouts of the assembly kernels: with AVX-512, panels of 48
// queries stored coordinate-major for the panel kernel (queries in the
// register lanes, rows broadcast), and the rest in groups of four whose
// coordinates are interleaved in register-width chunks for the tile kernel.
// Either way a tile of rows × queries of partial sums stays in registers:
// each value loaded from memory serves several products, so the scan is
// bound by arithmetic rather than memory bandwidth. A Queries is read-only
// after NewQueries and safe for concurrent use.
type Queries struct {
	dim, n int
	raw    []float32
	panel  []float32 // the first panels*k.panelQ queries, packPanels
	panels int
	packed []float32 // the next groups*4 queries, packQueries
	groups int
	k      matrixKernels
}

// NewQueries prepares the len(q)/dim row-major queries in q. It panics
// unless dim > 0 and len(q) is a multiple of dim. q is referenced, not
// copied, and must not change while the Queries is in use.
func NewQueries(q []float32, dim int) *Queries {
	if dim <= 0 || len(q)%dim != 0 {
		panic(fmt.Sprintf("distance: %d query floats are not a whole number of vectors of dimension %d", len(q), dim))
	}
	return newQueries(q, dim, mimpl)
}

func newQueries(q []float32, dim int, k matrixKernels) *Queries {
	qs := &Queries{dim: dim, n: len(q) / dim, raw: q, k: k}
	if k.panel != nil {
		qs.panels = qs.n / k.panelQ
		qs.panel = packPanels(q, dim, k.panelQ, qs.panels)
	}
	if k.tile != nil {
		rest := q[qs.panels*k.panelQ*dim:]
		qs.groups = len(rest) / dim / 4
		qs.packed = packQueries(rest, dim, k.lanes, qs.groups)
	}
	return qs
}

// Len returns the number of queries.
func (qs *Queries) Len() int { return qs.n }

// Dim returns the dimension of the queries.
func (qs *Queries) Dim() int { return qs.dim }

// Query returns query i.
func (qs *Queries) Query(i int) []float32 { return qs.raw[i*qs.dim : (i+1)*qs.dim] }

// DotMatrix computes, for the nx = len(x)/dim row-major rows in x,
// out[i*nx+j] = Dot(query i, row j). It panics unless len(x) is a multiple
// of the dimension and len(out) == Len()*nx. Results may differ from Dot in
// the last bits because the tile kernel sums in another order.
func (qs *Queries) DotMatrix(x, out []float32) {
	dim := qs.dim
	if len(x)%dim != 0 || len(out) != qs.n*(len(x)/dim) {
		panic(fmt.Sprintf("distance: DotMatrix shapes: %d queries, %d row floats of dimension %d, %d outputs",
			qs.n, len(x), dim, len(out)))
	}
	nx := len(x) / dim
	if nx == 0 {
		return
	}
	// Queries [0, done) go through the panel kernel, the next groups*4
	// through the tile kernel, the rest through the single-query kernel, as
	// do the rows past a multiple of each kernel's height.
	done := qs.panels * qs.k.panelQ
	if qs.panels > 0 {
		pr := qs.k.panelR
		full := nx / pr * pr
		for j := 0; j < full; j += pr {
			next := x[(j+pr)*dim : min(j+2*pr, nx)*dim]
			qs.k.panel(x[j*dim:(j+pr)*dim], dim, qs.panel, qs.panels, out[j:], nx, next)
		}
		qs.rowTail(x, full, 0, done, out)
	}
	if qs.groups > 0 {
		rows := qs.k.rows
		full := nx / rows * rows
		o := out[done*nx:]
		for j := 0; j < full; j += rows {
			next := x[(j+rows)*dim : min(j+2*rows, nx)*dim]
			qs.k.tile(x[j*dim:(j+rows)*dim], dim, qs.packed, qs.groups, o[j:], nx, next)
		}
		qs.rowTail(x, full, done, done+qs.groups*4, out)
		done += qs.groups * 4
	}
	qs.rowTail(x, 0, done, qs.n, out)
}

// rowTail scores queries [qlo, qhi) against the rows of x from row lo on
// with the batched single-query kernel.
func (qs *Queries) rowTail(x []float32, lo, qlo, qhi int, out []float32) {
	dim, nx := qs.dim, len(x)/qs.dim
	if lo == nx {
		return
	}
	for i := qlo; i < qhi; i++ {
		impl.dotBatch(qs.Query(i), x[lo*dim:], out[i*nx+lo:(i+1)*nx])
	}
}

// DotMatrixGeneric is the portable reference for Queries.DotMatrix over
// the len(q)/dim queries in q.
func DotMatrixGeneric(q, x []float32, dim int, out []float32) {
	nq, nx := len(q)/dim, len(x)/dim
	for i := range nq {
		for j := range nx {
			out[i*nx+j] = DotGeneric(q[i*dim:(i+1)*dim], x[j*dim:(j+1)*dim])
		}
	}
}

// SquaredNorms sets out[j] = Dot(row j, row j) for the len(out) row-major
// rows of dimension dim in x. It panics unless len(x) == dim*len(out).
func SquaredNorms(x []float32, dim int, out []float32) {
	if dim < 0 || len(x) != dim*len(out) {
		panic(fmt.Sprintf("distance: SquaredNorms shapes: %d floats, dimension %d, %d outputs", len(x), dim, len(out)))
	}
	for j := range out {
		r := x[j*dim : (j+1)*dim]
		out[j] = impl.dot(r, r)
	}
}

// packQueries copies the first groups*4 queries of q into groups of four:
// for every chunk of lanes coordinates in turn, the chunk of each of the
// four queries, zero-padded past dim. A group is ceil(dim/lanes)*4*lanes
// floats.
func packQueries(q []float32, dim, lanes, groups int) []float32 {
	steps := (dim + lanes - 1) / lanes
	out := make([]float32, groups*steps*4*lanes)
	for g := range groups {
		for i := range 4 {
			v := q[(4*g+i)*dim : (4*g+i+1)*dim]
			for s := range steps {
				lo := s * lanes
				copy(out[((g*steps+s)*4+i)*lanes:], v[lo:min(lo+lanes, dim)])
			}
		}
	}
	return out
}

// packPanels copies the first panels*width queries of q into panels of
// width queries: a panel holds, for every coordinate in turn, that
// coordinate of each of its queries, so it is dim*width floats.
func packPanels(q []float32, dim, width, panels int) []float32 {
	out := make([]float32, panels*dim*width)
	for p := range panels {
		dst := out[p*dim*width : (p+1)*dim*width]
		for i := range width {
			v := q[(p*width+i)*dim : (p*width+i+1)*dim]
			for c, f := range v {
				dst[c*width+i] = f
			}
		}
	}
	return out
}

// FirstL2Below returns the first j with sq[j] - 2*dots[j] <= thr, or
// len(dots) when there is none; NaN keys never qualify. It panics unless
// len(sq) >= len(dots). Many-query L2 search ranks rows by these keys
// (||x||² - 2 x·q) and uses it to skip the rows that cannot enter a full
// top-k list; the assembly versions test sixteen keys at a time. Keys are
// computed exactly as the scalar expression (doubling is exact).
func FirstL2Below(dots, sq []float32, thr float32) int {
	sq = sq[:len(dots)]
	j := 0
	if mimpl.below != nil && len(dots) >= 16 {
		j = mimpl.below(dots, sq, thr)
		if j < len(dots)&^15 {
			return j
		}
	}
	return j + FirstL2BelowGeneric(dots[j:], sq[j:], thr)
}

// FirstL2BelowGeneric is the portable reference for FirstL2Below.
func FirstL2BelowGeneric(dots, sq []float32, thr float32) int {
	sq = sq[:len(dots)]
	for j, d := range dots {
		if sq[j]-2*d <= thr {
			return j
		}
	}
	return len(dots)
}
