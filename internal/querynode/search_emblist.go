package querynode

import (
	"math"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// searchEmbLists serves an embedding-list search (req.EmbLists, a MAX_SIM
// metric) on an ArrayOfVector field by exact scan: every row of mask that
// holds at least one vector is scored with maxSim against each query and
// offered to the query's heap (or group-by candidates). Rows with an empty
// list are never hits. There is no index behind it: an index created on
// such a field (HNSW, ...) is accepted and recorded, and searches stay
// exact.
func searchEmbLists(v *segment.View, req *plan.Search, mask []bool, si int, pkCol column.Column,
	heaps []*hitHeap, groupCands [][]candidate,
) error {
	c, ok := v.Column(req.FieldID).(*column.VectorArrays)
	if !ok {
		return errcode.Invalid("field %d is not an array of vector field", req.FieldID)
	}
	for q, qv := range req.EmbLists {
		if c.Dim <= 0 || len(qv) == 0 || len(qv)%c.Dim != 0 {
			return errcode.Invalid("the query embedding list %d holds %d floats, not whole vectors of dim %d", q, len(qv), c.Dim)
		}
	}
	n := min(v.Len(), c.Len())
	for i := range mask {
		if i >= n || c.Count(i) == 0 {
			mask[i] = false
		}
	}
	qnorms := make([][]float32, len(req.EmbLists))
	for q, qv := range req.EmbLists {
		qnorms[q] = vectorNorms(qv, c.Dim)
	}
	scores := make([]float32, v.Len())
	for q, qv := range req.EmbLists {
		for row, ok := range mask {
			if ok {
				scores[row] = maxSim(req.Metric, qv, qnorms[q], c.Data[row], c.Dim)
				if math.IsNaN(float64(scores[row])) {
					mask[row] = false
				}
			}
		}
		collectScores(v, req, si, pkCol, mask, scores, heaps[q], &groupCands[q])
	}
	return nil
}

// vectorNorms returns the L2 norm of each dim-sized vector of x.
func vectorNorms(x []float32, dim int) []float32 {
	out := make([]float32, len(x)/dim)
	for i := range out {
		out[i] = distance.Norm(x[i*dim : (i+1)*dim])
	}
	return out
}

// maxSim scores the embedding list doc against the query list query (both
// dim-sized vectors back to back; qnorms are the query vectors' norms) under
// a MAX_SIM metric: the sum over the query vectors of the best match among
// doc's vectors, the largest cosine similarity (MAX_SIM, MAX_SIM_COSINE) or
// inner product (MAX_SIM_IP), or the smallest squared L2 distance
// (MAX_SIM_L2). A zero vector's cosine similarity is 0.
func maxSim(metric string, query, qnorms, doc []float32, dim int) float32 {
	m := len(doc) / dim
	var dnorms []float32
	if metric != plan.MetricMaxSimL2 && metric != plan.MetricMaxSimIP {
		dnorms = vectorNorms(doc, dim)
	}
	var total float32
	for i := range qnorms {
		qv := query[i*dim : (i+1)*dim]
		best := float32(math.Inf(-1))
		if metric == plan.MetricMaxSimL2 {
			best = float32(math.Inf(1))
		}
		for j := range m {
			dv := doc[j*dim : (j+1)*dim]
			switch metric {
			case plan.MetricMaxSimL2:
				best = min(best, distance.L2Squared(qv, dv))
			case plan.MetricMaxSimIP:
				best = max(best, distance.Dot(qv, dv))
			default:
				s := float32(0)
				if qnorms[i] != 0 && dnorms[j] != 0 {
					s = distance.Dot(qv, dv) / (qnorms[i] * dnorms[j])
				}
				best = max(best, s)
			}
		}
		total += best
	}
	return total
}
