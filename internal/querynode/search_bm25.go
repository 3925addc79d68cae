package querynode

import (
	"context"
	"math"
	"slices"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/fanout"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// Full-text search statistics.
//
// A BM25 score depends on collection statistics: the number of documents,
// their average length and how many hold each query term. They are taken
// over every live row of the field at the read timestamp, in every loaded
// segment of the collection (sealed and growing, whatever partitions or
// filter the search names): rows deleted, expired or not yet visible do
// not count. So a document's score does not change when its segment is
// flushed, compacted or reloaded, and it equals that of an independent BM25
// over the same live documents and tokens.
//
// A search fanned out over several nodes (each leading some of the
// collection's shards) carries the sum of the nodes' statistics
// (plan.BM25.Stats, gathered with Node.BM25Stats), so that its scores are
// those of one node holding every shard.

// BM25Stats returns the statistics of a full-text search (its query terms,
// over the live rows of its field at the read timestamp, in the node's
// delegators of the read's vchannels), which a query coordinator sums over
// the nodes of a replica before it sends the search with them.
//
// The segments the node's delegators gave worker nodes count too: their
// statistics are asked of the workers and summed.
func (n *Node) BM25Stats(ctx context.Context, req *plan.Search) (*plan.BM25Stats, error) {
	v, err := n.view(ctx, &req.Read)
	if err != nil {
		return nil, err
	}
	defer v.close()
	if len(v.remote) == 0 {
		return v.bm25Stats(req)
	}
	return fanout.BM25Stats(ctx, req, v.parts())
}

// bm25Stats is BM25Stats over the view's own segments.
func (v *readView) bm25Stats(req *plan.Search) (*plan.BM25Stats, error) {
	return bm25Stats(v.all(), v.ts, v.expire, req.FieldID, queryTerms(decodeSparseQueries(req)))
}

// queryTerms lists the terms of the queries, sorted and distinct.
func queryTerms(queries []sparse.Vector) []uint32 {
	var dims []uint32
	for _, q := range queries {
		dims = append(dims, q.Indices...)
	}
	slices.Sort(dims)
	return slices.Compact(dims)
}

// bm25Stats gathers the statistics of field fieldID for terms dims over
// the live rows at ts of segments.
func bm25Stats(segs []*segment.Segment, ts, expire uint64, fieldID int64, dims []uint32) (*plan.BM25Stats, error) {
	st := sparse.Stats{DF: make([]int64, len(dims))}
	for _, s := range segs {
		err := s.Read(func(v *segment.View) error {
			mask, err := liveRows(v, &plan.Read{}, ts, expire, nil)
			if err != nil {
				return err
			}
			return segmentBM25Stats(v, fieldID, dims, mask, &st)
		})
		if err != nil {
			return nil, err
		}
	}
	return &plan.BM25Stats{Rows: st.Rows, TotalLen: st.TotalLen, Terms: dims, DF: st.DF}, nil
}

// bm25Queries turns the term-frequency queries of a full-text search into
// query weights (frequency × IDF) and returns the scoring parameters,
// with the statistics the request carries, or else those over the
// view's segments; ok is false when the collection holds no document to
// score (no hits then).
func (v *readView) bm25Queries(req *plan.Search) ([]sparse.Vector, sparse.BM25, bool, error) {
	queries := decodeSparseQueries(req)
	stats := req.BM25.Stats
	if stats == nil {
		var err error
		if stats, err = bm25Stats(v.all(), v.ts, v.expire, req.FieldID, queryTerms(queries)); err != nil {
			return nil, sparse.BM25{}, false, err
		}
	} else if len(stats.DF) != len(stats.Terms) {
		return nil, sparse.BM25{}, false, errcode.Invalid("BM25 statistics hold %d document frequencies for %d terms", len(stats.DF), len(stats.Terms))
	}
	st := sparse.Stats{Rows: stats.Rows, TotalLen: stats.TotalLen}
	avgdl := st.Avgdl()
	if st.Rows == 0 || avgdl <= 0 {
		return nil, sparse.BM25{}, false, nil
	}
	for qi, q := range queries {
		w := sparse.Vector{Indices: q.Indices, Values: make([]float32, len(q.Values))}
		for j, d := range q.Indices {
			var df int64
			if i, found := slices.BinarySearch(stats.Terms, d); found {
				df = stats.DF[i]
			}
			w.Values[j] = float32(q.Values[j] * float32(st.IDF(df)))
		}
		queries[qi] = w
	}
	b := sparse.BM25{K1: float32(req.BM25.K1), B: float32(req.BM25.B), Avgdl: float32(avgdl)}
	if math.IsInf(float64(b.Avgdl), 0) {
		return nil, sparse.BM25{}, false, errcode.Invalid("the average document length of field %d overflows", req.FieldID)
	}
	return queries, b, true, nil
}

// liveRows is searchMask for full-text searches, which read every row
// whatever its function output: the read-only mask of the rows visible at
// ts, not expired and matching e (nil = every row).
func liveRows(v *segment.View, r *plan.Read, ts, expire uint64, e *expr.Expr) ([]bool, error) {
	mask, _, err := searchMask(v, r, ts, expire, e, 0)
	return mask, err
}

// segmentBM25Stats adds the live rows (mask) of field fieldID in one
// segment view to st: through its sparse index when it has one, otherwise
// row by row.
func segmentBM25Stats(v *segment.View, fieldID int64, dims []uint32, mask []bool, st *sparse.Stats) error {
	if ai, ok := v.Index(fieldID).(*attachedIndex); ok && ai.sparse != nil {
		if err := ai.sparse.Stats(dims, mask, st); err != nil {
			return errcode.New(errcode.Unexpected, "%v", err)
		}
		return nil
	}
	col, ok := v.Column(fieldID).(*column.SparseVectors)
	if !ok {
		return errcode.Invalid("field %d is not a sparse float vector field", fieldID)
	}
	for row := range col.Data {
		if mask != nil && !mask[row] {
			continue
		}
		if col.IsNull(row) {
			st.RowStats(dims, nil)
			continue
		}
		st.RowStats(dims, col.Data[row])
	}
	return nil
}
