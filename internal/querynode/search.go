package querynode

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/fanout"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/flat"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// candidate is a hit before output fields are gathered.
type candidate struct {
	score float32
	seg   int // index into the segment list
	row   int
	ts    uint64
	pk    any
	group any // group-by value (nil = null)
	// elem is 1 + the element offset of an element-level hit (0 otherwise):
	// such hits of one primary key are distinct candidates.
	elem int
}

// elemKey tells the element-level hits of one primary key apart.
type elemKey struct {
	pk   any
	elem int
}

// key is what the hit heap deduplicates c by.
func (c candidate) key() any {
	if c.elem == 0 {
		return c.pk
	}
	return elemKey{c.pk, c.elem}
}

// groupHits keeps the best TopK groups with up to GroupSize hits each,
// ordered by each group's best score, then by score within the group
// (plan.TopGroups, the reduce the query coordinator applies again across
// nodes).
func groupHits(cands []candidate, req *plan.Search, better func(a, b float32) bool) []candidate {
	sortBest(cands, better)
	return plan.TopGroups(cands, func(c candidate) any { return c.group }, req.TopK, req.GroupSize, req.StrictGroupSize)
}

// sortBest sorts candidates best first, the lower primary key on a tie.
func sortBest(cands []candidate, better func(a, b float32) bool) {
	plan.SortBest(cands, func(c candidate) float32 { return c.score }, func(c candidate) any { return c.pk }, better)
}

// hitHeap keeps the k best candidates with the worst on top, one per
// primary key (its best-scoring row, the one inserted last on a tie), so
// rows that share a key never crowd other keys out of the top k: a search
// returns limit distinct keys when the collection has them, each key with
// its most similar row, as Milvus's reduce does (it skips a key already
// taken while merging best first).
type hitHeap struct {
	items  []candidate
	better func(a, b float32) bool
	at     map[any]int // candidate key (primary key, or key and element) → index in items
}

func (h *hitHeap) Len() int           { return len(h.items) }
func (h *hitHeap) Less(i, j int) bool { return h.better(h.items[j].score, h.items[i].score) }
func (h *hitHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.at[h.items[i].key()], h.at[h.items[j].key()] = i, j
}

func (h *hitHeap) Push(x any) {
	c := x.(candidate)
	h.at[c.key()] = len(h.items)
	h.items = append(h.items, c)
}

func (h *hitHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.at, x.key())
	return x
}

// compile compiles a read's filter (nil: none).
func compile(c *collection, r *plan.Read) (*expr.Expr, error) {
	if r.Filter == "" {
		return nil, nil
	}
	e, err := expr.CompileTZ(r.Filter, c.info.Schema, r.Templates, r.Timezone)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	return e, nil
}

// Search runs a top-k vector search over every selected segment: this
// node's, and those its delegators gave worker nodes (the read fanned out
// to them and merged, fanout.Search).
func (n *Node) Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	v, err := n.view(ctx, &req.Read)
	if err != nil {
		return nil, err
	}
	defer v.close()
	if len(v.remote) == 0 {
		return v.search(ctx, req)
	}
	return fanout.Search(ctx, req, v.parts())
}

