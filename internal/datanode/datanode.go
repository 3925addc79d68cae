// Package datanode turns the WAL into files in object storage. One reader per
// pchannel feeds a flowgraph per vchannel that keeps only its collection's
// messages, buffers inserted rows per segment and deletes per channel, and
// syncs them as Milvus binlogs, stats logs and delta logs (an L0 segment per
// sync) when a Flush message arrives, when a segment's buffer passes its
// size limit, when all buffers pass the memory high watermark, or
// periodically. Each vchannel's syncs run in order on its own worker
// (syncworker.go), so a slow object store stalls only that vchannel; after
// each sync the worker reports the new files and the channel checkpoint to
// the data coordinator in one step, and a checkpoint is only ever reported
// with (or after) the files of every row before it.
//
// Replay after a restart starts at each vchannel's checkpoint; inserts of a
// segment at or below its synced offset and deletes at or below the
// channel's delta-synced offset are skipped, so nothing is written twice.
//
// Two modes (watch.go): standalone (Config.Watched false) consumes every
// vchannel of every pchannel in Config.PChannels. In cluster mode
// (Watched) the node consumes only the vchannels the coordinator told it
// to watch (WatchChannel, with the channel's assignment epoch, which every
// sync report carries), each with a reader of its own, and lets them go
// on ReleaseChannel after syncing what it buffered. A report the data
// coordinator refuses as stale (the channel moved on; catalog.StaleEpoch)
// stops the vchannel at once, without writing anything more.
package datanode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/wal"
)

// Objects writes and reads object storage.
type Objects interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// SegmentMeta tells which segments exist and where a vchannel's replay
// starts (data coordinator). An error means the coordinator could not
// answer (it may be remote): never "no segments" or "no such segment".
type SegmentMeta interface {
	Recovery(ctx context.Context, vchannel string) (catalog.RecoveryInfo, error)
	Segment(ctx context.Context, id int64) (catalog.SegmentInfo, bool, error)
}

// SyncReporter records a sync's binlogs and checkpoint (data coordinator).
type SyncReporter interface {
	Synced(ctx context.Context, r catalog.SyncReport) error
}

// Coord is the data coordinator as the data node uses it: both of its
// roles.
type Coord interface {
	SegmentMeta
	SyncReporter
}

// Collections resolves collections.
type Collections interface {
	CollectionByID(id int64) (*catalog.Collection, error)
	// AllCollections lists every collection; an error means the
	// coordinator could not answer, never "none".
	AllCollections(ctx context.Context) ([]*catalog.Collection, error)
}

// Allocator hands out TSO-shaped IDs.
type Allocator interface {
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// Config configures a data node.
type Config struct {
	// RootPath is the object-storage root ("files"); the app sets it
	// (app.Config.RootPath).
	RootPath string `json:"-"`
	// PChannels are the pchannels to consume; the app sets them from the
	// root coordinator's. Unused when Watched.
	PChannels []string `json:"-"`
	// Watched makes the node consume only the vchannels it is told to
	// watch (WatchChannel; cluster mode, where the coordinator places the
	// vchannels); false consumes every vchannel of PChannels (standalone).
	// The app sets it.
	Watched bool `json:"-"`
	// SegmentBufferSize syncs a segment's buffer when it reaches this many bytes.
	SegmentBufferSize int64 `json:"segmentBufferSize"`
	// MemoryHighWatermark syncs the largest buffers while all buffers exceed it.
	MemoryHighWatermark int64 `json:"memoryHighWatermark"`
	// SyncPeriod syncs any buffer older than this.
	SyncPeriod time.Duration `json:"syncPeriod"`
	// CheckpointInterval is how often an idle channel's checkpoint is saved.
	CheckpointInterval time.Duration `json:"checkpointInterval"`
}

// Defaults returns the default configuration.
func Defaults() Config {
	return Config{
		RootPath: storage.DefaultRootPath, SegmentBufferSize: 16 << 20, MemoryHighWatermark: 256 << 20,
		SyncPeriod: 10 * time.Minute, CheckpointInterval: 2 * time.Second,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.RootPath == "" || (len(c.PChannels) == 0 && !c.Watched) {
		return errors.New("datanode: root path and pchannels are required")
	}
	if c.SegmentBufferSize <= 0 || c.MemoryHighWatermark <= 0 || c.SyncPeriod <= 0 || c.CheckpointInterval <= 0 {
		return errors.New("datanode: sizes and periods must be positive")
	}
	return nil
}

// Node is a data node.
type Node struct {
	cfg     Config
	log     wal.Log
	objects Objects
	coord   Coord
	colls   Collections
	ids     Allocator
	logger  *slog.Logger

	mu       sync.Mutex
	buffered int64 // bytes buffered across all channels

	quarantined atomic.Int64
	problems    health.Set

	watches watches // the watched vchannels (Watched; watch.go)
}

// New returns a data node.
func New(cfg Config, log wal.Log, objects Objects, coord Coord, colls Collections, ids Allocator, logger *slog.Logger) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Node{
		cfg: cfg, log: log, objects: objects, coord: coord, colls: colls, ids: ids, logger: logger,
		watches: newWatches(),
	}, nil
}

// Run consumes every pchannel until ctx ends (Watched: the vchannels it is
// told to watch, see WatchChannel). A pchannel (or watched vchannel) that
// fails (its WAL cannot be read, the meta store refuses a checkpoint, …)
// is reported through Problems and started again from its checkpoints
// after a backoff; it never stops the others or the node.
func (n *Node) Run(ctx context.Context) error {
	if n.cfg.Watched {
		return n.runWatched(ctx)
	}
	var wg sync.WaitGroup
	for _, p := range n.cfg.PChannels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = n.keepPChannel(ctx, context.Background(), scope{pchannel: p})
		}()
	}
	wg.Wait()
	return nil
}

