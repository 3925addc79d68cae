package fanout

import (
	"context"
	"fmt"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/plan"
)

// A grouped search fanned out to several nodes. Each node answers with its
// own TopK best groups (a group ranks by its best hit), up to GroupSize
// hits each. The TopK best groups overall are among them (a group's best
// hit ranks it on its node at least as high as overall), but a group may
// have hits on a node that did not rank it among its own TopK: those hits
// are all worse than that node's last group's best hit. mergeGroups asks
// such a node again for twice as many groups, until for every node and
// every group of the merged answer the node returned the group, returned
// all its groups, or cannot add to it (the group has GroupSize hits, each
// better than anything the node left out). The answer is then the one a
// single node holding every shard gives.

// maxGroupRounds bounds the rounds of mergeGroups; each doubles the groups
// asked of the nodes that may hold more.
const maxGroupRounds = 16

// mergeGroups merges the parts of a grouped search, asking nodes again for
// more groups until the merged groups are complete (see above). fanned is
// req as the parts were asked (StrictGroupSize off).
func mergeGroups(ctx context.Context, req, fanned *plan.Search, nodes []Part, parts []*plan.SearchResult,
) (*plan.SearchResult, error) {
	loose := *fanned // merged without strict_group_size while checking
	topK := make([]int, len(parts))
	for i := range topK {
		topK[i] = fanned.TopK
	}
	better := plan.Better(req.Metric)
	for range maxGroupRounds {
		merged, err := plan.MergeSearch(&loose, parts)
		if err != nil {
			return nil, err
		}
		more := false
		for i, part := range parts {
			if incomplete(&loose, merged, part, topK[i], better) {
				topK[i] *= 2
				more = true
				again := *fanned
				again.TopK = topK[i]
				if parts[i], err = nodes[i].search(ctx, again); err != nil {
					return nil, err
				}
			}
		}
		if !more {
			return plan.MergeSearch(req, parts)
		}
	}
	return nil, fmt.Errorf("fanout: grouped search not complete after %d rounds", maxGroupRounds)
}

// groupsOf lists a part's groups of query q in rank order, with the best
// score of each; row is the part's first row of query q.
func groupsOf(part *plan.SearchResult, q, row int) (keys []any, best map[any]float32) {
	best = map[any]float32{}
	for i, h := range part.Hits[q] {
		k := column.GroupKey(part.GroupValues, row+i)
		if _, seen := best[k]; !seen {
			keys = append(keys, k)
			best[k] = h.Score
		}
	}
	return keys, best
}

// incomplete reports whether a node's part (asked for topK groups) may
// hold hits that the merged groups lack.
func incomplete(req *plan.Search, merged, part *plan.SearchResult, topK int, better func(a, b float32) bool) bool {
	row, mrow := 0, 0
	for q := range req.NQ() {
		var hits, mhits []plan.Hit
		if q < len(part.Hits) {
			hits = part.Hits[q]
		}
		if q < len(merged.Hits) {
			mhits = merged.Hits[q]
		}
		keys, best := groupsOf(part, q, row)
		if len(keys) >= topK && len(hits) > 0 {
			// The node may have left groups out: each of their hits is worse
			// than (or ties) the best hit of its last group.
			bound := best[keys[len(keys)-1]]
			returned := map[any]bool{}
			for _, k := range keys {
				returned[k] = true
			}
			count := map[any]int{}
			worst := map[any]float32{}
			var order []any
			for i, h := range mhits {
				k := column.GroupKey(merged.GroupValues, mrow+i)
				if _, seen := count[k]; !seen {
					order = append(order, k)
				}
				count[k]++
				worst[k] = h.Score
			}
			for _, k := range order {
				if returned[k] {
					continue
				}
				if count[k] < max(req.GroupSize, 1) || !better(worst[k], bound) {
					return true
				}
			}
		}
		row += len(hits)
		mrow += len(mhits)
	}
	return false
}