// search runs a search over the view's own segments.
func (v *readView) search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	c, ts, expire := v.c, v.ts, v.expire
	e, err := compile(c, &req.Read)
	if err != nil {
		return nil, err
	}
	segs := v.selected(&req.Read, e)
	better := plan.Better(req.Metric)
	nq := req.NQ()
	heaps := make([]*hitHeap, nq)
	for q := range heaps {
		heaps[q] = &hitHeap{better: better}
	}
	groupCands := make([][]candidate, nq)
	qnorms := make([]float32, nq)
	for q, v := range req.Vectors {
		qnorms[q] = distance.Norm(v)
	}
	var sparseQueries []sparse.Vector
	var bm25 sparse.BM25
	switch {
	case req.BM25 != nil:
		var any bool
		sparseQueries, bm25, any, err = v.bm25Queries(req)
		if err != nil {
			return nil, err
		}
		if !any {
			segs = nil // nothing to score: no hits, as in Milvus
		}
	case req.Sparse != nil:
		sparseQueries = decodeSparseQueries(req)
	}
	st := &searchState{
		req: req, ts: ts, expire: expire, e: e, qnorms: qnorms,
		sparseQueries: sparseQueries, bm25: bm25, heaps: heaps, groupCands: groupCands,
	}
	for si, s := range segs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := s.Read(func(v *segment.View) error { return st.segment(si, v, s.PKField()) })
		if err != nil {
			return nil, err
		}
	}
	res := &plan.SearchResult{Hits: make([][]plan.Hit, nq)}
	var all []candidate
	for q, h := range heaps {
		var items []candidate
		if q < len(req.NullQueries) && req.NullQueries[q] {
			res.Hits[q] = nil // a search by the key of a row whose vector is null
			continue
		}
		if req.GroupByField != 0 {
			items = groupHits(bestPerPK(groupCands[q], better), req, better)
		} else {
			items = h.items
			sortBest(items, better)
		}
		for _, it := range items {
			res.Hits[q] = append(res.Hits[q], plan.Hit{PK: it.pk, Score: it.score, Element: it.elem})
		}
		all = append(all, items...)
	}
	if req.GroupByField != 0 {
		gv, err := gather(segs, all, []int64{req.GroupByField}, c)
		if err != nil {
			return nil, err
		}
		res.GroupValues = gv[req.GroupByField]
	}
	if len(req.OutputFields) > 0 {
		res.Fields, err = gather(segs, all, req.OutputFields, c)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// searchState is what one search carries from segment to segment.
type searchState struct {
	req           *plan.Search
	ts, expire    uint64
	e             *expr.Expr
	qnorms        []float32
	sparseQueries []sparse.Vector
	bm25          sparse.BM25
	heaps         []*hitHeap
	groupCands    [][]candidate
}

// segment searches view v, segment si of the search, whose primary key is
// field pkField, offering its hits to the heaps (or group candidates).
func (st *searchState) segment(si int, v *segment.View, pkField int64) error {
	req, ts, expire, e, qnorms := st.req, st.ts, st.expire, st.e, st.qnorms
	sparseQueries, bm25, heaps, groupCands := st.sparseQueries, st.bm25, st.heaps, st.groupCands
	nq := req.NQ()
	pkCol := v.Column(pkField)
	if req.BM25 != nil {
		// BM25 output fields are never null.
		mask, err := liveRows(v, &req.Read, ts, expire, e)
		if err != nil {
			return err
		}
		return searchSparse(v, req, sparseQueries, bm25, mask, si, pkCol, heaps, groupCands)
	}
	// mask is read-only (nil = every row): the paths that edit it
	// take their own copy.
	mask, allowed, err := searchMask(v, &req.Read, ts, expire, e, req.FieldID)
	if err != nil {
		return err
	}
	if req.Sparse != nil {
		return searchSparse(v, req, sparseQueries, bm25, mask, si, pkCol, heaps, groupCands)
	}
	if req.EmbLists != nil || req.ElementLevel {
		return searchEmbLists(v, req, ownMask(mask, v.Len()), si, pkCol, heaps, groupCands)
	}
	rs, err := newRowScorer(v.Column(req.FieldID), req, qnorms)
	if err != nil {
		return err
	}
	push := func(q int, hits []index.Hit) {
		for _, hit := range hits {
			row := int(hit.Row)
			heaps[q].offer(candidate{score: hit.Score, seg: si, row: row, ts: v.Timestamp(row), pk: column.KeyAt(pkCol, row)}, req.TopK)
		}
	}
	plainTopK := !req.HasRadius && !req.HasRange && !req.HasAfter && req.GroupByField == 0
	if ai, ok := v.Index(req.FieldID).(*attachedIndex); ok && ai.metric == req.Metric && plainTopK {
		for q := range nq {
			hits, err := ai.search(req, q, mask, allowed)
			if err != nil {
				return errcode.Invalid("%v", err)
			}
			push(q, hits)
		}
		return nil
	}
	if vecs := rs.floats; vecs != nil && plainTopK {
		for q, qv := range req.Vectors {
			if len(qv) != vecs.Dim {
				return errcode.Invalid("the dimension of query vector %d is %d, the field's is %d", q, len(qv), vecs.Dim)
			}
		}
		return exactTopK(req, vecs, v.Len(), mask, push)
	}
	scores := make([]float32, v.Len())
	mask = ownMask(mask, v.Len()) // scoring clears the rows whose score is NaN
	for q := range nq {
		if err := rs.score(q, v.Len(), mask, scores); err != nil {
			return err
		}
		collectScores(v, req, si, pkCol, mask, scores, heaps[q], &groupCands[q])
	}
	return nil
}

// offer adds c if it is among the k best so far.
func (h *hitHeap) offer(c candidate, k int) {
	if h.at == nil {
		h.at = map[any]int{}
	}
	if j, dup := h.at[c.key()]; dup {
		if preferred(c, h.items[j], h.better) {
			h.items[j] = c
			heap.Fix(h, j)
		}
		return
	}
	if h.Len() < k {
		heap.Push(h, c)
	} else if h.better(c.score, h.items[0].score) {
		delete(h.at, h.items[0].key())
		h.items[0] = c
		h.at[c.key()] = 0
		heap.Fix(h, 0)
	}
}

// collectScores offers every row of mask whose score is in range to h, or
// appends it to the group-by candidates when grouping.
func collectScores(v *segment.View, req *plan.Search, si int, pkCol column.Column, mask []bool, scores []float32,
	h *hitHeap, groupCands *[]candidate,
) {
	for row, ok := range mask {
		if !ok || math.IsNaN(float64(scores[row])) || !inRange(req, scores[row]) {
			continue // NaN: no hit for this query (a structure metric's non-match)
		}
		c := candidate{score: scores[row], seg: si, row: row, ts: v.Timestamp(row), pk: column.KeyAt(pkCol, row)}
		if req.GroupByField != 0 {
			c.group = column.GroupKey(v.Column(req.GroupByField), row)
			*groupCands = append(*groupCands, c)
			continue
		}
		h.offer(c, req.TopK)
	}
}

func inRange(req *plan.Search, sc float32) bool {
	if req.HasAfter {
		if plan.HigherIsBetter(req.Metric) {
			if sc >= req.After {
				return false
			}
		} else if sc <= req.After {
			return false
		}
	}
	if !req.HasRadius && !req.HasRange {
		return true
	}
	s := float64(sc)
	if plan.HigherIsBetter(req.Metric) {
		if req.HasRadius && s <= req.Radius {
			return false
		}
		if req.HasRange && s > req.RangeFilter {
			return false
		}
		return true
	}
	if req.HasRadius && s >= req.Radius {
		return false
	}
	if req.HasRange && s < req.RangeFilter {
		return false
	}
	return true
}

// batchMinQueries is the number of query vectors from which a search
// without a vector index scores all of them at once with the tiled
// many-query kernel (flat.SearchBatch), which reads the rows once for all
// queries, instead of scanning the rows once per query.
const batchMinQueries = 2

// exactTopK finds each query's top-k over the first n rows of vecs allowed
// by mask, exactly, and hands the hits to push.
func exactTopK(req *plan.Search, vecs *column.FloatVectors, n int, mask []bool, push func(q int, hits []index.Hit)) error {
	metric, err := index.ParseMetric(req.Metric)
	if err != nil {
		return errcode.Invalid("%v", err)
	}
	data := vecs.Data[:n*vecs.Dim]
	if len(req.Vectors) >= batchMinQueries {
		qs := make([]float32, 0, len(req.Vectors)*vecs.Dim)
		for _, qv := range req.Vectors {
			qs = append(qs, qv...)
		}
		all, err := flat.SearchBatch(data, vecs.Dim, metric, qs, req.TopK, mask)
		if err != nil {
			return errcode.Invalid("%v", err)
		}
		for q, hits := range all {
			push(q, hits)
		}
		return nil
	}
	for q, qv := range req.Vectors {
		hits, err := flat.Search(data, vecs.Dim, metric, qv, req.TopK, mask)
		if err != nil {
			return errcode.Invalid("%v", err)
		}
		push(q, hits)
	}
	return nil
}

// scoreFloatRuns fills scores[i] for rows where mask[i] is set, scoring each run
// of consecutive allowed rows with one batched kernel call, and clears
// mask[i] where the score is NaN.
func scoreFloatRuns(metric string, q []float32, qnorm float32, vecs *column.FloatVectors, n int, mask []bool, scores []float32) {
	dim := vecs.Dim
	var sq []float32
	for lo := 0; lo < n; {
		if !mask[lo] {
			lo++
			continue
		}
		hi := lo + 1
		for hi < n && mask[hi] {
			hi++
		}
		rows, out := vecs.Data[lo*dim:hi*dim], scores[lo:hi]
		switch metric {
		case plan.MetricL2:
			distance.L2SquaredBatch(q, rows, out)
		case plan.MetricIP:
			distance.DotBatch(q, rows, out)
		default:
			distance.DotBatch(q, rows, out)
			sq = slices.Grow(sq[:0], hi-lo)[:hi-lo]
			distance.SquaredNorms(rows, dim, sq)
			for i, d := range out {
				if sq[i] == 0 || qnorm == 0 {
					out[i] = 0
				} else {
					out[i] = d / (qnorm * float32(math.Sqrt(float64(sq[i]))))
				}
			}
		}
		for i, sc := range out {
			if math.IsNaN(float64(sc)) {
				mask[lo+i] = false
			}
		}
		lo = hi
	}
}

// lessPK orders primary keys (plan.LessPK).
func lessPK(a, b any) bool { return plan.LessPK(a, b) }

// preferred reports whether search candidate a is kept over b, a row of
// the same primary key: the better score, or the later row on a tie.
func preferred(a, b candidate, better func(x, y float32) bool) bool {
	if a.score != b.score {
		return better(a.score, b.score)
	}
	return a.ts > b.ts
}

// bestPerPK keeps, for each primary key, its preferred search candidate.
func bestPerPK(items []candidate, better func(x, y float32) bool) []candidate {
	return onePerPK(items, func(a, b candidate) bool { return preferred(a, b, better) })
}

// dedupByPK keeps, for each primary key, the candidate inserted last.
func dedupByPK(items []candidate) []candidate {
	return onePerPK(items, func(a, b candidate) bool { return a.ts > b.ts })
}

// onePerPK keeps one candidate per primary key, in order: a over b when
// keep(a, b).
func onePerPK(items []candidate, keep func(a, b candidate) bool) []candidate {
	best := map[any]int{}
	for i, it := range items {
		if j, ok := best[it.pk]; !ok || keep(it, items[j]) {
			best[it.pk] = i
		}
	}
	if len(best) == len(items) {
		return items
	}
	out := make([]candidate, 0, len(best))
	for i, it := range items {
		if best[it.pk] == i {
			out = append(out, it)
		}
	}
	return out
}

// gather collects the output fields of the candidates, in order.
func gather(segs []*segment.Segment, items []candidate, fields []int64, c *collection) (map[int64]column.Column, error) {
	out := map[int64]column.Column{}
	for _, fid := range fields {
		f := fieldByID(c, fid)
		if f == nil {
			return nil, fmt.Errorf("querynode: unknown output field %d", fid)
		}
		col, err := column.New(f)
		if err != nil {
			return nil, err
		}
		out[fid] = col
	}
	for _, it := range items {
		err := segs[it.seg].Read(func(v *segment.View) error {
			for fid, col := range out {
				col.AppendFrom(v.Column(fid), it.row)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
