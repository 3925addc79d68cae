package querycoord

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rpc"
)

// ShardLeaders returns where the reads of a loaded collection go now: its
// replicas, each with its shard leaders, their internal addresses and
// whether it serves, the placement's version, the primary key and the
// collection's TTL (read from the root coordinator now: a TTL altered
// after the load counts). A collection that is not loaded, still loading
// or whose load failed is Milvus's "collection not loaded" (101).
func (c *Coordinator) ShardLeaders(_ context.Context, collectionID int64) (plan.ShardLeaders, error) {
	fresh, freshErr := c.colls.CollectionByID(collectionID)
	c.mu.RLock()
	defer c.mu.RUnlock()
	lc, err := c.loadedOrErr(collectionID)
	if err != nil {
		return plan.ShardLeaders{}, err
	}
	info := lc.info
	if freshErr == nil {
		info = fresh
	}
	out := plan.ShardLeaders{CollectionID: collectionID, Name: lc.info.Name, Version: lc.version, TTL: info.TTL()}
	if pk := lc.info.PKField(); pk != nil {
		out.PKField = pk.GetFieldID()
	}
	for _, rep := range lc.replicas {
		addrs := map[int64]string{}
		for _, n := range rep.Leaders {
			if m, ok := c.live[n]; ok {
				addrs[n] = m.info.Address
			}
		}
		out.Replicas = append(out.Replicas, plan.Replica{
			ID: rep.ID, Nodes: slices.Clone(rep.Nodes), Leaders: maps.Clone(rep.Leaders), Addresses: addrs,
			Serving: c.serving(lc, rep),
		})
	}
	return out, nil
}

// LeaderSource gives the shard leaders of a loaded collection: the
// Coordinator in process, coordrpc.QueryCoord across processes. A failure
// to reach the coordinator is an error, never an empty placement.
type LeaderSource interface {
	ShardLeaders(ctx context.Context, collectionID int64) (plan.ShardLeaders, error)
}

// ReaderDialer returns the read side of the query node nodeID at its
// internal address (a queryrpc.Client on a pooled connection). It should
// do no I/O: it is called when shard leaders are cached.
type ReaderDialer func(nodeID int64, address string) (Reader, error)

// RouterConfig configures a Router.
type RouterConfig struct {
	// RefreshInterval is how long a collection's cached shard leaders are
	// read before a read fetches them again (the read that finds them due
	// fetches; the others go on with the cached ones, and so does every
	// read when the fetch fails). Default 10s.
	RefreshInterval time.Duration `json:"refreshInterval"`
	// FetchTimeout bounds one fetch of a collection's shard leaders, so
	// that a read of a collection not cached fails fast while the
	// coordinator cannot be reached. Default 5s.
	FetchTimeout time.Duration `json:"fetchTimeout"`
}

// RouterDefaults returns the default router configuration.
func RouterDefaults() RouterConfig {
	return RouterConfig{RefreshInterval: 10 * time.Second, FetchTimeout: 5 * time.Second}
}

// Validate checks the configuration.
func (c RouterConfig) Validate() error {
	var errs []error
	if c.RefreshInterval <= 0 {
		errs = append(errs, fmt.Errorf("querycoord: router refreshInterval %v: want > 0", c.RefreshInterval))
	}
	if c.FetchTimeout <= 0 {
		errs = append(errs, fmt.Errorf("querycoord: router fetchTimeout %v: want > 0", c.FetchTimeout))
	}
	return errors.Join(errs...)
}

