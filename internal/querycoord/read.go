package querycoord

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/fanout"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rpc"
)

// target is one replica a read may go to: its leader nodes, the
// vchannels each leads and its read side, and whether it serves.
type target struct {
	replica int64
	nodes   []int64
	chans   [][]string // by node
	readers []Reader   // by node; nil: the node is gone
	serving bool
	slot    int // the replica's index in a Router's cached leaders
}

// route is the placement a read runs over: the replicas of its collection
// in the order it tries them, read from one version of the placement.
type route struct {
	name    string
	version uint64
	targets []target
	// lc is the collection the coordinator routed from; entry the cached
	// shard leaders a Router routed from.
	lc    *loadedCollection
	entry *leaderEntry
}

// readPath is the placement side of a read: the Coordinator over its live
// nodes, or a Router over the shard leaders it cached.
type readPath interface {
	// route returns the replicas of a loaded collection in the order a
	// read tries them.
	route(ctx context.Context, collectionID int64) (route, error)
	// gone reports whether a replica's read failed because one of its
	// nodes is gone or lost its shards (the read goes to the next one).
	gone(err error, rt *route, t *target) bool
	// moved reports whether the placement changed since rt was read (the
	// read is then tried again on the new one), or the error that ends
	// the read (the collection is not loaded any more).
	moved(ctx context.Context, rt *route) (bool, error)
	log() *slog.Logger
}

// leaderTarget builds the target of a replica: its leader nodes, sorted,
// with the vchannels each leads, reached through reader (nil: gone).
func leaderTarget(rep placement.Replica, serving bool, reader func(id int64) Reader) target {
	byNode := leaderChannels(rep)
	t := target{replica: rep.ID, nodes: slices.Sorted(maps.Keys(byNode)), serving: serving && len(rep.Leaders) > 0}
	t.chans = make([][]string, len(t.nodes))
	t.readers = make([]Reader, len(t.nodes))
	for i, n := range t.nodes {
		t.chans[i] = byNode[n]
		if t.readers[i] = reader(n); t.readers[i] == nil {
			t.serving = false
		}
	}
	return t
}

// notLoaded is the error of a read of a collection that is not loaded
// (code 101): still loading, its load failed, or never loaded.
func notLoaded(name string, loading bool, failure error) error {
	switch {
	case loading:
		return errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: still loading", name)
	case failure != nil:
		return errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: load failed: %v", name, failure)
	}
	return errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]", name)
}

// loadedOrErr returns a loaded collection (the caller holds mu), or why
// it cannot be read.
func (c *Coordinator) loadedOrErr(collectionID int64) (*loadedCollection, error) {
	lc, ok := c.loaded[collectionID]
	if ok && lc.done {
		return lc, nil
	}
	name := fmt.Sprint(collectionID)
	if info, err := c.colls.CollectionByID(collectionID); err == nil {
		name = info.Name
	}
	return nil, notLoaded(name, ok, c.failures[collectionID])
}

// serving reports whether a replica serves: it is not down and each of its
// leaders is live (the caller holds mu).
func (c *Coordinator) serving(lc *loadedCollection, rep placement.Replica) bool {
	if lc.down[rep.ID] || len(rep.Leaders) == 0 {
		return false
	}
	for _, n := range rep.Leaders {
		if _, live := c.live[n]; !live {
			return false
		}
	}
	return true
}

// route implements readPath: the replicas round-robin from the next one,
// serving ones first.
func (c *Coordinator) route(_ context.Context, collectionID int64) (route, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	lc, err := c.loadedOrErr(collectionID)
	if err != nil {
		return route{}, err
	}
	reader := func(id int64) Reader {
		if m, ok := c.live[id]; ok {
			return m.node
		}
		return nil
	}
	start := int(lc.next.Add(1) - 1)
	var up, down []target
	for i := range lc.replicas {
		rep := lc.replicas[(start+i)%len(lc.replicas)]
		t := leaderTarget(rep, c.serving(lc, rep), reader)
		if t.serving {
			up = append(up, t)
		} else {
			down = append(down, t)
		}
	}
	return route{name: lc.info.Name, version: lc.version, targets: append(up, down...), lc: lc}, nil
}

// unavailable is the error of a read of a replica that does not serve.
func unavailable(name string, t *target) error {
	var chans []string
	for _, cs := range t.chans {
		chans = append(chans, cs...)
	}
	slices.Sort(chans)
	return errcode.New(errcode.ChannelNotAvailable, "channel not available[channel=%v]: replica %d of collection %s has no shard leader for it now",
		chans, t.replica, name)
}

// maxReadTries bounds how often a read is tried again on a placement that
// changed while it ran (a shard moved, a replica healed).
const maxReadTries = 3

