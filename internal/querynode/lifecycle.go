package querynode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/wal"
)

// The node's lifecycle. Run owns every goroutine the node starts: one per
// delegator of a loaded collection, consuming its vchannel. Load builds a
// collection's delegators without the node's lock (reading sealed segments
// from object storage and replaying the WAL take as long as they take) and
// installs them under it; Release and Close stop them and wait for them.
//
//	Load ──build (no lock)──▶ install (lock) ──▶ serving ──Release/Close──▶ gone
//	   ╰─ a Release/Close meanwhile wins: what was built is stopped
//	serving ──a delegator stops on an error──▶ failed (reads, GetLoadState
//	                                            and Problems say why)

// errStopped refuses a Load once the node has stopped.
var errStopped = errors.New("querynode: stopped")

// loading is a load in progress.
type loading struct {
	c      *collection
	ctx    context.Context    // the build's
	cancel context.CancelFunc // cancels the build (Release, Close)
	// released is set (under Node.mu) by a Release or Close during the
	// load: the load stops what it built and fails.
	released bool
	done     chan struct{} // closed once installed or failed; err says which
	err      error
}

// Run runs the query node until ctx ends, then releases every collection
// and waits for the goroutines of their delegators. Meanwhile it collects
// the mmap cache files of dropped data (collectLoop). A delegator that stops
// on an error stops its collection (reported by LoadFailure, Problems and
// reads), never the node, so Run returns nil. A node that is not Run is
// stopped by Close.
func (n *Node) Run(ctx context.Context) error {
	n.collectLoop(ctx)
	return n.Close()
}

// Close releases every collection, stops the loads in progress and waits
// for every goroutine of the node; Loads after it fail. It is idempotent.
func (n *Node) Close() error {
	n.mu.Lock()
	n.closed = true
	cs := n.collections
	n.collections = map[int64]*collection{}
	for _, l := range n.loading {
		l.released = true
		l.cancel()
	}
	n.loading = map[int64]*loading{}
	n.mu.Unlock()
	for _, c := range cs {
		c.stop()
	}
	n.releaseWorkers(0, true)
	n.loads.Wait()
	n.serving.Wait()
	return nil
}

// Load loads a collection (partitions nil = all) and returns once every
// delegator has replayed the WAL up to its end at the time of the call.
// Loading an already loaded collection updates its partition set; a Load
// of a collection that is loading joins that load (and adds its
// partitions). The delegators are built without the node's lock, so reads
// of the other collections go on while this one loads. A Release of the
// collection during the load wins: the load stops and fails with code 101.
//
// replicaNumber and resourceGroups are the proxy's replica_number and
// resource_groups: a node is one replica by itself, so it ignores them
// (the query coordinator places replicas over several nodes and resource
// groups, querycoord; the standalone server checks the groups, app).
func (n *Node) Load(ctx context.Context, collectionID int64, partitions []int64, replicaNumber int, resourceGroups []string) error {
	_, _ = replicaNumber, resourceGroups
	return n.LoadVChannels(ctx, collectionID, partitions, nil)
}

// LoadVChannels is Load of a subset of the collection's vchannels (empty:
// all of them): the node builds delegators, and serves reads, for those
// vchannels only, as a shard leader of a replica that other nodes share
// (querycoord). A collection loaded with another subset is loaded again
// with the new one while the old one serves: the new delegators are built
// (those of the vchannels both share too) and replace the old ones at
// once, so a shard leadership moves to or from the node without a gap in
// its reads (the query coordinator's rebalance); when that load fails the
// old subset keeps serving. A collection still loading with another
// subset is refused: wait for the load or release it first.
func (n *Node) LoadVChannels(ctx context.Context, collectionID int64, partitions []int64, vchannels []string) error {
	l, started, err := n.register(ctx, collectionID, partitions, vchannels)
	if err != nil || l == nil {
		return err
	}
	if started {
		n.run(ctx, l)
	}
	return l.wait(ctx)
}

// LoadRequest is one collection to load (Partitions nil = all).
type LoadRequest struct {
	CollectionID int64
	Partitions   []int64
}

