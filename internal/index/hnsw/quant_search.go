package hnsw

import (
	"context"
	"math"
	"runtime"
	"slices"

	"github.com/strata-db/strata/internal/index/quant"
)

// quantize replaces the float32 vectors the graph was built with by the
// encoding of Config.Quant, and builds the refine store when asked. The
// graph itself is built on the exact vectors, so quantization costs only
// the accuracy of the distances a search computes, not graph quality. An
// FP32 refine store takes over the float32 vectors instead of copying
// them.
func (x *Index) quantize(ctx context.Context) error {
	qc := x.cfg.Quant
	workers := x.cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := x.n * x.dim
	vecs := x.vecs[:n:n]
	qz := quant.New(qc.Kind, x.dim, qc.M, qc.Nbits)
	if err := qz.Train(ctx, vecs, x.cfg.Workers, x.cfg.Seed); err != nil {
		return err
	}
	if err := qz.Encode(ctx, vecs, workers); err != nil {
		return err
	}
	if qc.Refine {
		rf := quant.New(qc.RefineType, x.dim, 0, 0)
		if err := rf.Train(ctx, vecs, x.cfg.Workers, x.cfg.Seed); err != nil {
			return err
		}
		if rf.Kind() == quant.FP32 {
			rf.Adopt(vecs)
		} else if err := rf.Encode(ctx, vecs, workers); err != nil {
			return err
		}
		x.rf = rf
	}
	// A quantized index takes no more rows: the build's locks go too.
	x.qz, x.vecs, x.locks = qz, nil, nil
	return nil
}

// Quant returns the encoding the graph is searched with: FP32 for a plain
// HNSW index.
func (x *Index) Quant() QuantConfig { return x.cfg.Quant }

// DefaultRefineK is the refine_k of a search that gives none: the k best
// candidates by quantized distance are re-ranked.
const DefaultRefineK = 1

// candidates returns how many candidates a search for k hits collects
// before refinement: ceil(k*refineK) with a refine store, else k.
func (x *Index) candidates(k int, refineK float64) int {
	if x.rf == nil || k == 0 {
		return k
	}
	if refineK < 1 {
		refineK = DefaultRefineK
	}
	c := math.Ceil(float64(k) * refineK)
	return int(min(c, float64(max(x.n, k))))
}

// refine re-scores items (the best candidates by quantized distance) with
// the refine store and returns them sorted by the refined distance.
func (x *Index) refine(q []float32, items []item, s *scratch) []item {
	s.rq.Prepare(x.rf, q, x.ip)
	for i := range items {
		items[i].d = s.rq.Dist(items[i].id)
	}
	slices.SortFunc(items, cmpItem)
	return items
}
