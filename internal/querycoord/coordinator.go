package querycoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rgroup"
)

// NodeLoader is a query node's load side as the coordinator uses it: the
// in-process *querynode.Node and queryrpc.Client implement it.
type NodeLoader interface {
	// LoadVChannels loads the collection's vchannels (none: all) and
	// partitions (nil: all) on the node.
	LoadVChannels(ctx context.Context, collectionID int64, partitions []int64, vchannels []string) error
	Release(collectionID int64)
	ReleasePartitions(collectionID int64, partitions []int64)
	// LoadProgress and Segments answer as the proxy's Loader does; a node
	// that cannot answer counts as 0 % and serving nothing.
	LoadProgress(ctx context.Context, collectionID int64) (int64, error)
	Segments(ctx context.Context, collectionID int64) ([]plan.SegmentInfo, error)
}

// Reader is a query node's read side.
type Reader interface {
	Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error)
	Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error)
}

// Node is one query node.
type Node interface {
	NodeLoader
	Reader
}

// Dialer returns the Node of a live query node (a queryrpc.Client on a
// pooled connection to its address, or an in-process node).
type Dialer func(n membership.Node) (Node, error)

// Collections resolves collections by ID and their TTL cut-off (the root
// coordinator).
type Collections interface {
	CollectionByID(id int64) (*catalog.Collection, error)
	// ExpireBefore is the collection's TTL cut-off (0 = no TTL), which a
	// read carries to the query nodes (plan.Read.ExpireBefore).
	ExpireBefore(ctx context.Context, collectionID int64) (uint64, error)
}

// Config configures a Coordinator.
type Config struct {
	// HealInterval is how often replicas that could not be healed are
	// tried again. Default 2s.
	HealInterval time.Duration `json:"healInterval"`
	// SpreadSegments spreads the sealed segments of each shard over the
	// nodes of its replica (queryCoord.spreadSegments, spread.go): its
	// leader serves the growing segments and some sealed ones, worker
	// nodes the others, placed by rows at load, heal and rebalance and
	// every HealInterval (new segments of flushes and compactions). Off:
	// each leader serves every segment of its shards. A replica with a
	// node that does not implement SegmentServer keeps its segments on
	// its leaders.
	SpreadSegments bool `json:"spreadSegments"`
}

// Defaults returns the default configuration.
func Defaults() Config { return Config{HealInterval: 2 * time.Second} }

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.HealInterval <= 0 {
		return fmt.Errorf("querycoord: healInterval %v: want > 0", c.HealInterval)
	}
	return nil
}

// member is a live query node.
type member struct {
	info membership.Node
	node Node
}

// loadedCollection is a collection the coordinator loaded or is loading.
type loadedCollection struct {
	info       *catalog.Collection
	partitions []int64 // nil = all
	replicas   []placement.Replica
	// down holds the replicas that do not serve: a leader died and the
	// heal has not completed.
	down map[int64]bool
	// version is the placement's number (Coordinator.versions), taken
	// anew on every change of replicas (heals, rebalance moves): a read
	// that failed while it changed is tried again.
	version uint64
	// stale holds the nodes that still serve vchannels of the collection
	// they no longer lead (a rebalance's release failed): resync tries again.
	stale map[int64]bool
	// loading is closed when the load ends; failure says why it failed.
	loading chan struct{}
	done    bool
	next    atomic.Uint64 // round-robin over the replicas
}

// Coordinator is the query coordinator. It implements the proxy's
// query-side roles (proxy.Loader, proxy.Reader) over the live query nodes
// that Run follows.
type Coordinator struct {
	cfg    Config
	colls  Collections
	store  *placement.Store
	groups *rgroup.Manager // nil: every node is in the default group
	dial   Dialer
	logger *slog.Logger

	// jobs runs loads, releases and heals one at a time, as Milvus's query
	// coordinator runs a collection's jobs in order.
	jobs sync.Mutex
	// ready is closed once Run has the first list of live nodes.
	ready     chan struct{}
	readyOnce sync.Once

	// versions numbers the placements of every collection: each load,
	// heal and rebalance move takes the next, so no two placements of a
	// collection this coordinator served share a version.
	versions atomic.Uint64

	mu       sync.RWMutex
	live     map[int64]*member
	loaded   map[int64]*loadedCollection
	failures map[int64]error // why a collection's last load failed
}

// New returns a coordinator that places collections with the placement
// records of store (the fenced meta store in cluster mode), keeps the
// query nodes in the resource groups of groups (nil: one default group of
// every node), reaches each query node through dial and resolves
// collections through colls. It has no node until Run follows a
// membership watch.
func New(cfg Config, colls Collections, store *placement.Store, groups *rgroup.Manager, dial Dialer,
	logger *slog.Logger,
) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if colls == nil || store == nil || dial == nil {
		return nil, errors.New("querycoord: collections, placement store and dialer are required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Coordinator{
		cfg: cfg, colls: colls, store: store, groups: groups, dial: dial, logger: logger,
		ready: make(chan struct{}), live: map[int64]*member{}, loaded: map[int64]*loadedCollection{},
		failures: map[int64]error{},
	}, nil
}

