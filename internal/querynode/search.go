package querynode

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/index/distance"
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
}

// groupKey returns the group-by value of a row, comparable as a map key.
func groupKey(c column.Column, i int) any {
	if c == nil || c.IsNull(i) {
		return nil
	}
	switch c := c.(type) {
	case *column.Ints:
		return c.Data[i]
	case *column.Strings:
		return c.Data[i]
	case *column.Bools:
		return c.Data[i]
	}
	return nil
}

// groupHits keeps the best TopK groups with up to GroupSize hits each,
// ordered by each group's best score, then by score within the group.
func groupHits(cands []candidate, req *plan.Search, better func(a, b float32) bool) []candidate {
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return better(cands[i].score, cands[j].score)
		}
		return lessPK(cands[i].pk, cands[j].pk)
	})
	size := max(req.GroupSize, 1)
	var order []any
	groups := map[any][]candidate{}
	for _, c := range cands {
		g, seen := groups[c.group]
		if !seen {
			if len(order) >= req.TopK {
				continue
			}
			order = append(order, c.group)
		}
		if len(g) < size {
			groups[c.group] = append(g, c)
		}
	}
	var out []candidate
	for _, k := range order {
		if req.StrictGroupSize && len(groups[k]) < size {
			continue
		}
		out = append(out, groups[k]...)
	}
	return out
}

// hitHeap keeps the k best candidates with the worst on top.
type hitHeap struct {
	items  []candidate
	better func(a, b float32) bool
}

