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
	// root coordinator's.
	PChannels []string `json:"-"`
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
	if c.RootPath == "" || len(c.PChannels) == 0 {
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
}

// New returns a data node.
func New(cfg Config, log wal.Log, objects Objects, coord Coord, colls Collections, ids Allocator, logger *slog.Logger) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, log: log, objects: objects, coord: coord, colls: colls, ids: ids, logger: logger}, nil
}

// Run consumes every pchannel until ctx ends. A pchannel that fails (its
// WAL cannot be read, the meta store refuses a checkpoint, …) is reported
// through Problems and started again from its checkpoints after a backoff;
// it never stops the other pchannels or the node.
func (n *Node) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, p := range n.cfg.PChannels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.keepPChannel(ctx, p)
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

// keepPChannel runs a pchannel until ctx ends, restarting it with backoff
// after each failure.
func (n *Node) keepPChannel(ctx context.Context, pchannel string) {
	backoff := restartMin
	prog := &progress{reached: -1, failedAt: -1}
	for {
		started := time.Now()
		err := n.runPChannel(ctx, pchannel, prog)
		if ctx.Err() != nil || errors.Is(err, wal.ErrClosed) {
			return
		}
		if time.Since(started) > 2*restartMax {
			backoff = restartMin // it ran fine for a while: a new failure
		}
		n.logger.Error("data node pchannel failed; restarting it from its checkpoints", "pchannel", pchannel,
			"err", err, "backoff", backoff.String())
		prog.failedAt = max(prog.failedAt, prog.reached)
		n.problems.Report(health.Problem{
			Component: "datanode", Subject: "pchannel " + pchannel,
			Reason: fmt.Sprintf("consuming the WAL failed after offset %d (retrying every %s at most): %v",
				prog.failedAt, restartMax, err),
		})
		select {
		case <-ctx.Done():
			return
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

// runPChannel reads one pchannel from the lowest offset any of its
// vchannels needs and dispatches messages to vchannel flowgraphs.
func (n *Node) runPChannel(ctx context.Context, pchannel string, prog *progress) error {
	chans := map[string]*channel{}
	defer func() {
		// Whatever was buffered or queued and not synced is read again at
		// the restart. The workers stop before the pchannel can be
		// started again, so no sync of this run reports after that.
		for _, ch := range chans {
			ch.worker.stop()
			ch.discard(func(*segBuffer) bool { return true })
		}
	}()
	// handled notes an entry done; past the last failure the pchannel is
	// healthy again.
	handled := func(off int64) {
		prog.reached = off
		if prog.failedAt >= 0 && off > prog.failedAt {
			prog.failedAt = -1
			n.problems.Clear("pchannel " + pchannel)
			n.logger.Info("data node pchannel recovered", "pchannel", pchannel, "offset", off)
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
	for _, col := range cols {
		for _, v := range col.VChannels {
			if wal.PChannelOf(v) != pchannel {
				continue
			}
			ch, err := n.openChannel(ctx, col, v, -1)
			if err != nil {
				return err
			}
			chans[v] = ch
			start = min(start, ch.cp.Position.Offset)
		}
	}
	sc, err := wal.OpenScanner(ctx, n.log, pchannel, start)
	if err != nil {
		return err
	}
	defer sc.Close()
	for {
		e, err := sc.Next(ctx)
		var bad *wal.BadRecordError
		if errors.As(err, &bad) {
			n.quarantine("", wal.Entry{Position: wal.Position{PChannel: pchannel, Offset: bad.Offset}}, err)
			handled(bad.Offset)
			continue
		}
		if err != nil {
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
			if m.Type != wal.TypeCreateCollection {
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
			if ch, err = n.openChannel(ctx, col, m.VChannel, e.Position.Offset); err != nil {
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
		}
	}
}

// openChannel restores a vchannel's flowgraph from its recovery info and
// starts its sync worker, which runs until ctx ends or the caller stops it. When
// the vchannel has no checkpoint yet, one is saved at createdAt (the offset
// of its CreateCollection message) or, when that is not known (-1), where
// the recovery info says the vchannel starts.
func (n *Node) openChannel(ctx context.Context, col *catalog.Collection, vchannel string, createdAt int64) (*channel, error) {
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
		if err := n.coord.Synced(ctx, catalog.SyncReport{VChannel: vchannel, Checkpoint: ch.cp}); err != nil {
			return nil, err
		}
	}
	ch.lastOffset = ch.cp.Position.Offset - 1
	ch.worker = n.startWorker(ctx, vchannel, ch.cp)
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
