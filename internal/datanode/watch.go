package datanode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/wal"
)

// Channel ownership (cluster mode, Config.Watched).
//
// The coordinator places each vchannel on one data node and tells it:
// WatchChannel starts consuming the vchannel from the data coordinator's
// recovery information (read when the watch starts, so after the
// coordinator fenced the previous owner), ReleaseChannel syncs what the
// vchannel buffered, waits until that sync is reported and stops it, and
// Channels lists what the node watches. Each watched vchannel has its own
// WAL reader over its pchannel, so several nodes, and several vchannels of
// one node, read the same pchannel, each keeping only its vchannel's
// messages (and the pchannel's time ticks). Every sync report carries the
// watch's epoch; one the coordinator refuses as stale (catalog.StaleEpoch:
// the channel moved to another node, which happens when this node was
// declared dead but still ran) stops the vchannel without another write,
// and Channels no longer lists it. A vchannel whose collection is dropped
// stops too. Both methods are idempotent: the coordinator retries them.

// Why a watched vchannel stopped.
var (
	// errReleased: ReleaseChannel asked, and the last sync was reported.
	errReleased = errors.New("datanode: vchannel released")
	// errFenced: the coordinator refused a report of the vchannel as stale.
	errFenced = errors.New("datanode: vchannel fenced (it moved to another data node)")
	// errDropped: the vchannel's collection was dropped.
	errDropped = errors.New("datanode: vchannel dropped")
	// errNotRunning: the node's Run is not running (it ended).
	errNotRunning = errors.New("datanode: not running")
)

// ErrNotWatched is returned by WatchChannel on a node that consumes every
// vchannel (Config.Watched is false).
var ErrNotWatched = errors.New("datanode: the node consumes every vchannel (standalone); it watches none")

// watch is one watched vchannel.
type watch struct {
	vchannel string
	epoch    int64
	release  context.CancelFunc // ends the release context: sync and stop
	cancel   context.CancelFunc // stops at once, without a last sync
	done     chan struct{}      // closed once it stopped
	err      error              // why it stopped; read after done
}

// watchReq asks Run to start a watch.
type watchReq struct {
	vchannel string
	epoch    int64
	reply    chan error
}

// watches is the node's watched vchannels.
type watches struct {
	reqs    chan watchReq
	stopped chan struct{} // closed when runWatched returns
	once    sync.Once

	mu sync.Mutex
	m  map[string]*watch
}

func newWatches() watches {
	return watches{reqs: make(chan watchReq), stopped: make(chan struct{}), m: map[string]*watch{}}
}

func (ws *watches) get(vchannel string) *watch {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.m[vchannel]
}

// runWatched serves WatchChannel until ctx ends, then stops every watched
// vchannel and waits for them.
func (n *Node) runWatched(ctx context.Context) error {
	ws := &n.watches
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		ws.once.Do(func() { close(ws.stopped) })
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case req := <-ws.reqs:
			req.reply <- n.startWatch(ctx, &wg, req)
		}
	}
}

// WatchChannel makes the node consume vchannel, owned under epoch (the
// placement's assignment epoch, positive). It returns once the vchannel's
// reader started; the reader reads the recovery information itself. A
// vchannel watched already under epoch is left as it is; under an older
// epoch it is stopped (without a last sync: the coordinator fenced it) and
// started again under epoch; a newer one refuses the request as stale.
// Run must be running (a watched node runs once: after Run returns, the
// node watches nothing and refuses watches).
func (n *Node) WatchChannel(ctx context.Context, vchannel string, epoch int64) error {
	if !n.cfg.Watched {
		return ErrNotWatched
	}
	if epoch <= 0 {
		return fmt.Errorf("datanode: watch %s: epoch %d: want a positive assignment epoch", vchannel, epoch)
	}
	if _, err := wal.CollectionIDOf(vchannel); err != nil {
		return fmt.Errorf("datanode: watch %q: %w", vchannel, err)
	}
	req := watchReq{vchannel: vchannel, epoch: epoch, reply: make(chan error, 1)}
	select {
	case n.watches.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.watches.stopped:
		return errNotRunning
	}
	return <-req.reply
}