// read runs one read on the first replica that answers: run fans it out
// to the replica's shard leaders, each a fanout.Part for the vchannels it
// leads (one node leading every shard is asked alone: its answer is the
// read's, unmerged). A failure that means a node is gone moves on to the
// next replica; when every replica failed so while the placement changed
// (a rebalance moved a shard under the read), the read is tried again on
// the new placement.
func read[R any](ctx context.Context, p readPath, collectionID int64, run func(context.Context, []fanout.Part) (R, error),
) (R, error) {
	var zero R
	for try := 1; ; try++ {
		rt, err := p.route(ctx, collectionID)
		if err != nil {
			return zero, err
		}
		var last error
		for i := range rt.targets {
			t := &rt.targets[i]
			if !t.serving {
				if last == nil {
					last = unavailable(rt.name, t)
				}
				continue
			}
			res, err := readReplica(ctx, t, run)
			if err == nil {
				return res, nil
			}
			if !p.gone(err, &rt, t) || ctx.Err() != nil {
				return zero, err
			}
			p.log().Warn("a read failed on a replica; trying another", "collection", rt.name, "replica", t.replica, "err", err)
			last = unavailable(rt.name, t)
		}
		if last == nil {
			last = errcode.New(errcode.ChannelNotAvailable, "channel not available: collection %s has no replica", rt.name)
		}
		if try >= maxReadTries {
			return zero, last
		}
		again, err := p.moved(ctx, &rt)
		if err != nil {
			return zero, err
		}
		if !again {
			return zero, last
		}
	}
}

// moved implements readPath: the collection's placement changed since rt
// was read.
func (c *Coordinator) moved(_ context.Context, rt *route) (bool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return rt.lc.version != rt.version, nil
}

// log implements readPath.
func (c *Coordinator) log() *slog.Logger { return c.logger }

// readReplica sends the read to every leader node of a replica, in
// parallel, each for the vchannels it leads, and merges their answers
// (run: fanout.Search or fanout.Query).
func readReplica[R any](ctx context.Context, t *target, run func(context.Context, []fanout.Part) (R, error)) (R, error) {
	var zero R
	parts := make([]fanout.Part, len(t.readers))
	for i, r := range t.readers {
		if r == nil {
			return zero, errNodeGone(t.nodes[i])
		}
		chans := t.chans[i]
		parts[i] = fanout.Part{
			Name: fmt.Sprintf("query node %d", t.nodes[i]), Reader: r,
			Scope: func(r *plan.Read) { r.VChannels = chans },
		}
	}
	if len(parts) == 1 {
		parts[0].Name = "" // the read's answer as it is, its error unwrapped
	}
	return run(ctx, parts)
}

// gone implements readPath: a node of the replica left the membership, or
// answered with a code that says its shard is not there now.
func (c *Coordinator) gone(err error, _ *route, t *target) bool {
	c.mu.RLock()
	for _, n := range t.nodes {
		if _, live := c.live[n]; !live {
			c.mu.RUnlock()
			return true
		}
	}
	c.mu.RUnlock()
	return shardGone(err)
}

// shardGone reports whether a node's error says that it does not serve
// the shard now: "channel not available", "collection not loaded", a
// retriable code (not ready, unavailable) or gRPC Unavailable.
func shardGone(err error) bool {
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
	return search(ctx, c, &withCut)
}

// Query runs a query on one replica: on each of its shard leaders for
// offset+limit rows from offset 0, with the primary key, the answers
// merged (plan.MergeQuery).
func (c *Coordinator) Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	withCut := *req
	if err := c.resolveExpiry(ctx, &withCut.Read); err != nil {
		return nil, err
	}
	var pkField int64
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
	}
	return query(ctx, c, &withCut, pkField)
}

// search runs a search (its TTL cut-off resolved) over p.
func search(ctx context.Context, p readPath, req *plan.Search) (*plan.SearchResult, error) {
	return read(ctx, p, req.CollectionID, func(ctx context.Context, parts []fanout.Part) (*plan.SearchResult, error) {
		return fanout.Search(ctx, req, parts)
	})
}

// query runs a query (its TTL cut-off resolved) over p; pkField is the
// collection's primary key (unused by count(*)).
func query(ctx context.Context, p readPath, req *plan.Query, pkField int64) (*plan.QueryResult, error) {
	return read(ctx, p, req.CollectionID, func(ctx context.Context, parts []fanout.Part) (*plan.QueryResult, error) {
		return fanout.Query(ctx, req, pkField, parts)
	})
}

// BM25Stater is a query node's full-text search statistics (the in-process
// *querynode.Node and queryrpc.Client implement it).
type BM25Stater = fanout.BM25Stater
