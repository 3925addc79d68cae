package querycoord

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rpc"
)

// target is one replica a read may go to: its leader nodes and their
// vchannels, and whether it serves.
type target struct {
	replica int64
	nodes   []int64
	chans   map[int64][]string
	serving bool
}

// targets returns the replicas of a loaded collection in the order a read
// tries them (round-robin from the next replica, serving ones first) and
// the version of the placement they were read from.
func (c *Coordinator) targets(r *plan.Read) (*loadedCollection, []target, uint64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	lc, ok := c.loaded[r.CollectionID]
	if !ok || !lc.done {
		name := fmt.Sprint(r.CollectionID)
		if info, err := c.colls.CollectionByID(r.CollectionID); err == nil {
			name = info.Name
		}
		if ok {
			return nil, nil, 0, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: still loading", name)
		}
		if f := c.failures[r.CollectionID]; f != nil {
			return nil, nil, 0, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: load failed: %v", name, f)
		}
		return nil, nil, 0, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]", name)
	}
	start := int(lc.next.Add(1) - 1)
	var up, down []target
	for i := range lc.replicas {
		rep := lc.replicas[(start+i)%len(lc.replicas)]
		t := target{replica: rep.ID, chans: leaderChannels(rep), serving: !lc.down[rep.ID] && len(rep.Leaders) > 0}
		t.nodes = slices.Sorted(maps.Keys(t.chans))
		for _, n := range t.nodes {
			if _, live := c.live[n]; !live {
				t.serving = false
			}
		}
		if t.serving {
			up = append(up, t)
		} else {
			down = append(down, t)
		}
	}
	return lc, append(up, down...), lc.version, nil
}

// unavailable is the error of a read of a replica that does not serve.
func unavailable(lc *loadedCollection, t target) error {
	var chans []string
	for _, n := range t.nodes {
		chans = append(chans, t.chans[n]...)
	}
	slices.Sort(chans)
	return errcode.New(errcode.ChannelNotAvailable, "channel not available[channel=%v]: replica %d of collection %s has no shard leader for it now",
		chans, t.replica, lc.info.Name)
}

// maxReadTries bounds how often a read is tried again on a placement that
// changed while it ran (a shard moved, a replica healed).
const maxReadTries = 3

// read runs one read on the first replica that answers: ask sends it to
// each shard leader of the replica for the vchannels it leads (alone when
// one node leads every shard: its answer is the read's, unmerged) and
// merge combines their answers. A failure that means a node is gone moves on to the next
// replica; when every replica failed so while the placement changed (a
// rebalance moved a shard under the read), the read is tried again on the
// new placement.
func read[R any](ctx context.Context, c *Coordinator, r *plan.Read, ask func(ctx context.Context, n Node, chans []string, alone bool) (R, error),
	merge func(context.Context, []Node, [][]string, []R) (R, error),
) (R, error) {
	var zero R
	for try := 1; ; try++ {
		lc, ts, version, err := c.targets(r)
		if err != nil {
			return zero, err
		}
		var last error
		for _, t := range ts {
			if !t.serving {
				if last == nil {
					last = unavailable(lc, t)
				}
				continue
			}
			res, err := readReplica(ctx, c, t, ask, merge)
			if err == nil {
				return res, nil
			}
			if !c.nodeGone(err, t) || ctx.Err() != nil {
				return zero, err
			}
			c.logger.Warn("a read failed on a replica; trying another", "collection", lc.info.Name, "replica", t.replica, "err", err)
			last = unavailable(lc, t)
		}
		if try >= maxReadTries || !c.moved(lc, version) {
			return zero, last
		}
	}
}

// moved reports whether a collection's placement changed since version.
func (c *Coordinator) moved(lc *loadedCollection, version uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return lc.version != version
}