// startWatch starts a watch (Run's goroutine).
func (n *Node) startWatch(ctx context.Context, wg *sync.WaitGroup, req watchReq) error {
	ws := &n.watches
	if old := ws.get(req.vchannel); old != nil {
		switch {
		case old.epoch == req.epoch:
			return nil
		case old.epoch > req.epoch:
			return fmt.Errorf("datanode: watch %s under epoch %d: stale, it is watched under epoch %d",
				req.vchannel, req.epoch, old.epoch)
		}
		old.cancel()
		<-old.done
	}
	wctx, cancel := context.WithCancel(ctx)
	// The release context is not derived from ctx: it only ever ends by
	// release, and is passed along as the signal.
	rel, release := context.WithCancel(context.Background())
	w := &watch{vchannel: req.vchannel, epoch: req.epoch, release: release, cancel: cancel, done: make(chan struct{})}
	ws.mu.Lock()
	ws.m[req.vchannel] = w
	ws.mu.Unlock()
	n.logger.Info("data node watches vchannel", "vchannel", req.vchannel, "epoch", req.epoch)
	sc := scope{pchannel: wal.PChannelOf(req.vchannel), vchannel: req.vchannel, epoch: req.epoch}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.err = n.keepPChannel(wctx, rel, sc)
		ws.mu.Lock()
		if ws.m[w.vchannel] == w {
			delete(ws.m, w.vchannel)
		}
		ws.mu.Unlock()
		n.problems.Clear(sc.subject())
		cancel()
		release()
		close(w.done)
		n.logger.Info("data node stopped vchannel", "vchannel", w.vchannel, "epoch", w.epoch, "why", w.err)
	}()
	return nil
}

// ReleaseChannel stops consuming vchannel: it syncs what the vchannel
// buffered, waits until the coordinator recorded that sync (its checkpoint
// then covers every message the node read) and stops the reader. A
// vchannel the node does not watch is released already (nil). When ctx
// ends first the vchannel stops without its last sync (its next owner
// replays what it had buffered) and the error says so; when the
// coordinator refuses the last sync as stale the error wraps that
// refusal's reason.
func (n *Node) ReleaseChannel(ctx context.Context, vchannel string) error {
	w := n.watches.get(vchannel)
	if w == nil {
		return nil
	}
	w.release()
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel()
		<-w.done
		return fmt.Errorf("datanode: release %s: stopped without its last sync: %w", vchannel, ctx.Err())
	}
	switch {
	case w.err == nil, errors.Is(w.err, errReleased), errors.Is(w.err, errDropped):
		return nil
	}
	return fmt.Errorf("datanode: release %s: %w", vchannel, w.err)
}

// Channels returns the watched vchannels with their epochs.
func (n *Node) Channels() map[string]int64 {
	ws := &n.watches
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := make(map[string]int64, len(ws.m))
	for v, w := range ws.m {
		out[v] = w.epoch
	}
	return out
}

// watchedCollection is the collection of a watched vchannel. Unknown (the
// node's view of the catalog lags) is an error the reader retries.
func (n *Node) watchedCollection(vchannel string) (*catalog.Collection, error) {
	id, err := wal.CollectionIDOf(vchannel)
	if err != nil {
		return nil, err
	}
	col, err := n.colls.CollectionByID(id)
	if err != nil {
		return nil, fmt.Errorf("datanode: collection %d of vchannel %s: %w", id, vchannel, err)
	}
	if !slices.Contains(col.VChannels, vchannel) {
		return nil, fmt.Errorf("datanode: %s is not a vchannel of collection %d (%v)", vchannel, id, col.VChannels)
	}
	return col, nil
}

// finishRelease syncs what the channels buffered, waits until the syncs
// are reported and returns errReleased.
func (n *Node) finishRelease(ctx context.Context, chans map[string]*channel) error {
	for _, v := range slices.Sorted(maps.Keys(chans)) {
		ch := chans[v]
		if err := ch.requestSync(ctx, sortedIDs(ch.segs), withDeletes); err != nil {
			return err
		}
		if err := ch.worker.drain(ctx); err != nil {
			return err
		}
	}
	return errReleased
}