// LoadAll loads collections in the background, as after a restart: each is
// registered as loading before LoadAll returns (GetLoadState says Loading
// and reads are refused with 101 until it serves, never answered from part
// of it), and they build at most limit at a time. The returned channel is
// closed once every load has ended; a load that fails is reported as a
// Load's failure is (LoadFailure, Problems, the log).
func (n *Node) LoadAll(ctx context.Context, reqs []LoadRequest, limit int) <-chan struct{} {
	var ls []*loading
	for _, r := range reqs {
		l, started, err := n.register(ctx, r.CollectionID, r.Partitions, nil)
		switch {
		case err != nil:
			n.logger.Error("loading a collection failed", "collection", r.CollectionID, "err", err)
		case started:
			ls = append(ls, l)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		g := errgroup.Group{}
		g.SetLimit(max(limit, 1))
		for _, l := range ls {
			g.Go(func() error {
				n.run(ctx, l)
				return nil
			})
		}
		_ = g.Wait()
	}()
	return done
}

// register starts a load of a collection, or joins the one in progress
// (started false), under the node's lock. A loaded collection only has its
// partition set updated (l nil). When started, the caller must run l.
func (n *Node) register(ctx context.Context, collectionID int64, partitions []int64, vchannels []string) (l *loading, started bool, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, false, errStopped
	}
	if l, ok := n.loading[collectionID]; ok {
		if err := l.c.sameVChannels(vchannels); err != nil {
			return nil, false, err
		}
		l.c.setPartitions(partitions)
		return l, false, nil
	}
	if c, ok := n.collections[collectionID]; ok {
		want, err := vchannelSubset(c.info, vchannels)
		if err != nil {
			return nil, false, err
		}
		if maps.Equal(want, c.vchannels) {
			c.setPartitions(partitions)
			return nil, false, nil
		}
		// Another subset: built beside c, which serves until install
		// replaces it.
	}
	info, err := n.colls.CollectionByID(collectionID)
	if err != nil {
		return nil, false, err
	}
	subset, err := vchannelSubset(info, vchannels)
	if err != nil {
		return nil, false, err
	}
	delete(n.failed, collectionID) // a new load is a new try
	bctx, cancel := context.WithCancel(ctx)
	l = &loading{c: &collection{info: info, vchannels: subset}, ctx: bctx, cancel: cancel, done: make(chan struct{})}
	l.c.setPartitions(partitions)
	n.loading[collectionID] = l
	n.loads.Add(1)
	return l, true, nil
}

// run builds a registered load's delegators and installs them.
func (n *Node) run(ctx context.Context, l *loading) {
	defer n.loads.Done()
	err := n.build(l.ctx, l.c)
	l.cancel()
	n.install(ctx, l, err)
}

// WaitLoad waits until no load of the collection is in progress (it was
// installed, failed or released), so that Loaded says what it ended as:
// DDL that acts on the loaded state waits for it, as Milvus's query
// coordinator runs a collection's jobs one after another.
func (n *Node) WaitLoad(ctx context.Context, collectionID int64) error {
	n.mu.RLock()
	l, ok := n.loading[collectionID]
	n.mu.RUnlock()
	if !ok {
		return nil
	}
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("querynode: the collection is still loading"), ctx.Err())
	}
}

// build builds a collection's delegators (without the node's lock), its
// vchannels in parallel. On an error the delegators built are kept in
// c.delegators, so that stopping the collection releases their pins.
func (n *Node) build(ctx context.Context, c *collection) error {
	ds := make([]*delegator, len(c.info.VChannels))
	g, gctx := errgroup.WithContext(ctx)
	for i, v := range c.info.VChannels {
		if c.vchannels != nil && !c.vchannels[v] {
			continue
		}
		g.Go(func() error {
			d, err := newDelegatorRetrying(gctx, n, c.info, v, c.info.PChannels[i], &c.progress)
			if err != nil {
				return fmt.Errorf("querynode: load %s: %w", v, err)
			}
			ds[i] = d
			return nil
		})
	}
	err := g.Wait()
	for _, d := range ds {
		if d != nil {
			c.delegators = append(c.delegators, d)
		}
	}
	return err
}

// install ends a load: the collection serves and its delegators start, or,
// when the build failed or a Release came meanwhile, what was built stops.
func (n *Node) install(ctx context.Context, l *loading, err error) {
	c := l.c
	id := c.info.ID
	n.mu.Lock()
	if n.loading[id] == l {
		delete(n.loading, id)
	}
	var replaced *collection // the subset this load replaces
	switch {
	case l.released || n.closed:
		err = errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: released while loading", c.info.Name)
	case err != nil:
		_, serving := n.collections[id]
		if ctx.Err() == nil && !serving {
			n.failed[id] = loadFailure{name: c.info.Name, err: err, at: time.Now()}
		}
		if ctx.Err() == nil {
			n.logger.Error("loading a collection failed", "collection", c.info.Name, "vchannels", c.VChannels(), "err", err)
		}
	default:
		replaced = n.collections[id]
		n.collections[id] = c
		n.start(c)
	}
	l.err = err
	close(l.done)
	n.mu.Unlock()
	if err != nil {
		c.stop()
	}
	if replaced != nil {
		// No read starts on it any more: stop it once those that did end.
		replaced.readers.Wait()
		replaced.stop()
	}
}

// wait waits for the load to end, then for its delegators to catch up.
func (l *loading) wait(ctx context.Context) error {
	select {
	case <-l.done:
	case <-ctx.Done():
		return errors.Join(errors.New("querynode: load interrupted"), ctx.Err())
	}
	if l.err != nil {
		return l.err
	}
	for _, d := range l.c.delegators {
		if err := d.waitCaughtUp(ctx); err != nil {
			return err
		}
	}
	return nil
}