// Backoff bounds of a failed pchannel's restarts.
const (
	restartMin = 500 * time.Millisecond
	restartMax = time.Minute
)

// scope is what one reader consumes: every vchannel of pchannel
// (standalone), or the one watched vchannel (Watched), owned under epoch.
type scope struct {
	pchannel string
	vchannel string // "" = every vchannel of pchannel
	epoch    int64
}

// subject names the scope in problems and logs.
func (sc scope) subject() string {
	if sc.vchannel != "" {
		return "vchannel " + sc.vchannel
	}
	return "pchannel " + sc.pchannel
}

// wants reports whether the scope consumes vchannel.
func (sc scope) wants(vchannel string) bool {
	if sc.vchannel != "" {
		return vchannel == sc.vchannel
	}
	return wal.PChannelOf(vchannel) == sc.pchannel
}

// keepPChannel runs a scope until ctx ends, restarting it with backoff
// after each failure. It returns why it stopped: ctx's error, the WAL
// closed, or (a watched vchannel) errReleased once release ended and the
// last sync was reported, errFenced, errDropped.
func (n *Node) keepPChannel(ctx, release context.Context, sc scope) error {
	backoff := restartMin
	prog := &progress{reached: -1, failedAt: -1}
	for {
		started := time.Now()
		err := n.runPChannel(ctx, release, sc, prog)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, wal.ErrClosed), errors.Is(err, errReleased), errors.Is(err, errFenced),
			errors.Is(err, errDropped):
			return err
		case release.Err() != nil:
			return errReleased // it failed, so nothing is buffered: nothing to sync
		}
		if time.Since(started) > 2*restartMax {
			backoff = restartMin // it ran fine for a while: a new failure
		}
		n.logger.Error("data node channel failed; restarting it from its checkpoints", "channel", sc.subject(),
			"err", err, "backoff", backoff.String())
		prog.failedAt = max(prog.failedAt, prog.reached)
		n.problems.Report(health.Problem{
			Component: "datanode", Subject: sc.subject(),
			Reason: fmt.Sprintf("consuming the WAL failed after offset %d (retrying every %s at most): %v",
				prog.failedAt, restartMax, err),
		})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release.Done():
			return errReleased
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, restartMax)
	}
}

// progress is how far a pchannel's consumer got, across its restarts.
type progress struct {
	reached  int64 // the last offset handled
	failedAt int64 // the furthest offset reached before a failure
}

// Quarantined is the number of WAL messages the node skipped because it
// could not apply them.
func (n *Node) Quarantined() int64 { return n.quarantined.Load() }