// waitReady waits for Run's first list of live nodes.
func (c *Coordinator) waitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		return errcode.New(errcode.ServiceNotReady, "service not ready: the query coordinator has no list of query nodes yet: %v", ctx.Err())
	}
}

// liveNodes returns the live node IDs (sorted) and the number of shard
// leaderships each leads over every loaded collection, the load placement
// balances.
func (c *Coordinator) liveNodes() ([]int64, map[int64]int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ids := slices.Sorted(maps.Keys(c.live))
	load := map[int64]int64{}
	for _, lc := range c.loaded {
		for _, r := range lc.replicas {
			for _, n := range r.Leaders {
				load[n]++
			}
		}
	}
	return ids, load
}

// replicasOf returns a copy of a collection's replicas (healCollection
// replaces them under mu).
func (c *Coordinator) replicasOf(lc *loadedCollection) []placement.Replica {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(lc.replicas)
}

// nodeOf returns the live node with id, or nil.
func (c *Coordinator) nodeOf(id int64) Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if m, ok := c.live[id]; ok {
		return m.node
	}
	return nil
}

// memberOf returns the live node with id, or nil.
func (c *Coordinator) memberOf(id int64) *member {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.live[id]
}

// leaderChannels returns each leader node's vchannels in a replica.
func leaderChannels(r placement.Replica) map[int64][]string {
	out := map[int64][]string{}
	for _, ch := range slices.Sorted(maps.Keys(r.Leaders)) {
		n := r.Leaders[ch]
		out[n] = append(out[n], ch)
	}
	return out
}

// Load loads a collection (partitions nil = all) on replicaNumber replicas
// (0: one, or as many as it is loaded with) in resourceGroups (none: the
// default group; one: all the replicas; else one per replica), or more of
// its partitions when it is loaded. A loaded collection loaded whole with
// another replica number gets that many replicas (resize); its partitions
// loaded with another one fail, as in Milvus.
func (c *Coordinator) Load(ctx context.Context, collectionID int64, partitions []int64, replicaNumber int,
	resourceGroups []string,
) error {
	if err := c.waitReady(ctx); err != nil {
		return err
	}
	c.jobs.Lock()
	defer c.jobs.Unlock()
	c.mu.RLock()
	lc, ok := c.loaded[collectionID]
	c.mu.RUnlock()
	if ok {
		if len(partitions) == 0 && replicaNumber > 0 && replicaNumber != len(c.replicasOf(lc)) {
			// A collection loaded again with another replica number:
			// Milvus 2.6 alters its load config. Loaded by partitions
			// before, it is now loaded whole.
			if err := c.resize(ctx, lc, replicaNumber, resourceGroups); err != nil {
				return err
			}
			c.mu.RLock()
			partial := lc.partitions != nil
			c.mu.RUnlock()
			if partial {
				if err := c.loadMore(ctx, lc, nil, 0); err != nil {
					return err
				}
			}
		} else if err := c.loadMore(ctx, lc, partitions, replicaNumber); err != nil {
			return err
		}
		if len(resourceGroups) == 0 {
			return nil
		}
		return c.regroup(ctx, lc, resourceGroups)
	}
	info, err := c.colls.CollectionByID(collectionID)
	if err != nil {
		return err
	}
	replicas, err := c.plan(ctx, info, replicaNumber, resourceGroups)
	if err != nil {
		c.fail(collectionID, err)
		return err
	}
	lc = &loadedCollection{
		info: info, partitions: slices.Clone(partitions), replicas: replicas,
		down: map[int64]bool{}, stale: map[int64]bool{}, loading: make(chan struct{}),
		version: c.versions.Add(1),
	}
	for _, r := range replicas {
		if len(r.Nodes) == 0 {
			lc.down[r.ID] = true // a reload's replica without a live node
		}
	}
	if len(partitions) == 0 {
		lc.partitions = nil
	}
	c.mu.Lock()
	c.loaded[collectionID] = lc
	delete(c.failures, collectionID)
	c.mu.Unlock()
	err = c.loadReplicas(ctx, lc)
	if err == nil {
		err = c.store.SaveReplicas(ctx, collectionID, replicas)
	}
	c.mu.Lock()
	if err != nil {
		delete(c.loaded, collectionID)
		c.failures[collectionID] = err
	} else {
		lc.done = true
	}
	close(lc.loading)
	c.mu.Unlock()
	if err != nil {
		c.releaseNodes(lc)
		return err
	}
	c.logger.Info("collection loaded", "collection", info.Name, "replicas", len(replicas))
	if err := c.spreadCollection(ctx, collectionID); err != nil {
		// The leaders serve every segment meanwhile; Run tries again.
		c.logger.Warn("sealed segments not spread yet", "collection", info.Name, "err", err)
	}
	return nil
}