// readReplica sends the read to every leader node of a replica, in
// parallel, each for the vchannels it leads, and merges their answers.
func readReplica[R any](ctx context.Context, c *Coordinator, t target, ask func(ctx context.Context, n Node, chans []string, alone bool) (R, error),
	merge func(context.Context, []Node, [][]string, []R) (R, error),
) (R, error) {
	var zero R
	nodes := make([]Node, len(t.nodes))
	chans := make([][]string, len(t.nodes))
	for i, id := range t.nodes {
		if nodes[i] = c.nodeOf(id); nodes[i] == nil {
			return zero, errNodeGone(id)
		}
		chans[i] = t.chans[id]
	}
	if len(nodes) == 1 {
		return ask(ctx, nodes[0], chans[0], true)
	}
	parts := make([]R, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, node := range nodes {
		wg.Go(func() {
			parts[i], errs[i] = ask(ctx, node, chans[i], false)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("query node %d: %w", t.nodes[i], errs[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return zero, err // the first keeps its Milvus code
		}
	}
	return merge(ctx, nodes, chans, parts)
}

// nodeGone reports whether a replica's read failed because one of its
// nodes is gone or lost the collection: the node left the membership, or
// answered with a code that says its shard is not there now.
func (c *Coordinator) nodeGone(err error, t target) bool {
	c.mu.RLock()
	for _, n := range t.nodes {
		if _, live := c.live[n]; !live {
			c.mu.RUnlock()
			return true
		}
	}
	c.mu.RUnlock()
	switch code := errcode.CodeOf(err); {
	case code == errcode.ChannelNotAvailable, code == errcode.CollectionNotLoaded, rpc.RetriableCode(code):
		return true
	}
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unavailable
}

// resolveExpiry puts the collection's TTL cut-off into a read (unless its
// caller did): the root coordinator is in this process, so the query nodes
// need not ask it back, one round trip per node and read.
func (c *Coordinator) resolveExpiry(ctx context.Context, r *plan.Read) error {
	if r.HasExpireBefore {
		return nil
	}
	cut, err := c.colls.ExpireBefore(ctx, r.CollectionID)
	if err != nil {
		return err
	}
	r.ExpireBefore, r.HasExpireBefore = cut, true
	return nil
}

// askFor returns the request a shard leader gets: req itself when it
// leads every shard (alone), fanned otherwise, for its vchannels chans.
func askFor[T any](req, fanned *T, alone bool, chans []string, read func(*T) *plan.Read) *T {
	one := *fanned
	if alone {
		one = *req
	}
	read(&one).VChannels = chans
	return &one
}

// Search runs a search on one replica: on each of its shard leaders, the
// answers merged (plan.MergeSearch; mergeGroups for a grouped search).
func (c *Coordinator) Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	withCut := *req
	if err := c.resolveExpiry(ctx, &withCut.Read); err != nil {
		return nil, err
	}
	req = &withCut
	fanned := *req
	if req.GroupByField != 0 {
		fanned.StrictGroupSize = false // applied after the merge
	}
	return read(ctx, c, &req.Read,
		func(ctx context.Context, n Node, chans []string, alone bool) (*plan.SearchResult, error) {
			return n.Search(ctx, askFor(req, &fanned, alone, chans, func(r *plan.Search) *plan.Read { return &r.Read }))
		},
		func(ctx context.Context, nodes []Node, chans [][]string, parts []*plan.SearchResult) (*plan.SearchResult, error) {
			if req.GroupByField == 0 {
				return plan.MergeSearch(req, parts)
			}
			return mergeGroups(ctx, req, &fanned, nodes, chans, parts)
		})
}

// Query runs a query on one replica: on each of its shard leaders for
// offset+limit rows from offset 0, with the primary key, the answers
// merged (plan.MergeQuery).
func (c *Coordinator) Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	withCut := *req
	if err := c.resolveExpiry(ctx, &withCut.Read); err != nil {
		return nil, err
	}
	req = &withCut
	fanned := *req
	var pkField int64
	addedPK := false
	if !req.CountOnly {
		info, err := c.colls.CollectionByID(req.CollectionID)
		if err != nil {
			return nil, err
		}
		pk := info.PKField()
		if pk == nil {
			return nil, fmt.Errorf("querycoord: collection %s has no primary key", info.Name)
		}
		pkField = pk.GetFieldID()
		fanned.Offset = 0
		if req.Limit > 0 {
			fanned.Limit = req.Offset + req.Limit
		}
		if !slices.Contains(req.OutputFields, pkField) {
			fanned.OutputFields = append(slices.Clone(req.OutputFields), pkField)
			addedPK = true
		}
	}
	return read(ctx, c, &req.Read,
		func(ctx context.Context, n Node, chans []string, alone bool) (*plan.QueryResult, error) {
			return n.Query(ctx, askFor(req, &fanned, alone, chans, func(r *plan.Query) *plan.Read { return &r.Read }))
		},
		func(_ context.Context, _ []Node, _ [][]string, parts []*plan.QueryResult) (*plan.QueryResult, error) {
			res, err := plan.MergeQuery(req, pkField, parts)
			if err == nil && addedPK {
				delete(res.Fields, pkField)
			}
			return res, err
		})
}
