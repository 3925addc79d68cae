package querynode

import (
	"math"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/plan"
)

// rowScorer scores the rows of one segment's vector column against the
// queries of a search by exact distance. Float16, BFloat16 and Int8 rows are
// widened to float32 a block at a time into a scratch buffer and scored with
// the float32 batch kernels, so the column stays in its compact form and
// scores equal those of the widened rows; binary rows are compared packed.
type rowScorer struct {
	req    *plan.Search
	qnorms []float32
	floats *column.FloatVectors
	bytes  *column.ByteVectors
	decode func(dst []float32, src []byte)
	buf    []float32
}

// widenBlock is how many compact rows are widened to float32 at a time.
const widenBlock = 256

// newRowScorer checks that the searched column matches the request.
func newRowScorer(c column.Column, req *plan.Search, qnorms []float32) (*rowScorer, error) {
	rs := &rowScorer{req: req, qnorms: qnorms}
	switch c := c.(type) {
	case *column.FloatVectors:
		rs.floats = c
	case *column.ByteVectors:
		rs.bytes, rs.decode = c, column.WidenFunc(c.T)
		rs.buf = make([]float32, widenBlock*c.Dim)
	default:
		return nil, errcode.Invalid("field %d is not a dense vector field", req.FieldID)
	}
	binary := rs.bytes != nil && rs.bytes.T == schemapb.DataType_BinaryVector
	if binary != (len(req.Binary) > 0) && req.NQ() > 0 {
		return nil, errcode.Invalid("the query vectors of field %d do not match its data type", req.FieldID)
	}
	return rs, nil
}

// score fills scores[i] for the first n rows where mask[i] is set, for
// query q, and clears mask[i] where the score is NaN.
func (rs *rowScorer) score(q, n int, mask []bool, scores []float32) error {
	if rs.floats != nil {
		dim := rs.floats.Dim
		if qv := rs.req.Vectors[q]; len(qv) != dim {
			return errcode.Invalid("the dimension of query vector %d is %d, the field's is %d", q, len(qv), dim)
		}
		scoreFloatRuns(rs.req.Metric, rs.req.Vectors[q], rs.qnorms[q], rs.floats, n, mask, scores)
		return nil
	}
	c := rs.bytes
	if rs.decode == nil {
		qv := rs.req.Binary[q]
		if len(qv) != c.Width {
			return errcode.Invalid("the dimension of query vector %d is %d, the field's is %d", q, 8*len(qv), c.Dim)
		}
		// Every row is scored (rows outside the mask are ignored by the
		// caller): the batch kernels beat a masked loop of single calls.
		switch rs.req.Metric {
		case plan.MetricJaccard:
			distance.JaccardBatch(qv, c.Data[:n*c.Width], scores[:n])
		case plan.MetricSubstructure, plan.MetricSuperstructure:
			structureScores(rs.req.Metric == plan.MetricSubstructure, qv, c, n, scores)
		default:
			distance.HammingBatch(qv, c.Data[:n*c.Width], scores[:n])
		}
		return nil
	}
	qv := rs.req.Vectors[q]
	if len(qv) != c.Dim {
		return errcode.Invalid("the dimension of query vector %d is %d, the field's is %d", q, len(qv), c.Dim)
	}
	for lo := 0; lo < n; lo += widenBlock {
		hi := min(lo+widenBlock, n)
		for i := lo; i < hi; i++ {
			if mask[i] {
				rs.decode(rs.buf[(i-lo)*c.Dim:(i-lo+1)*c.Dim], c.Row(i))
			}
		}
		block := &column.FloatVectors{Dim: c.Dim, Data: rs.buf[:(hi-lo)*c.Dim]}
		scoreFloatRuns(rs.req.Metric, qv, rs.qnorms[q], block, hi-lo, mask[lo:hi], scores[lo:hi])
	}
	return nil
}

// structureScores scores the first n rows of c for packed query q under a
// structure metric: 0 where the row matches — the query is a substructure
// of it (sub: q AND row == q) or a superstructure (q AND row == row) — and
// NaN, no hit for this query, where it does not.
func structureScores(sub bool, q []byte, c *column.ByteVectors, n int, scores []float32) {
	nan := float32(math.NaN())
	for i := range n {
		row := c.Row(i)
		match := true
		for j, b := range q {
			and := b & row[j]
			if sub && and != b || !sub && and != row[j] {
				match = false
				break
			}
		}
		if match {
			scores[i] = 0
		} else {
			scores[i] = nan
		}
	}
}