// Problems implements health.Source: failing pchannels and vchannels with
// quarantined messages.
func (n *Node) Problems() []health.Problem { return n.problems.Problems() }

// poisonError marks a message the data node cannot apply however often it
// tries (it is malformed or does not fit the schema), as opposed to a
// failure of storage or the coordinator, which a retry may overcome.
type poisonError struct{ err error }

func (e *poisonError) Error() string { return e.err.Error() }
func (e *poisonError) Unwrap() error { return e.err }

// poison wraps err (nil stays nil) as a poisonError.
func poison(err error) error {
	if err == nil {
		return nil
	}
	return &poisonError{err: err}
}

// quarantine reports a message that cannot be applied and lets the channel
// move past it: logged with its position, counted, and listed by Problems.
func (n *Node) quarantine(vchannel string, e wal.Entry, err error) {
	count := n.quarantined.Add(1)
	n.logger.Error("quarantined a WAL message the data node cannot apply", "vchannel", vchannel,
		"pchannel", e.Position.PChannel, "offset", e.Position.Offset, "type", e.Message.Type.String(), "err", err)
	subject := "vchannel " + vchannel
	if vchannel == "" {
		subject = "pchannel " + e.Position.PChannel + " records"
	}
	n.problems.Report(health.Problem{
		Component: "datanode", Subject: subject,
		Reason: fmt.Sprintf("quarantined %s message at %s offset %d: %v (%d quarantined in all)",
			e.Message.Type, e.Position.PChannel, e.Position.Offset, err, count),
	})
}

// runPChannel reads one pchannel from the lowest offset any of the
// scope's vchannels needs and dispatches messages to vchannel flowgraphs.
// For a watched vchannel, release ending makes it sync what it buffered,
// wait for the report and return errReleased; a report refused as stale
// returns errFenced.
func (n *Node) runPChannel(ctx, release context.Context, sc scope, prog *progress) (err error) {
	pchannel := sc.pchannel
	// A sync report refused as stale cancels rctx with errFenced: the
	// reader and every worker stop at once.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fence := func() { cancel(errFenced) }
	chans := map[string]*channel{}
	defer func() {
		// Whatever was buffered or queued and not synced is read again at
		// the restart. The workers stop before the pchannel can be
		// started again, so no sync of this run reports after that.
		for _, ch := range chans {
			ch.worker.stop()
			ch.discard(func(*segBuffer) bool { return true })
		}
		if errors.Is(context.Cause(rctx), errFenced) || catalog.IsStaleEpoch(err) {
			err = fmt.Errorf("%w: %s: %w", errFenced, sc.subject(), err)
		}
	}()
	ctx = rctx
	// handled notes an entry done; past the last failure the pchannel is
	// healthy again.
	handled := func(off int64) {
		prog.reached = off
		if prog.failedAt >= 0 && off > prog.failedAt {
			prog.failedAt = -1
			n.problems.Clear(sc.subject())
			n.logger.Info("data node channel recovered", "channel", sc.subject(), "offset", off)
		}
	}
	start, err := n.log.End(ctx, pchannel)
	if err != nil {
		return err
	}
	cols, err := n.colls.AllCollections(ctx)
	if err != nil {
		return err
	}
	if sc.vchannel != "" {
		col, err := n.watchedCollection(sc.vchannel)
		if err != nil {
			return err
		}
		cols = []*catalog.Collection{col}
	}
	for _, col := range cols {
		for _, v := range col.VChannels {
			if !sc.wants(v) {
				continue
			}
			ch, err := n.openChannel(ctx, col, v, -1, sc.epoch, fence)
			if err != nil {
				return err
			}
			chans[v] = ch
			start = min(start, ch.cp.Position.Offset)
		}
	}
	sc0, err := wal.OpenScanner(ctx, n.log, pchannel, start)
	if err != nil {
		return err
	}
	defer sc0.Close()
	// A watched vchannel's reads end when release does, except in the
	// middle of a record (its rest must be read before the last sync).
	readCtx := ctx
	if sc.vchannel != "" {
		var stopRead context.CancelFunc
		readCtx, stopRead = context.WithCancel(ctx)
		defer stopRead()
		defer context.AfterFunc(release, stopRead)()
	}
	for {
		next := readCtx
		if sc.vchannel != "" {
			mid := false
			for _, ch := range chans {
				mid = mid || ch.midRecord
			}
			if mid {
				next = ctx
			} else if release.Err() != nil {
				return n.finishRelease(ctx, chans)
			}
		}
		e, err := sc0.Next(next)
		var bad *wal.BadRecordError
		if errors.As(err, &bad) {
			n.quarantine("", wal.Entry{Position: wal.Position{PChannel: pchannel, Offset: bad.Offset}}, err)
			handled(bad.Offset)
			continue
		}
		if err != nil {
			if release.Err() != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
				continue // released: the loop's top syncs and returns
			}
			return err
		}
		m := e.Message
		if m.VChannel == "" {
			for _, ch := range chans {
				if err := ch.tick(ctx, e); err != nil {
					return err
				}
			}
			handled(e.Position.Offset)
			continue
		}
		ch := chans[m.VChannel]
		if ch == nil {
			if m.Type != wal.TypeCreateCollection || !sc.wants(m.VChannel) {
				continue // a vchannel of a dropped collection, or one created before a checkpoint we trust
			}
			id, err := wal.CollectionIDOf(m.VChannel)
			if err != nil {
				n.quarantine(m.VChannel, e, err)
				handled(e.Position.Offset)
				continue
			}
			col, err := n.colls.CollectionByID(id)
			if err != nil {
				continue // dropped since
			}
			if ch, err = n.openChannel(ctx, col, m.VChannel, e.Position.Offset, sc.epoch, fence); err != nil {
				return err
			}
			chans[m.VChannel] = ch
		}
		if err := ch.handle(ctx, e); err != nil {
			var bad *poisonError
			if !errors.As(err, &bad) || ctx.Err() != nil {
				return fmt.Errorf("vchannel %s offset %d: %w", m.VChannel, e.Position.Offset, err)
			}
			n.quarantine(m.VChannel, e, err)
		}
		handled(e.Position.Offset)
		if ch.dropped {
			ch.worker.stop()
			delete(chans, m.VChannel)
			if sc.vchannel != "" {
				return errDropped
			}
		}
	}
}