// start starts a collection's delegators. The caller holds n.mu, and the
// node is not closed.
func (n *Node) start(c *collection) {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for _, d := range c.delegators {
		dctx, abort := context.WithCancelCause(ctx)
		d.abort = abort
		c.wg.Add(1)
		n.serving.Add(1)
		go func() {
			defer n.serving.Done()
			defer c.wg.Done()
			defer abort(context.Canceled)
			n.serve(dctx, c, d)
		}()
	}
}

// serve runs a delegator until it stops. One that stops on an error (its
// WAL cannot be read, a panic) stops its collection.
func (n *Node) serve(ctx context.Context, c *collection, d *delegator) {
	err := d.run(ctx)
	d.stopped(err)
	d.unpin()
	d.releaseAll()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, wal.ErrClosed) {
		n.fail(c, d, fmt.Errorf("querynode: vchannel %s: %w", d.vchannel, err))
	}
}

// fail unloads a collection whose delegator stopped on an error and records
// why, so that reads, GetLoadState and Problems report it at once instead
// of waiting; the collection's other delegators stop too. A delegator that
// stops before it has caught up fails the load (reads get 101, "collection
// not loaded"); one that stops later leaves its vchannel without a
// delegator (reads get 503, "channel not available", as in Milvus).
func (n *Node) fail(c *collection, d *delegator, err error) {
	f := loadFailure{name: c.info.Name, err: err, at: time.Now()}
	if d.caughtUp() {
		f.vchannel = d.vchannel
	}
	n.mu.Lock()
	current := n.collections[c.info.ID] == c
	if current {
		delete(n.collections, c.info.ID)
		n.failed[c.info.ID] = f
	}
	n.mu.Unlock()
	c.cancel() // not stop: it would wait for this goroutine
	if current {
		attrs := []any{"collection", c.info.Name, "vchannel", d.vchannel, "err", err}
		if pe, ok := errors.AsType[*panicError](err); ok {
			attrs = append(attrs, "stack", string(pe.stack))
		}
		msg := "a loaded collection stopped serving; it must be loaded again"
		if f.vchannel == "" {
			msg = "loading a collection failed"
		}
		n.logger.Error(msg, attrs...)
	}
}

// Release unloads a collection, or stops its load in progress; releasing
// an unloaded one is not an error. It does not wait for the reads in
// progress: those that have not taken their segments yet fail with 101
// (delegator.snapshot), the others end on the segments they hold.
func (n *Node) Release(collectionID int64) {
	n.mu.Lock()
	c, ok := n.collections[collectionID]
	delete(n.collections, collectionID)
	delete(n.failed, collectionID)
	if l, loading := n.loading[collectionID]; loading {
		l.released = true
		l.cancel()
		delete(n.loading, collectionID)
	}
	n.mu.Unlock()
	if ok {
		c.stop()
	}
	n.releaseWorkers(collectionID, false)
}

// stop stops a collection's delegators, waits for them and releases their
// WAL pins.
func (c *collection) stop() {
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
	for _, d := range c.delegators {
		d.unpin()
		d.releaseAll()
	}
}

// channelNotAvailable is the error of a read of a collection whose
// delegator of vchannel stopped: Milvus's ErrChannelNotAvailable.
func channelNotAvailable(vchannel, collection string, cause error) error {
	return errcode.New(errcode.ChannelNotAvailable, "channel not available[channel=%s]: the shard delegator of collection %s stopped: %v",
		vchannel, collection, cause)
}

// vchannelSubset checks that every vchannel of a load is the collection's
// and returns them as a set (nil: all of them).
func vchannelSubset(info *catalog.Collection, vchannels []string) (map[string]bool, error) {
	if len(vchannels) == 0 {
		return nil, nil
	}
	out := make(map[string]bool, len(vchannels))
	for _, v := range vchannels {
		if !slices.Contains(info.VChannels, v) {
			return nil, errcode.Invalid("vchannel %s is not a vchannel of collection %s", v, info.Name)
		}
		out[v] = true
	}
	if len(out) == len(info.VChannels) {
		return nil, nil // all of them
	}
	return out, nil
}

// sameVChannels refuses a load of a subset of vchannels other than the one
// the collection is loading with.
func (c *collection) sameVChannels(vchannels []string) error {
	want, err := vchannelSubset(c.info, vchannels)
	if err != nil {
		return err
	}
	if maps.Equal(want, c.vchannels) {
		return nil
	}
	return fmt.Errorf("querynode: collection %s is loading with other vchannels (%s); wait for it or release it first",
		c.info.Name, strings.Join(c.VChannels(), ","))
}

// VChannels lists the vchannels the collection is loaded with, in the
// collection's order.
func (c *collection) VChannels() []string {
	var out []string
	for _, v := range c.info.VChannels {
		if c.vchannels == nil || c.vchannels[v] {
			out = append(out, v)
		}
	}
	return out
}
