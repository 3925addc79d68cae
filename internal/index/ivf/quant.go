package ivf

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/strata-db/strata/internal/index/distance"
)

// trainSQ sets the per-dimension SQ8 range to the minimum and maximum of
// the training rows; values outside it are clamped when encoded.
func (x *Index) trainSQ(train []float32) {
	dim := x.dim
	x.sqMin = make([]float32, dim)
	x.sqScale = make([]float32, dim)
	n := len(train) / dim
	if n == 0 {
		return
	}
	hi := make([]float32, dim)
	copy(x.sqMin, train[:dim])
	copy(hi, train[:dim])
	for i := 1; i < n; i++ {
		for j, v := range train[i*dim : (i+1)*dim] {
			x.sqMin[j] = min(x.sqMin[j], v)
			hi[j] = max(hi[j], v)
		}
	}
	for j := range dim {
		x.sqScale[j] = (hi[j] - x.sqMin[j]) / 255
	}
}

// encodeSQ writes the 8-bit code of v, rounding to the nearest level.
func (x *Index) encodeSQ(v []float32, code []byte) {
	for j, f := range v {
		s := x.sqScale[j]
		if s == 0 {
			code[j] = 0
			continue
		}
		c := math.Round(float64((f - x.sqMin[j]) / s))
		code[j] = byte(min(max(c, 0), 255))
	}
}

// decodeSQ writes the vector that code stands for to out.
func (x *Index) decodeSQ(code []byte, out []float32) {
	lo, sc := x.sqMin[:len(out)], x.sqScale[:len(out)]
	for j, c := range code[:len(out)] {
		out[j] = lo[j] + float32(c)*sc[j]
	}
}

// trainPQ trains one codebook of ksub centroids per sub-space on the
// residual rows in resid. The codebooks are always seeded with random
// sample rows, as faiss seeds them, whatever Config.Init says (it applies
// to the coarse centroids): in the low-dimensional sub-spaces D² sampling
// spends codewords on outliers, and random seeding follows the density.
// On the test fixture (20,000×64, m=8) it raises recall@10 at full probe
// from 0.751 to 0.770, and it skips the 2^Nbits sequential seeding passes
// per sub-space.
//
// It returns ctx.Err() soon after ctx ends.
func (x *Index) trainPQ(ctx context.Context, resid []float32, rng *rand.Rand) error {
	m, dim, dsub, ksub := x.cfg.M, x.dim, x.dsub, x.ksub
	cfg := x.cfg
	cfg.Init = InitRandom
	n := len(resid) / dim
	x.codebooks = make([]float32, m*ksub*dsub)
	sub := make([]float32, n*dsub)
	for j := range m {
		for i := range n {
			copy(sub[i*dsub:(i+1)*dsub], resid[i*dim+j*dsub:i*dim+(j+1)*dsub])
		}
		cb, _, err := kmeans(ctx, sub, dsub, ksub, cfg, lloyd{}, rng)
		if err != nil {
			return err
		}
		copy(x.codebooks[j*ksub*dsub:], cb)
	}
	return nil
}

// codebook returns the ksub centroids of sub-space j, row-major.
func (x *Index) codebook(j int) []float32 {
	sz := x.ksub * x.dsub
	return x.codebooks[j*sz : (j+1)*sz]
}

// encodePQ writes the PQ code of the residual res: for every sub-space the
// index of its nearest codeword. buf has ksub entries of scratch.
func (x *Index) encodePQ(res []float32, code []byte, buf []float32) {
	dsub := x.dsub
	for j := range code {
		distance.L2SquaredBatch(res[j*dsub:(j+1)*dsub], x.codebook(j), buf)
		best, bd := 0, buf[0]
		for c, d := range buf[1:] {
			if d < bd {
				best, bd = c+1, d
			}
		}
		code[j] = byte(best)
	}
}