// fail records why a load failed.
func (c *Coordinator) fail(collectionID int64, err error) {
	c.mu.Lock()
	c.failures[collectionID] = err
	c.mu.Unlock()
}

// plan places a collection that is not loaded: the stored replicas when
// there are as many as asked (a reload), healed, or new ones in the
// resource groups asked.
func (c *Coordinator) plan(ctx context.Context, info *catalog.Collection, replicaNumber int, resourceGroups []string,
) ([]placement.Replica, error) {
	live, load := c.liveNodes()
	stored, err := c.store.Replicas(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	var replicas []placement.Replica
	reload := len(stored) > 0 && (replicaNumber <= 0 || replicaNumber == len(stored))
	if reload {
		replicas = c.byGroup(stored, live, func(sub []placement.Replica, nodes []int64) []placement.Replica {
			return placement.Heal(sub, nodes, load)
		})
	} else if replicas, err = c.spawn(max(replicaNumber, 1), resourceGroups, live, load); err != nil {
		return nil, err
	}
	serving := 0
	for i, r := range replicas {
		if len(r.Nodes) == 0 {
			// Nothing of it is served until a node is healed in.
			replicas[i].Leaders, replicas[i].Segments = nil, nil
			continue
		}
		replicas[i] = placement.Assign(r, info.VChannels, nil, load)
		serving++
	}
	// A reload (a coordinator that took over, a restart) serves with the
	// stored replicas that still have a live node; one left without any
	// waits, out of service, for the heal loop to give it a node that joins.
	if serving == len(replicas) || (reload && serving > 0) {
		return replicas, nil
	}
	return nil, errcode.New(errcode.ResourceGroupNodeNotEnough, "failed to spawn replica for collection: %s[rg=%s][currentNodeNum=%d][expectedNodeNum=%d]",
		placement.ErrNodeNotEnough, placement.DefaultResourceGroup, len(live), len(replicas))
}

// loadReplicas loads every leader node of every replica, in parallel.
func (c *Coordinator) loadReplicas(ctx context.Context, lc *loadedCollection) error {
	return c.loadOn(ctx, lc, lc.replicas)
}

func errNodeGone(id int64) error {
	return errcode.New(errcode.ChannelNotAvailable, "channel not available: query node %d is gone", id)
}

// loadMore loads more partitions of a loaded collection on its leaders.
func (c *Coordinator) loadMore(ctx context.Context, lc *loadedCollection, partitions []int64, replicaNumber int) error {
	if replicaNumber > 0 && replicaNumber != len(lc.replicas) {
		return errcode.Invalid("can't change the replica number for loaded partitions: invalid parameter[expected=%d][actual=%d]",
			len(lc.replicas), replicaNumber)
	}
	select {
	case <-lc.loading:
	case <-ctx.Done():
		return ctx.Err()
	}
	// As a query node's partition set: none named is all of them; named
	// ones join the loaded set, and make a whole collection's explicit
	// (the proxy names every partition before releasing one of them).
	c.mu.Lock()
	if len(partitions) == 0 {
		lc.partitions = nil
	} else {
		for _, p := range partitions {
			if !slices.Contains(lc.partitions, p) {
				lc.partitions = append(lc.partitions, p)
			}
		}
	}
	c.mu.Unlock()
	return c.loadReplicas(ctx, lc)
}

// releaseNodes releases a collection on every node of its replicas.
func (c *Coordinator) releaseNodes(lc *loadedCollection) {
	c.releaseReplicas(lc.info.ID, lc.replicas)
}

// Release releases a collection on its nodes and drops its replicas.
func (c *Coordinator) Release(collectionID int64) {
	c.jobs.Lock()
	defer c.jobs.Unlock()
	c.mu.Lock()
	lc, ok := c.loaded[collectionID]
	delete(c.loaded, collectionID)
	delete(c.failures, collectionID)
	c.mu.Unlock()
	if ok {
		c.releaseNodes(lc)
	}
	if err := c.store.DropReplicas(context.Background(), collectionID); err != nil {
		c.logger.Warn("replicas of a released collection not dropped", "collection", collectionID, "err", err)
	}
}

// ReleasePartitions releases partitions of a loaded collection on its
// nodes.
func (c *Coordinator) ReleasePartitions(collectionID int64, partitions []int64) {
	c.jobs.Lock()
	defer c.jobs.Unlock()
	c.mu.Lock()
	lc, ok := c.loaded[collectionID]
	if ok && lc.partitions != nil {
		lc.partitions = slices.DeleteFunc(lc.partitions, func(p int64) bool { return slices.Contains(partitions, p) })
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	for _, r := range lc.replicas {
		for _, id := range r.Nodes {
			if node := c.nodeOf(id); node != nil {
				node.ReleasePartitions(collectionID, partitions)
			}
		}
	}
}

// Loaded reports whether a collection is loaded (its load completed), and
// its loaded partitions (nil = all).
// The coordinator answers from its own state (nil error).
func (c *Coordinator) Loaded(_ context.Context, collectionID int64) (bool, []int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	lc, ok := c.loaded[collectionID]
	if !ok || !lc.done {
		return false, nil, nil
	}
	return true, slices.Clone(lc.partitions), nil
}

// Loading reports whether a load of the collection is in progress.
func (c *Coordinator) Loading(_ context.Context, collectionID int64) (bool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	lc, ok := c.loaded[collectionID]
	return ok && !lc.done, nil
}

// WaitLoad waits until no load of the collection is in progress.
func (c *Coordinator) WaitLoad(ctx context.Context, collectionID int64) error {
	c.mu.RLock()
	lc, ok := c.loaded[collectionID]
	c.mu.RUnlock()
	if !ok {
		return nil
	}
	select {
	case <-lc.loading:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("querycoord: the collection is still loading"), ctx.Err())
	}
}

// LoadProgress is a loading collection's progress: the mean of its
// leaders' (100 once loaded, 0 when not loaded; a leader that cannot
// answer counts as 0).
func (c *Coordinator) LoadProgress(ctx context.Context, collectionID int64) (int64, error) {
	c.mu.RLock()
	lc, ok := c.loaded[collectionID]
	c.mu.RUnlock()
	switch {
	case !ok:
		return 0, nil
	case lc.done:
		return 100, nil
	}
	var sum, n int64
	for _, r := range c.replicasOf(lc) {
		for id := range leaderChannels(r) {
			if node := c.nodeOf(id); node != nil {
				if pct, err := node.LoadProgress(ctx, collectionID); err == nil {
					sum += pct
				}
			}
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	return sum / n, nil
}

// LoadFailure is why the collection's last load failed, or nil.
func (c *Coordinator) LoadFailure(_ context.Context, collectionID int64) (failure, err error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.failures[collectionID], nil
}

// Segments lists the segments the collection's nodes serve (leaders and
// workers), each with the nodes serving it (one per replica, two while a
// segment moves). A node that cannot answer is left out, as one gone.
func (c *Coordinator) Segments(ctx context.Context, collectionID int64) ([]plan.SegmentInfo, error) {
	c.mu.RLock()
	lc, ok := c.loaded[collectionID]
	c.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	byID := map[int64]*plan.SegmentInfo{}
	for _, r := range c.replicasOf(lc) {
		for _, id := range r.Nodes { // leaders and workers
			node := c.nodeOf(id)
			if node == nil {
				continue
			}
			segs, err := node.Segments(ctx, collectionID)
			if err != nil {
				continue
			}
			for _, s := range segs {
				if have, ok := byID[s.ID]; ok {
					have.NodeIDs = append(have.NodeIDs, id)
					continue
				}
				s.NodeIDs = []int64{id}
				byID[s.ID] = &s
			}
		}
	}
	out := make([]plan.SegmentInfo, 0, len(byID))
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out = append(out, *byID[id])
	}
	return out, nil
}

// Replicas is where a loaded collection's replicas run: their nodes,
// shard leaders, the nodes' addresses and resource groups. The error is
// always nil in process; the signature is the proxy's Loader role, which
// a remote query coordinator implements too.
func (c *Coordinator) Replicas(_ context.Context, collectionID int64) ([]plan.Replica, error) {
	return c.replicas(collectionID), nil
}

// replicas is Replicas's answer.
func (c *Coordinator) replicas(collectionID int64) []plan.Replica {
	c.mu.RLock()
	defer c.mu.RUnlock()
	lc, ok := c.loaded[collectionID]
	if !ok {
		return nil
	}
	out := make([]plan.Replica, 0, len(lc.replicas))
	for _, r := range lc.replicas {
		addrs := map[int64]string{}
		for _, n := range r.Nodes {
			if m, ok := c.live[n]; ok {
				addrs[n] = m.info.Address
			}
		}
		out = append(out, plan.Replica{
			ID: r.ID, Nodes: slices.Clone(r.Nodes), Leaders: maps.Clone(r.Leaders), Addresses: addrs,
			ResourceGroup: r.Group(),
		})
	}
	return out
}

// Nodes lists the live query nodes the coordinator places work on, by ID.
func (c *Coordinator) Nodes() []membership.Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]membership.Node, 0, len(c.live))
	for _, id := range slices.Sorted(maps.Keys(c.live)) {
		out = append(out, c.live[id].info)
	}
	return out
}