// Router is the read side of a proxy that runs apart from the
// coordinator (proxy.Reader): it caches each collection's shard leaders
// (fetched from a LeaderSource on the first read) and sends searches and
// queries straight to the leaders, fanned out and merged exactly as the
// Coordinator does. A read that fails because a node is gone goes to the
// next replica and marks the cache stale (the replica is tried last until
// the placement changes, and the next read fetches again); when every
// replica failed so, the shard leaders are fetched at once and, if they
// changed, the read is tried again on them (up to three times, as in the
// Coordinator). While the coordinator cannot be reached the cached leaders
// serve on; a collection not cached then fails with the fetch's retriable
// error (Milvus code 2) within FetchTimeout.
type Router struct {
	cfg    RouterConfig
	source LeaderSource
	dial   ReaderDialer
	logger *slog.Logger

	flight  singleflight.Group
	mu      sync.RWMutex
	entries map[int64]*leaderEntry

	// base is cancelled by Close, which ends every fetch and waits for
	// running (the background fetches).
	base    context.Context
	cancel  context.CancelFunc
	runMu   sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// leaderEntry is a collection's cached shard leaders. Everything but the
// atomics is immutable once cached.
type leaderEntry struct {
	leaders plan.ShardLeaders
	targets []target // by replica, slot i is targets[i]
	// suspect marks the replicas on which a read found a node gone: they
	// are tried last until the placement changes or a periodic refresh
	// clears them.
	suspect []atomic.Bool
	fetched atomic.Int64 // unix nanoseconds of the last fetch
	// stale: a read found a node gone; the next read fetches again.
	stale atomic.Bool
	// refreshing: a read is fetching the leaders again.
	refreshing atomic.Bool
	next       atomic.Uint64 // round-robin over the replicas
}

// NewRouter returns a router that fetches shard leaders from source and
// reaches their nodes through dial. Close stops its background fetches.
func NewRouter(cfg RouterConfig, source LeaderSource, dial ReaderDialer, logger *slog.Logger) (*Router, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if source == nil || dial == nil {
		return nil, errors.New("querycoord: router needs a shard-leader source and a dialer")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(context.Background())
	return &Router{
		cfg: cfg, source: source, dial: dial, logger: logger, entries: map[int64]*leaderEntry{},
		base: base, cancel: cancel,
	}, nil
}

// Invalidate drops a collection's cached shard leaders (the proxy calls it
// when it releases or drops the collection); the next read fetches them.
func (r *Router) Invalidate(collectionID int64) {
	r.mu.Lock()
	delete(r.entries, collectionID)
	r.mu.Unlock()
}

// Search runs a search on one replica's shard leaders, as
// Coordinator.Search does.
func (r *Router) Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	e, err := r.entry(ctx, req.CollectionID)
	if err != nil {
		return nil, err
	}
	withCut := *req
	e.resolveExpiry(&withCut.Read)
	return search(ctx, r, &withCut)
}

// Query runs a query on one replica's shard leaders, as Coordinator.Query
// does.
func (r *Router) Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	e, err := r.entry(ctx, req.CollectionID)
	if err != nil {
		return nil, err
	}
	if !req.CountOnly && e.leaders.PKField == 0 {
		return nil, fmt.Errorf("querycoord: collection %s has no primary key", e.leaders.Name)
	}
	withCut := *req
	e.resolveExpiry(&withCut.Read)
	return query(ctx, r, &withCut, e.leaders.PKField)
}

// resolveExpiry puts the collection's TTL cut-off at now into a read
// (unless its caller did), as the root coordinator computes it, so that
// no query node asks the coordinator for it.
func (e *leaderEntry) resolveExpiry(rd *plan.Read) {
	if rd.HasExpireBefore {
		return
	}
	rd.ExpireBefore, rd.HasExpireBefore = catalog.ExpireBefore(e.leaders.TTL, time.Now()), true
}

// entry returns a collection's cached shard leaders, fetching them first
// when none are cached. Cached ones that are due (RefreshInterval passed,
// or a node was found gone) are fetched again in the background, one
// fetch at a time, while reads go on with them: a read never waits on the
// coordinator but for a collection it has not cached.
func (r *Router) entry(ctx context.Context, collectionID int64) (*leaderEntry, error) {
	r.mu.RLock()
	e := r.entries[collectionID]
	r.mu.RUnlock()
	if e == nil {
		return r.fetch(ctx, collectionID)
	}
	if e.stale.Load() || time.Since(time.Unix(0, e.fetched.Load())) >= r.cfg.RefreshInterval {
		r.refresh(e)
	}
	return e, nil
}

// refresh fetches a due entry's shard leaders again in the background
// (unless a fetch of it runs already or the router is closed). A fetch
// that fails leaves the entry cached, to be fetched again after
// RefreshInterval, but for "collection not loaded", which drops it.
func (r *Router) refresh(e *leaderEntry) {
	if !e.refreshing.CompareAndSwap(false, true) {
		return
	}
	r.runMu.Lock()
	defer r.runMu.Unlock()
	if r.closed {
		e.refreshing.Store(false)
		return
	}
	r.running.Go(func() {
		defer e.refreshing.Store(false)
		if _, err := r.fetch(r.base, e.leaders.CollectionID); err != nil && r.base.Err() == nil {
			// Tried again after RefreshInterval, not on every read.
			e.stale.Store(false)
			e.fetched.Store(time.Now().UnixNano())
			r.logger.Warn("fetching shard leaders failed; reading with the cached ones", "collection", e.leaders.Name, "err", err)
		}
	})
}

// Close stops the background fetches and waits for them. Reads after
// Close use the cached shard leaders only (a collection not cached is
// fetched by the read itself). Idempotent.
func (r *Router) Close() error {
	r.runMu.Lock()
	r.closed = true
	r.runMu.Unlock()
	r.cancel()
	r.running.Wait()
	return nil
}

