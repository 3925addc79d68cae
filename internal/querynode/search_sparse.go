package querynode

import (
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// decodeSparseQueries decodes the sparse query vectors of req, once per
// search.
func decodeSparseQueries(req *plan.Search) []sparse.Vector {
	queries := make([]sparse.Vector, len(req.Sparse))
	for q, row := range req.Sparse {
		queries[q] = sparse.Decode(row)
	}
	return queries
}

// searchSparse searches one segment view for the sparse query vectors of
// req (decoded: queries): through the segment's sparse index when it has one and the request
// is a plain top-k, otherwise exactly (inner product with every row). Only
// rows with a positive score are hits, as in Milvus and in the index.
//
// A full-text search (req.BM25 set) scores rows by BM25 with b instead; its
// queries are the weighted ones bm25Queries returns, and its mask may be
// nil (every row allowed).
func searchSparse(v *segment.View, req *plan.Search, queries []sparse.Vector, b sparse.BM25, mask []bool, si int, pkCol column.Column,
	heaps []*hitHeap, groupCands [][]candidate,
) error {
	if ai, ok := v.Index(req.FieldID).(*attachedIndex); ok && ai.sparse != nil && ai.metric == req.Metric &&
		!req.HasRadius && !req.HasRange && !req.HasAfter && req.GroupByField == 0 {
		p := sparse.SearchParams{DropRatioSearch: req.DropRatioSearch, RefineFactor: req.RefineFactor}
		for q, qv := range queries {
			var hits []index.Hit
			var err error
			if req.BM25 != nil {
				hits, err = ai.sparse.SearchBM25(qv, req.TopK, b, p, mask)
			} else {
				hits, err = ai.sparse.Search(qv, req.TopK, p, mask)
			}
			if err != nil {
				return errcode.Invalid("%v", err)
			}
			for _, hit := range hits {
				row := int(hit.Row)
				heaps[q].offer(candidate{score: hit.Score, seg: si, row: row, ts: v.Timestamp(row), pk: column.KeyAt(pkCol, row)}, req.TopK)
			}
		}
		return nil
	}
	col, ok := v.Column(req.FieldID).(*column.SparseVectors)
	if !ok {
		return errcode.Invalid("field %d is not a sparse float vector field", req.FieldID)
	}
	n := v.Len()
	scores := make([]float32, n)
	hit := make([]bool, n)
	for q, qv := range queries {
		for row := 0; row < n; row++ {
			hit[row] = false
			if mask == nil || mask[row] {
				if req.BM25 != nil {
					scores[row] = b.ScoreRow(qv, col.Data[row])
				} else {
					scores[row] = sparse.DotRow(qv, col.Data[row])
				}
				hit[row] = scores[row] > 0
			}
		}
		collectScores(v, req, si, pkCol, hit, scores, heaps[q], &groupCands[q])
	}
	return nil
}
