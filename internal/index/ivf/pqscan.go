package ivf

import (
	"context"
	"unsafe"

	"github.com/strata-db/strata/internal/index/distance"
)

// PQMaxPrecomputedBytes bounds the precomputed IVF_PQ tables of an L2 index
// (Nlist*M*2^Nbits float32 values). They are also kept only while they take
// at most 1/8 of the raw float32 vectors (n*dim*4 bytes), so that they never
// dominate the index: small segments with many lists build the table of
// each probed list from the query's residual instead.
const PQMaxPrecomputedBytes = 256 << 20

// usePQPre reports whether an L2 PQ index keeps precomputed tables.
func (x *Index) usePQPre() bool {
	b := int64(x.cfg.Nlist) * int64(x.cfg.M) * int64(x.ksub) * 4
	return x.cfg.Kind == PQ && !x.ip && b <= PQMaxPrecomputedBytes && b <= int64(x.n)*int64(x.dim)*4/8
}

// derivePQ computes what a PQ index derives from its codebooks and
// centroids rather than stores: the transposed codebooks and, when
// usePQPre allows, the precomputed L2 tables. Build and Unmarshal call it.
func (x *Index) derivePQ() {
	if x.cfg.Kind != PQ {
		return
	}
	m, ksub, dsub := x.cfg.M, x.ksub, x.dsub
	x.cbT = make([]float32, len(x.codebooks))
	for j := range m {
		cb, t := x.codebook(j), x.cbT[j*ksub*dsub:(j+1)*ksub*dsub]
		for c := range ksub {
			for d := range dsub {
				t[d*ksub+c] = cb[c*dsub+d]
			}
		}
	}
	x.cbNorm = make([]float32, m*ksub)
	for j := range m {
		cb := x.codebook(j)
		for c := range ksub {
			w := cb[c*dsub : (c+1)*dsub]
			x.cbNorm[j*ksub+c] = distance.Dot(w, w)
		}
	}
	x.precomputePQ()
}

// pqInnerTable sets tab[j*ksub+c] = scale * <v_j, codeword c of sub-space
// j> for every sub-space j, using a (at least len(v) floats) as scratch: one
// pqInner call per sub-space over the transposed codebook.
func (x *Index) pqInnerTable(v []float32, scale float32, a, tab []float32) {
	ksub, dsub := x.ksub, x.dsub
	for i, f := range v {
		a[i] = scale * f
	}
	for j := range x.cfg.M {
		pqInner(a[j*dsub:(j+1)*dsub], x.cbT[j*ksub*dsub:(j+1)*ksub*dsub], tab[j*ksub:(j+1)*ksub])
	}
}

// precomputePQ fills x.pqPre when usePQPre allows, and leaves it nil
// otherwise.
//
// With row = centroid c + residual r, and r quantised to codewords r_j per
// sub-space, the asymmetric L2 distance splits into
//
//	||q - c - r||^2 = ||q - c||^2 + sum_j (||r_j||^2 + 2<c_j, r_j>) - 2 sum_j <q_j, r_j>
//
// The first term is the coarse distance Search already has, the second
// depends only on the list and the code (pqPre, built here), and the third
// only on the query and the code (computed once per search). The table of a
// probed list is then the sum of two tables, not M*2^Nbits sub-vector
// distances.
func (x *Index) precomputePQ() {
	x.pqPre = nil
	if !x.usePQPre() {
		return
	}
	x.buildPQPre()
}

// buildPQPre computes x.pqPre unconditionally.
func (x *Index) buildPQPre() {
	m, ksub, dsub, nlist := x.cfg.M, x.ksub, x.dsub, x.cfg.Nlist
	sz := m * ksub
	norms := x.cbNorm
	pre := make([]float32, nlist*sz)
	parallelFor(context.Background(), nlist, workerCount(x.cfg.Workers), func(lo, hi int) {
		for l := lo; l < hi; l++ {
			c := x.centroid(l)
			for j := range m {
				t := pre[l*sz+j*ksub : l*sz+(j+1)*ksub]
				distance.DotBatch(c[j*dsub:(j+1)*dsub], x.codebook(j), t)
				for i := range t {
					t[i] = 2*t[i] + norms[j*ksub+i]
				}
			}
		}
	})
	x.pqPre = pre
}

// pqBlock is the number of sub-spaces pqScan handles per pass over a
// list's rows: their tables (pqBlock KiB for 8-bit codes) stay in the L1
// cache while every row looks them up, where the whole table (M KiB, 98 KiB
// for Fashion-MNIST's m = 98) would not.
const pqBlock = 16

// pqScan writes base plus the table distance of every code in codes (M
// bytes each) to out: out[i] = base + sum_j tab[j*ksub + code_i[j]].
func pqScan(tab []float32, ksub int, codes []byte, m int, base float32, out []float32) {
	codes = codes[:len(out)*m]
	if ksub == 256 && m > 0 {
		_ = tab[m*256-1]
		for i := range out {
			out[i] = base
		}
		for j0 := 0; j0 < m; j0 += pqBlock {
			mb := min(pqBlock, m-j0)
			scanImpl.pqScan8(tab[j0*256:(j0+mb)*256], codes[j0:], mb, m, out)
		}
		return
	}
	for i := range out {
		c := codes[i*m : (i+1)*m : (i+1)*m]
		d := base
		for j, v := range c {
			d += tab[j*ksub+int(v)]
		}
		out[i] = d
	}
}

// pqScan8Generic is the reference for pqScan8, with four partial sums per
// row that break the dependency chain of the additions. Requires
// len(tab) >= m*256 and codes to hold len(out) rows of stride bytes, the
// last at least m.
func pqScan8Generic(tab []float32, codes []byte, m, stride int, out []float32) {
	if m == 0 {
		return
	}
	// One [256]float32 per sub-space: a byte code indexes it without a
	// bounds check.
	_ = tab[m*256-1]
	tt := unsafe.Slice((*[256]float32)(unsafe.Pointer(unsafe.SliceData(tab))), m)
	for i := range out {
		c := codes[i*stride : i*stride+m : i*stride+m]
		t := tt[:len(c)]
		var a0, a1, a2, a3 float32
		for ; len(c) >= 4 && len(t) >= 4; c, t = c[4:], t[4:] {
			a0 += t[0][c[0]]
			a1 += t[1][c[1]]
			a2 += t[2][c[2]]
			a3 += t[3][c[3]]
		}
		for j := range min(len(c), len(t)) {
			a0 += t[j][c[j]]
		}
		out[i] += (a0 + a1) + (a2 + a3)
	}
}