func (h *hitHeap) Len() int           { return len(h.items) }
func (h *hitHeap) Less(i, j int) bool { return h.better(h.items[j].score, h.items[i].score) }
func (h *hitHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *hitHeap) Push(x any)         { h.items = append(h.items, x.(candidate)) }
func (h *hitHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// segmentFilter is the row mask of one segment view: visible at ts, in a
// selected partition, and matching the filter.
func segmentFilter(v *segment.View, ts, expire uint64, e *expr.Expr) ([]bool, error) {
	mask := v.Visible(ts)
	if expire > 0 {
		for i := range mask {
			if mask[i] && v.Timestamp(i) < expire {
				mask[i] = false
			}
		}
	}
	if e == nil {
		return mask, nil
	}
	m, err := e.Eval(v)
	if err != nil {
		return nil, err
	}
	for i := range mask {
		mask[i] = mask[i] && m[i]
	}
	return mask, nil
}

func (n *Node) compile(c *collection, r *plan.Read) (*expr.Expr, error) {
	if r.Filter == "" {
		return nil, nil
	}
	e, err := expr.Compile(r.Filter, c.info.Schema, r.Templates)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	return e, nil
}

// selectSegments returns the segments of every delegator in the read's
// partitions, skipping L2 segments whose clustering-key range the filter excludes.
func selectSegments(c *collection, r *plan.Read, loaded map[int64]bool, e *expr.Expr) []*segment.Segment {
	var req map[int64]bool
	if len(r.PartitionIDs) > 0 {
		req = map[int64]bool{}
		for _, p := range r.PartitionIDs {
			req[p] = true
		}
	}
	var out []*segment.Segment
	for _, d := range c.delegators {
		for _, s := range d.snapshot() {
			if !partitionSelected(s.PartitionID, req, loaded) {
				continue
			}
			if e != nil && s.ClusterLo != nil && !e.MayMatchRange(s.ClusterField, s.ClusterLo, s.ClusterHi) {
				continue // pruned by the clustering-key range
			}
			out = append(out, s)
		}
	}
	return out
}

// Search runs a top-k vector search over every selected segment.
func (n *Node) Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	c, loaded, err := n.loaded(req.CollectionID)
	if err != nil {
		return nil, err
	}
	e, err := n.compile(c, &req.Read)
	if err != nil {
		return nil, err
	}
	ts, err := n.readTimestamp(ctx, c, req.GuaranteeTS, req.Strong)
	if err != nil {
		return nil, err
	}
	segs := selectSegments(c, &req.Read, loaded, e)
	expire := n.colls.ExpireBefore(req.CollectionID)
	better := func(a, b float32) bool { return a < b }
	if plan.HigherIsBetter(req.Metric) {
		better = func(a, b float32) bool { return a > b }
	}
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
	for si, s := range segs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := s.Read(func(v *segment.View) error {
			mask, err := segmentFilter(v, ts, expire, e)
			if err != nil {
				return err
			}
			pkCol := v.Column(s.PKField())
			if req.Sparse != nil {
				return searchSparse(v, req, mask, si, pkCol, heaps, groupCands)
			}
			rs, err := newRowScorer(v.Column(req.FieldID), req, qnorms)
			if err != nil {
				return err
			}
			if ai, ok := v.Index(req.FieldID).(*attachedIndex); ok && ai.metric == req.Metric &&
				!req.HasRadius && !req.HasRange && !req.HasAfter && req.GroupByField == 0 {
				for q := range nq {
					hits, err := ai.search(req, q, mask)
					if err != nil {
						return errcode.Invalid("%v", err)
					}
					for _, hit := range hits {
						row := int(hit.Row)
						heaps[q].offer(candidate{score: hit.Score, seg: si, row: row, ts: v.Timestamp(row), pk: pkAt(pkCol, row)}, req.TopK)
					}
				}
				return nil
			}
			scores := make([]float32, v.Len())
			for q := range nq {
				if err := rs.score(q, v.Len(), mask, scores); err != nil {
					return err
				}
				collectScores(v, req, si, pkCol, mask, scores, heaps[q], &groupCands[q])
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	res := &plan.SearchResult{Hits: make([][]plan.Hit, nq)}
	var all []candidate
	for q, h := range heaps {
		var items []candidate
		if req.GroupByField != 0 {
			items = groupHits(dedupByPK(groupCands[q]), req, better)
		} else {
			items = dedupByPK(h.items)
			sort.SliceStable(items, func(i, j int) bool {
				if items[i].score != items[j].score {
					return better(items[i].score, items[j].score)
				}
				return lessPK(items[i].pk, items[j].pk)
			})
		}
		for _, it := range items {
			res.Hits[q] = append(res.Hits[q], plan.Hit{PK: it.pk, Score: it.score})
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

// offer adds c if it is among the k best so far.
func (h *hitHeap) offer(c candidate, k int) {
	if h.Len() < k {
		heap.Push(h, c)
	} else if h.better(c.score, h.items[0].score) {
		h.items[0] = c
		heap.Fix(h, 0)
	}
}

// collectScores offers every row of mask whose score is in range to h, or
// appends it to the group-by candidates when grouping.
func collectScores(v *segment.View, req *plan.Search, si int, pkCol column.Column, mask []bool, scores []float32,
	h *hitHeap, groupCands *[]candidate,
) {
	for row, ok := range mask {
		if !ok || !inRange(req, scores[row]) {
			continue
		}
		c := candidate{score: scores[row], seg: si, row: row, ts: v.Timestamp(row), pk: pkAt(pkCol, row)}
		if req.GroupByField != 0 {
			c.group = groupKey(v.Column(req.GroupByField), row)
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

// scoreRows fills scores[i] for rows where mask[i] is set; rowAt returns
// row i as float32.
func scoreRows(metric string, q []float32, qnorm float32, rowAt func(i int) []float32, n int, mask []bool, scores []float32) {
	for i := 0; i < n; i++ {
		if !mask[i] {
			continue
		}
		row := rowAt(i)
		switch metric {
		case "L2":
			scores[i] = distance.L2Squared(q, row)
		case "IP":
			scores[i] = distance.Dot(q, row)
		default:
			nr := distance.Norm(row)
			if nr == 0 || qnorm == 0 {
				scores[i] = 0
			} else {
				scores[i] = distance.Dot(q, row) / (qnorm * nr)
			}
		}
		if math.IsNaN(float64(scores[i])) {
			mask[i] = false
		}
	}
}

func pkAt(c column.Column, i int) any {
	switch c := c.(type) {
	case *column.Ints:
		return c.Data[i]
	case *column.Strings:
		return c.Data[i]
	}
	return nil
}

func lessPK(a, b any) bool {
	switch a := a.(type) {
	case int64:
		bi, _ := b.(int64)
		return a < bi
	case string:
		bs, _ := b.(string)
		return a < bs
	}
	return false
}

// dedupByPK keeps, for each primary key, the candidate inserted last.
func dedupByPK(items []candidate) []candidate {
	best := map[any]int{}
	for i, it := range items {
		if j, ok := best[it.pk]; !ok || it.ts > items[j].ts {
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
