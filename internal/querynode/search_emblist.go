package querynode

import (
	"math"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// searchEmbLists serves a search on an ArrayOfVector field, an
// embedding-list search (req.EmbLists, a MAX_SIM metric) or an
// element-level one (req.ElementLevel, see searchElements), by exact scan: every row of mask that
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
	queries := req.EmbLists
	if req.ElementLevel {
		queries = req.Vectors
	}
	for q, qv := range queries {
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
	if req.ElementLevel {
		return searchElements(v, req, c, mask, si, pkCol, heaps, groupCands)
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

// searchElements serves an element-level search: each vector of each row
// of mask is scored against each plain query vector by req.Metric (L2, IP
// or COSINE) and offered as a hit of its own (candidate.elem), so a row may
// take several of the top k places, as Milvus's element-level search
// returns them.
func searchElements(v *segment.View, req *plan.Search, c *column.VectorArrays, mask []bool, si int, pkCol column.Column,
	heaps []*hitHeap, groupCands [][]candidate,
) error {
	dim := c.Dim
	for q, qv := range req.Vectors {
		qnorm := distance.Norm(qv)
		for row, ok := range mask {
			if !ok {
				continue
			}
			r := c.Data[row]
			for j := range len(r) / dim {
				sc := elementScore(req.Metric, qv, qnorm, r[j*dim:(j+1)*dim])
				if math.IsNaN(float64(sc)) || !inRange(req, sc) {
					continue
				}
				cand := candidate{score: sc, seg: si, row: row, ts: v.Timestamp(row), pk: column.KeyAt(pkCol, row), elem: j + 1}
				if req.GroupByField != 0 {
					cand.group = column.GroupKey(v.Column(req.GroupByField), row)
					groupCands[q] = append(groupCands[q], cand)
					continue
				}
				heaps[q].offer(cand, req.TopK)
			}
		}
	}
	return nil
}

// elementScore scores one element vector against a plain query vector.
func elementScore(metric string, q []float32, qnorm float32, e []float32) float32 {
	switch metric {
	case plan.MetricL2:
		return distance.L2Squared(q, e)
	case plan.MetricIP:
		return distance.Dot(q, e)
	}
	en := distance.Norm(e)
	if qnorm == 0 || en == 0 {
		return 0
	}
	return distance.Dot(q, e) / (qnorm * en)
}
