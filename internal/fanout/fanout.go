// Package fanout runs one read over several parts of a collection's data
// and merges their answers into the answer of one node holding all of it.
// A part is a query node asked for its share: a shard leader for the
// vchannels it leads (the query coordinator and the proxy's Router fan a
// read out to a replica's leaders), or a worker for the sealed segments a
// shard leader gave it (the leader fans its read out to its workers).
// Both apply the same reduce: plan.MergeSearch and plan.MergeQuery, the
// grouped-search completion of mergeGroups, and the BM25 statistics summed
// over the parts before the search.
//
// The merge is exact because each part answers for its share with the
// reduce a node applies to its own segments: per query the best hit of
// each primary key, best first, TopK of them (the caller's offset is
// inside TopK); a grouped search is asked without strict_group_size, which
// the merge applies, and a part that may hold more hits of a merged group
// is asked again for more groups (group.go); a query is asked for
// offset+limit rows from offset 0, with the primary key among its output
// fields, and the merge orders by primary key, then applies offset and
// limit; count(*) is summed.
package fanout

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/plan"
)

// Reader is a query node's read side.
type Reader interface {
	Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error)
	Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error)
}

// BM25Stater is a query node's full-text search statistics (the in-process
// *querynode.Node and queryrpc.Client implement it).
type BM25Stater interface {
	BM25Stats(ctx context.Context, req *plan.Search) (*plan.BM25Stats, error)
}

// StatsReader is a Reader that also reports BM25 statistics: a query node
// as a shard leader asks it for its share (querynode.SegmentReader).
type StatsReader interface {
	Reader
	BM25Stater
}

// Part is one share of a read: Reader is asked with the read's request
// restricted by Scope (it sets the vchannels or the segments of the share
// on the request's plan.Read). Name tells the part in errors ("query node
// 3"; "": its errors are returned as they are).
type Part struct {
	Name   string
	Reader Reader
	Scope  func(*plan.Read)
}

// search asks the part for a search, scoped.
func (p Part) search(ctx context.Context, req plan.Search) (*plan.SearchResult, error) {
	p.Scope(&req.Read)
	res, err := p.Reader.Search(ctx, &req)
	return res, p.wrap(err)
}

// query asks the part for a query, scoped.
func (p Part) query(ctx context.Context, req plan.Query) (*plan.QueryResult, error) {
	p.Scope(&req.Read)
	res, err := p.Reader.Query(ctx, &req)
	return res, p.wrap(err)
}

// wrap names the part in its error.
func (p Part) wrap(err error) error {
	if err == nil || p.Name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", p.Name, err)
}

// all runs ask on every part in parallel and returns their answers, or
// the first part's error (which keeps its Milvus code).
func all[R any](ctx context.Context, parts []Part, ask func(ctx context.Context, p Part) (R, error)) ([]R, error) {
	out := make([]R, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() { out[i], errs[i] = ask(ctx, p) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Search runs a search over parts and merges their answers. One part is
// asked the request unchanged (but for its scope) and its answer is the
// read's.
func Search(ctx context.Context, req *plan.Search, parts []Part) (*plan.SearchResult, error) {
	if len(parts) == 1 {
		return parts[0].search(ctx, *req)
	}
	fanned := *req
	if req.GroupByField != 0 {
		fanned.StrictGroupSize = false // applied after the merge
	}
	if req.BM25 != nil && req.BM25.Stats == nil {
		// Each part weighs terms by the statistics of all of them.
		sum, err := gatherBM25(ctx, &fanned, parts)
		if err != nil {
			return nil, err
		}
		b := *req.BM25
		b.Stats = sum
		fanned.BM25 = &b
	}
	res, err := all(ctx, parts, func(ctx context.Context, p Part) (*plan.SearchResult, error) {
		return p.search(ctx, fanned)
	})
	if err != nil {
		return nil, err
	}
	if req.GroupByField == 0 {
		return plan.MergeSearch(req, res)
	}
	return mergeGroups(ctx, req, &fanned, parts, res)
}

// Query runs a query over parts and merges their answers (pkField is the
// collection's primary key, unused by count(*)). One part is asked the
// request unchanged (but for its scope) and its answer is the read's.
func Query(ctx context.Context, req *plan.Query, pkField int64, parts []Part) (*plan.QueryResult, error) {
	if len(parts) == 1 {
		return parts[0].query(ctx, *req)
	}
	fanned := *req
	addedPK := false
	if !req.CountOnly {
		fanned.Offset = 0
		if req.Limit > 0 {
			fanned.Limit = req.Offset + req.Limit
		}
		if !slices.Contains(req.OutputFields, pkField) {
			fanned.OutputFields = append(slices.Clone(req.OutputFields), pkField)
			addedPK = true
		}
	}
	res, err := all(ctx, parts, func(ctx context.Context, p Part) (*plan.QueryResult, error) {
		return p.query(ctx, fanned)
	})
	if err != nil {
		return nil, err
	}
	merged, err := plan.MergeQuery(req, pkField, res)
	if err == nil && addedPK {
		delete(merged.Fields, pkField)
	}
	return merged, err
}

// BM25Stats asks each part for its statistics of a full-text search over
// its share and sums them: the statistics of one node holding every share.
func BM25Stats(ctx context.Context, req *plan.Search, parts []Part) (*plan.BM25Stats, error) {
	return gatherBM25(ctx, req, parts)
}

// gatherBM25 asks each part, in parallel, for its statistics of a
// full-text search over its share, and sums them: the statistics of one
// node holding every share.
func gatherBM25(ctx context.Context, req *plan.Search, parts []Part) (*plan.BM25Stats, error) {
	for _, p := range parts {
		if _, ok := p.Reader.(BM25Stater); !ok {
			return nil, fmt.Errorf("fanout: %s cannot report BM25 statistics", p.Name)
		}
	}
	stats, err := all(ctx, parts, func(ctx context.Context, p Part) (*plan.BM25Stats, error) {
		one := *req
		p.Scope(&one.Read)
		st, err := p.Reader.(BM25Stater).BM25Stats(ctx, &one)
		if err != nil {
			return nil, p.wrap(err)
		}
		if st == nil {
			return nil, fmt.Errorf("fanout: %s reported no BM25 statistics", p.Name)
		}
		return st, nil
	})
	if err != nil {
		return nil, err
	}
	sum := &plan.BM25Stats{Terms: stats[0].Terms, DF: make([]int64, len(stats[0].Terms))}
	for i, st := range stats {
		if err := sum.Add(st); err != nil {
			return nil, fmt.Errorf("fanout: %s: %w", parts[i].Name, err)
		}
	}
	return sum, nil
}
