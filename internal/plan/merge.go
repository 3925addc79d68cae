package plan

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/strata-db/strata/internal/column"
)

// The reduce of reads: how hits and rows are ordered, deduplicated and
// grouped. A query node applies it to the rows of its segments; the query
// coordinator applies it again to the results of the shard leaders it fans
// a read out to (MergeSearch, MergeQuery), so that the merged result is the
// one a single node holding every segment returns.

// Better returns the order of scores under metric: better(a, b) when a is
// a better score than b (larger for similarities, smaller for distances).
func Better(metric string) func(a, b float32) bool {
	if HigherIsBetter(metric) {
		return func(a, b float32) bool { return a > b }
	}
	return func(a, b float32) bool { return a < b }
}

// LessPK orders primary keys: int64 keys by value, string keys bytewise.
func LessPK(a, b any) bool {
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

// SortBest sorts items best first: by score under better, then by primary
// key (the lower first) on a tie. It is stable.
func SortBest[T any](items []T, score func(T) float32, pk func(T) any, better func(a, b float32) bool) {
	sort.SliceStable(items, func(i, j int) bool {
		si, sj := score(items[i]), score(items[j])
		if si != sj {
			return better(si, sj)
		}
		return LessPK(pk(items[i]), pk(items[j]))
	})
}

// TopGroups keeps, from items sorted best first (SortBest), the topK
// groups with up to size items each: a group ranks by its best item.
// strict drops the groups with fewer than size items. Items come out group
// by group in rank order, best first within each group.
func TopGroups[T any](items []T, group func(T) any, topK, size int, strict bool) []T {
	size = max(size, 1)
	var order []any
	groups := map[any][]T{}
	for _, it := range items {
		k := group(it)
		g, seen := groups[k]
		if !seen {
			if len(order) >= topK {
				continue
			}
			order = append(order, k)
		}
		if len(g) < size {
			groups[k] = append(g, it)
		}
	}
	var out []T
	for _, k := range order {
		if strict && len(groups[k]) < size {
			continue
		}
		out = append(out, groups[k]...)
	}
	return out
}

// mergedHit is a hit of one part of a merged search.
type mergedHit struct {
	Hit
	part  int // index of the result it came from
	row   int // its row in the result's Fields and GroupValues
	group any // its group-by value (GroupKey), when grouping
}

// hitKey is what a merged search deduplicates hits by: the primary key,
// and the element of an element-level hit.
type hitKey struct {
	pk   any
	elem int
}

// MergeSearch merges the results of one search sent to several query
// nodes, each holding some of the collection's vchannels (every primary
// key lives on one vchannel). Each part must be the node's full answer to
// req (TopK including the proxy's offset); with req.GroupByField the parts
// must have been asked without StrictGroupSize, which the merge applies.
// Per query the merge keeps each key's best hit, orders the hits best
// first (the lower key on a tie) and keeps the TopK best, or the TopK
// best groups of up to GroupSize hits; output fields and group values
// follow their hits.
func MergeSearch(req *Search, parts []*SearchResult) (*SearchResult, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	nq := req.NQ()
	better := Better(req.Metric)
	base := make([]int, len(parts)) // first row of each part in the concatenated columns
	total := 0
	for p, r := range parts {
		if len(r.Hits) > nq {
			return nil, fmt.Errorf("plan: merge search: part %d has %d queries, want %d", p, len(r.Hits), nq)
		}
		base[p] = total
		for _, hs := range r.Hits {
			total += len(hs)
		}
	}
	out := &SearchResult{Hits: make([][]Hit, nq)}
	var rows []int // kept rows, in the concatenated columns
	rowOf := make([]int, len(parts))
	for q := range nq {
		var hits []mergedHit
		at := map[hitKey]int{}
		for p, r := range parts {
			if q >= len(r.Hits) {
				continue
			}
			for _, h := range r.Hits[q] {
				m := mergedHit{Hit: h, part: p, row: rowOf[p]}
				rowOf[p]++
				if req.GroupByField != 0 {
					if r.GroupValues == nil || m.row >= r.GroupValues.Len() {
						return nil, fmt.Errorf("plan: merge search: part %d has no group value for row %d", p, m.row)
					}
					m.group = column.GroupKey(r.GroupValues, m.row)
				}
				k := hitKey{h.PK, h.Element}
				if j, dup := at[k]; dup {
					if better(m.Score, hits[j].Score) {
						hits[j] = m
					}
					continue
				}
				at[k] = len(hits)
				hits = append(hits, m)
			}
		}
		SortBest(hits, func(m mergedHit) float32 { return m.Score }, func(m mergedHit) any { return m.PK }, better)
		if req.GroupByField != 0 {
			hits = TopGroups(hits, func(m mergedHit) any { return m.group }, req.TopK, req.GroupSize, req.StrictGroupSize)
		} else if len(hits) > req.TopK {
			hits = hits[:req.TopK]
		}
		for _, m := range hits {
			out.Hits[q] = append(out.Hits[q], m.Hit)
			rows = append(rows, base[m.part]+m.row)
		}
	}
	var err error
	if out.Fields, err = takeFields(parts, func(r *SearchResult) map[int64]column.Column { return r.Fields },
		func(r *SearchResult) int { return hitCount(r) }, rows); err != nil {
		return nil, err
	}
	if req.GroupByField != 0 {
		gv, err := takeColumn(parts, func(r *SearchResult) column.Column { return r.GroupValues },
			func(r *SearchResult) int { return hitCount(r) }, rows)
		if err != nil {
			return nil, fmt.Errorf("plan: merge search: group values: %w", err)
		}
		out.GroupValues = gv
	}
	return out, nil
}

func hitCount(r *SearchResult) int {
	n := 0
	for _, hs := range r.Hits {
		n += len(hs)
	}
	return n
}

// takeFields concatenates each output field of the parts (rows(part) rows
// each) and takes rows of the concatenation; nil when no part has fields.
func takeFields[R any](parts []R, fields func(R) map[int64]column.Column, rows func(R) int, idx []int) (map[int64]column.Column, error) {
	ids := map[int64]bool{}
	for _, r := range parts {
		for id := range fields(r) {
			ids[id] = true
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	out := make(map[int64]column.Column, len(ids))
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		col, err := takeColumn(parts, func(r R) column.Column { return fields(r)[id] }, rows, idx)
		if err != nil {
			return nil, fmt.Errorf("plan: merge: field %d: %w", id, err)
		}
		out[id] = col
	}
	return out, nil
}

// takeColumn concatenates one column of the parts and takes rows idx of
// it. A part without the column must have no rows.
func takeColumn[R any](parts []R, col func(R) column.Column, rows func(R) int, idx []int) (column.Column, error) {
	var cols []column.Column
	for p, r := range parts {
		c, n := col(r), rows(r)
		if c == nil || c.Len() == 0 {
			if n > 0 {
				return nil, fmt.Errorf("part %d has %d rows but no column", p, n)
			}
			if c != nil && len(cols) == 0 {
				cols = append(cols, c) // the type, for an empty result
			}
			continue
		}
		if c.Len() != n {
			return nil, fmt.Errorf("part %d has %d rows in the column, want %d", p, c.Len(), n)
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, nil
	}
	return column.Concat(cols).Take(idx), nil
}

// queryRow is a row of one part of a merged query.
type queryRow struct {
	part, row int
	pk        any
}

// MergeQuery merges the results of one query sent to several query nodes,
// each holding some of the collection's vchannels. Each part must be the
// node's answer to req with Offset 0 and Limit req.Offset+req.Limit (no
// limit when req.Limit is 0), its rows ordered by primary key, and must
// hold the primary-key field pkField among its Fields. Counts are summed;
// rows are merged in primary-key order (a key in several parts is kept
// once), then req.Offset and req.Limit apply.
func MergeQuery(req *Query, pkField int64, parts []*QueryResult) (*QueryResult, error) {
	if req.CountOnly {
		var n int64
		for _, r := range parts {
			n += r.Count
		}
		return &QueryResult{Count: n}, nil
	}
	var rows []queryRow
	base := make([]int, len(parts))
	total := 0
	for p, r := range parts {
		base[p] = total
		total += r.Rows
		if r.Rows == 0 {
			continue
		}
		pks := r.Fields[pkField]
		if pks == nil || pks.Len() != r.Rows {
			return nil, fmt.Errorf("plan: merge query: part %d has %d rows and no primary keys for them", p, r.Rows)
		}
		for i := range r.Rows {
			rows = append(rows, queryRow{part: p, row: i, pk: column.KeyAt(pks, i)})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return LessPK(rows[i].pk, rows[j].pk) })
	rows = slices.CompactFunc(rows, func(a, b queryRow) bool { return a.pk == b.pk })
	rows = rows[min(req.Offset, len(rows)):]
	if req.Limit > 0 && len(rows) > req.Limit {
		rows = rows[:req.Limit]
	}
	idx := make([]int, len(rows))
	for i, r := range rows {
		idx[i] = base[r.part] + r.row
	}
	fields, err := takeFields(parts, func(r *QueryResult) map[int64]column.Column { return r.Fields },
		func(r *QueryResult) int { return r.Rows }, idx)
	if err != nil {
		return nil, err
	}
	if fields == nil {
		fields = map[int64]column.Column{}
	}
	return &QueryResult{Fields: fields, Rows: len(rows), Count: int64(len(rows))}, nil
}
