// Package datanode turns the WAL into files in object storage. One reader per
// pchannel feeds a flowgraph per vchannel that keeps only its collection's
// messages, buffers inserted rows per segment and deletes per channel, and
// syncs them as Milvus binlogs, stats logs and delta logs (an L0 segment per
// sync) when a Flush message arrives, when a segment's buffer passes its
// size limit, when all buffers pass the memory high watermark, or
// periodically. After each sync it reports the new files and the channel
// checkpoint to the data coordinator in one step.
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
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/wal"
)

// Objects writes and reads object storage.
type Objects interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// Coord is the data coordinator as the data node uses it.
type Coord interface {
	Recovery(vchannel string) catalog.RecoveryInfo
	Segment(id int64) (catalog.SegmentInfo, bool)
	Synced(ctx context.Context, r catalog.SyncReport) error
}

// Collections resolves collections.
type Collections interface {
	CollectionByID(id int64) (*catalog.Collection, error)
	AllCollections() []*catalog.Collection
}

// Allocator hands out TSO-shaped IDs.
type Allocator interface {
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// Config configures a data node.
type Config struct {
	// RootPath is the object-storage root ("files").
	RootPath string
	// PChannels are the pchannels to consume.
	PChannels []string
	// SegmentBufferSize syncs a segment's buffer when it reaches this many bytes.
	SegmentBufferSize int64
	// MemoryHighWatermark syncs the largest buffers while all buffers exceed it.
	MemoryHighWatermark int64
	// SyncPeriod syncs any buffer older than this.
	SyncPeriod time.Duration
	// CheckpointInterval is how often an idle channel's checkpoint is saved.
	CheckpointInterval time.Duration
}

// Defaults returns the default configuration.
func Defaults() Config {
	return Config{RootPath: "files", SegmentBufferSize: 16 << 20, MemoryHighWatermark: 256 << 20,
		SyncPeriod: 10 * time.Minute, CheckpointInterval: 2 * time.Second}
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
}

// New returns a data node.
func New(cfg Config, log wal.Log, objects Objects, coord Coord, colls Collections, ids Allocator, logger *slog.Logger) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, log: log, objects: objects, coord: coord, colls: colls, ids: ids, logger: logger}, nil
}

// Run consumes every pchannel until ctx ends or a channel fails.
func (n *Node) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(n.cfg.PChannels))
	var wg sync.WaitGroup
	for _, p := range n.cfg.PChannels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := n.runPChannel(ctx, p)
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, wal.ErrClosed) {
				errs <- fmt.Errorf("datanode: pchannel %s: %w", p, err)
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return errors.Join(collect(errs)...)
}

func collect(ch <-chan error) []error {
	var out []error
	for e := range ch {
		out = append(out, e)
	}
	return out
}

// runPChannel reads one pchannel from the lowest offset any of its
// vchannels needs and dispatches messages to vchannel flowgraphs.
func (n *Node) runPChannel(ctx context.Context, pchannel string) error {
	chans := map[string]*channel{}
	start, err := n.log.End(ctx, pchannel)
	if err != nil {
		return err
	}
	for _, col := range n.colls.AllCollections() {
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
			continue
		}
		ch := chans[m.VChannel]
		if ch == nil {
			if m.Type != wal.TypeCreateCollection {
				continue // a vchannel of a dropped collection, or one created before a checkpoint we trust
			}
			id, err := wal.CollectionIDOf(m.VChannel)
			if err != nil {
				return err
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
			return fmt.Errorf("vchannel %s offset %d: %w", m.VChannel, e.Position.Offset, err)
		}
		if ch.dropped {
			delete(chans, m.VChannel)
		}
	}
}

// openChannel restores a vchannel's flowgraph from its recovery info. When
// the vchannel has no checkpoint yet, one is saved at createdAt (the offset
// of its CreateCollection message) or, when that is not known (-1), where
// the recovery info says the vchannel starts.
func (n *Node) openChannel(ctx context.Context, col *catalog.Collection, vchannel string, createdAt int64) (*channel, error) {
	rec := n.coord.Recovery(vchannel)
	ch := &channel{node: n, coll: col, vchannel: vchannel, cp: rec.Checkpoint,
		segs: map[int64]*segBuffer{}, synced: map[int64]int64{}, flushed: map[int64]bool{},
		lastSave: time.Now(), lastPeriodic: time.Now()}
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