// fetch reads a collection's shard leaders from the source (one fetch at a
// time per collection: concurrent reads share it, in the goroutine of the
// first, for FetchTimeout at most) and caches them. The cached entry stays
// when the placement is the same.
func (r *Router) fetch(ctx context.Context, collectionID int64) (*leaderEntry, error) {
	v, err, _ := r.flight.Do(strconv.FormatInt(collectionID, 10), func() (any, error) {
		// Shared by the reads waiting for it: no one read's cancellation
		// ends it, Close does.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.FetchTimeout)
		defer cancel()
		defer context.AfterFunc(r.base, cancel)()
		sl, err := r.source.ShardLeaders(fctx, collectionID)
		switch {
		case err == nil:
		case errcode.CodeOf(err) == errcode.CollectionNotLoaded:
			r.Invalidate(collectionID)
			return nil, fmt.Errorf("querycoord: shard leaders of collection %d: %w", collectionID, err)
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			// The coordinator did not answer within FetchTimeout: as
			// retriable as one that cannot be reached.
			return nil, errcode.New(rpc.CodeServiceUnavailable, "service unavailable: shard leaders of collection %d: no answer from the coordinator in %v: %v",
				collectionID, r.cfg.FetchTimeout, err)
		default:
			return nil, fmt.Errorf("querycoord: shard leaders of collection %d: %w", collectionID, err)
		}
		return r.install(sl), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*leaderEntry), nil
}

// install caches fetched shard leaders and returns their entry: the cached
// one when the placement did not change (its suspects cleared unless a
// node was found gone since the last fetch), a new one otherwise.
func (r *Router) install(sl plan.ShardLeaders) *leaderEntry {
	now := time.Now().UnixNano()
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.entries[sl.CollectionID]; old != nil && sameLeaders(old.leaders, sl) {
		if !old.stale.Swap(false) {
			for i := range old.suspect {
				old.suspect[i].Store(false)
			}
		}
		old.fetched.Store(now)
		return old
	}
	e := r.newEntry(sl)
	e.fetched.Store(now)
	r.entries[sl.CollectionID] = e
	return e
}

// newEntry builds the targets of fetched shard leaders, dialing each
// leader node (a node that cannot be dialed makes its replica not serve).
func (r *Router) newEntry(sl plan.ShardLeaders) *leaderEntry {
	reps := slices.SortedFunc(slices.Values(sl.Replicas), func(a, b plan.Replica) int { return cmp.Compare(a.ID, b.ID) })
	e := &leaderEntry{leaders: sl, targets: make([]target, len(reps)), suspect: make([]atomic.Bool, len(reps))}
	for i, rep := range reps {
		reader := func(id int64) Reader {
			addr := rep.Addresses[id]
			if addr == "" {
				return nil
			}
			rd, err := r.dial(id, addr)
			if err != nil {
				r.logger.Warn("cannot reach a shard leader", "collection", sl.Name, "node_id", id, "address", addr, "err", err)
				return nil
			}
			return rd
		}
		e.targets[i] = leaderTarget(placement.Replica{ID: rep.ID, Nodes: rep.Nodes, Leaders: rep.Leaders}, rep.Serving, reader)
		e.targets[i].slot = i
	}
	return e
}

// sameLeaders reports whether two fetches describe one placement.
func sameLeaders(a, b plan.ShardLeaders) bool {
	return a.Version == b.Version && a.TTL == b.TTL && a.PKField == b.PKField &&
		slices.EqualFunc(a.Replicas, b.Replicas, func(x, y plan.Replica) bool {
			return x.ID == y.ID && x.Serving == y.Serving && slices.Equal(x.Nodes, y.Nodes) &&
				maps.Equal(x.Leaders, y.Leaders) && maps.Equal(x.Addresses, y.Addresses)
		})
}

// route implements readPath: the cached replicas round-robin from the
// next one, those that serve first, those found with a node gone after
// them.
func (r *Router) route(ctx context.Context, collectionID int64) (route, error) {
	e, err := r.entry(ctx, collectionID)
	if err != nil {
		return route{}, err
	}
	rt := route{name: e.leaders.Name, version: e.leaders.Version, entry: e}
	if len(e.targets) == 1 {
		rt.targets = e.targets
		return rt, nil
	}
	start := int(e.next.Add(1) - 1)
	rt.targets = make([]target, 0, len(e.targets))
	for pass := range 3 {
		for i := range e.targets {
			t := e.targets[(start+i)%len(e.targets)]
			suspect := e.suspect[t.slot].Load()
			if (pass == 0 && t.serving && !suspect) || (pass == 1 && t.serving && suspect) || (pass == 2 && !t.serving) {
				rt.targets = append(rt.targets, t)
			}
		}
	}
	return rt, nil
}

// gone implements readPath: the node answered that it does not serve the
// shard now, or could not be reached. The replica is tried last from now
// on and the next read fetches the shard leaders again.
func (r *Router) gone(err error, rt *route, t *target) bool {
	if !shardGone(err) {
		return false
	}
	rt.entry.suspect[t.slot].Store(true)
	rt.entry.stale.Store(true)
	return true
}

// moved implements readPath: the shard leaders fetched now differ from
// those the read was routed by. A collection released meanwhile ends the
// read with "collection not loaded"; when the leaders cannot be fetched
// the read is not tried again (it fails with the replicas' retriable
// error).
func (r *Router) moved(ctx context.Context, rt *route) (bool, error) {
	e, err := r.fetch(ctx, rt.entry.leaders.CollectionID)
	if errcode.CodeOf(err) == errcode.CollectionNotLoaded {
		return false, err
	}
	if err != nil {
		r.logger.Warn("fetching shard leaders failed", "collection", rt.name, "err", err)
		return false, nil
	}
	return e != rt.entry, nil
}

// log implements readPath.
func (r *Router) log() *slog.Logger { return r.logger }