// openChannel restores a vchannel's flowgraph from its recovery info and
// starts its sync worker, which runs until ctx ends or the caller stops it. When
// the vchannel has no checkpoint yet, one is saved at createdAt (the offset
// of its CreateCollection message) or, when that is not known (-1), where
// the recovery info says the vchannel starts.
// Its sync reports carry epoch; one refused as stale calls fence.
func (n *Node) openChannel(ctx context.Context, col *catalog.Collection, vchannel string, createdAt, epoch int64,
	fence func(),
) (*channel, error) {
	rec, err := n.coord.Recovery(ctx, vchannel)
	if err != nil {
		return nil, err
	}
	ch := &channel{
		node: n, coll: col, vchannel: vchannel, cp: rec.Checkpoint,
		segs: map[int64]*segBuffer{}, synced: map[int64]int64{}, flushed: map[int64]bool{},
		lastSave: time.Now(), lastPeriodic: time.Now(),
	}
	if ch.cp.VChannel == "" {
		ch.cp = catalog.ChannelCheckpoint{VChannel: vchannel, DeltaSyncedOffset: -1}
		ch.cp.Position.Offset = rec.SeekOffset
		if createdAt >= 0 {
			ch.cp.Position.Offset = createdAt
		}
		if err := n.coord.Synced(ctx, catalog.SyncReport{VChannel: vchannel, Epoch: epoch, Checkpoint: ch.cp}); err != nil {
			return nil, err
		}
	}
	ch.lastOffset = ch.cp.Position.Offset - 1
	ch.worker = n.startWorker(ctx, vchannel, epoch, ch.cp, fence)
	for _, s := range rec.Segments {
		if s.Level == catalog.LevelL0 {
			continue
		}
		ch.synced[s.ID] = s.SyncedOffset
		if s.State == catalog.SegmentFlushed {
			ch.flushed[s.ID] = true
		}
	}
	return ch, nil
}

func (n *Node) addBuffered(d int64) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.buffered += d
	return n.buffered
}

// sortedIDs returns map keys in order.
func sortedIDs[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
