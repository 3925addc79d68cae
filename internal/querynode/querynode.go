// Package querynode serves reads of loaded collections. For each vchannel of
// a loaded collection a delegator tails the WAL into growing segments and
// holds the flushed (sealed) segments loaded from object storage; when the
// WAL shows a segment was flushed, the delegator loads its binlogs and swaps
// the growing copy for the sealed one under its lock, so a read sees each row
// exactly once. Reads wait until every delegator's time-tick (tsafe) has
// passed the guarantee timestamp, then read at that tsafe with MVCC. A read
// with ignore_growing (plan.Read.IgnoreGrowing) reads the sealed segments
// only. A read that names a partition that is not loaded is refused with
// code 201, "partition not loaded", as in Milvus.
//
// A shard leader may serve only some of its vchannel's sealed segments:
// the query coordinator gives others to worker nodes (a distribution), and
// the leader's reads fan out to them (worker.go).
//
// Node.Run owns the delegators' goroutines (lifecycle.go). Load builds a
// collection's delegators without the node-wide lock and installs them
// under it, so a load never stalls the reads of other collections; a
// Release during a load wins. A delegator that stops on an error (its WAL
// cannot be read, a panic) fails its collection at once: reads get 503,
// "channel not available" (101 when it stops before its load is done), and
// LoadFailure and Problems say why, until the collection is loaded again.
//
// # Loading
//
// A collection is served only once whole: a read of a collection whose
// load is in progress is refused with 101, "collection not loaded …: still
// loading (N%)", never answered from the sealed segments attached so far.
// Meanwhile GetLoadState says Loading and LoadProgress grows: the sealed
// segments attached count for 90 %, the WAL replay for the rest (reads of
// an installed collection wait for its tsafe, so the replay never shows
// half). A collection's vchannels build in parallel, each loading its sealed
// segments a few at a time. LoadAll is a restart's reload: every collection
// is registered as loading before it returns (so the API may serve at once,
// app.Server) and they build in the background, a bounded number at a time.
//
// # Each vector held once
//
// A sealed segment loads its finished index files before its binlogs
// (loader.go, index.go). Index files are decoded as they stream from
// object storage (Objects.Open), straight into the index's structures,
// with no copy of the whole file. A float vector field (not nullable)
// whose index stores the raw vectors bit for bit, index.RawVectors (HNSW
// under L2 and IP), is not decoded from its binlogs: the segment's column
// is the index's vectors (segment.ShareColumn), so output fields, exact,
// range and iterator searches, group-by and rerank read the same memory
// the graph walks. An index that finishes after the segment loaded swaps
// the decoded column for its vectors once they compare equal bit for bit.
// Indexes that keep vectors otherwise (normalised under COSINE, grouped by
// list in IVF_FLAT, quantised) leave the column; FLAT and BIN_FLAT build
// nothing, so their column is already the only copy. A damaged index file
// fails only its own attach: the field is read from its binlogs and the
// segment is searched exactly. Growing segments, and the data node's sync,
// compaction and index builds, read binlogs and never a loaded segment.
//
// # Memory-mapped data (mmap.enabled)
//
// With mmap on (mmap.go: Config.Mmap, Milvus's queryNode.mmap.*, overridden
// by the collection property, and that by the field's type parameter or
// the index's parameter mmap.enabled), a sealed segment's index files and
// fixed-width columns are served from read-only mappings of local cache
// files (package mmapcache, under Config.Mmap.Dir): an HNSW or IVF index
// file is copied there verbatim and decoded in place (indexfile's Mapped
// reads; registry.Type.Mappable), so its arrays point into the mapping and
// not the Go heap; a column is decoded from its binlogs once and written
// as a column file (package colfile). Every load checks what it maps as it
// checks a download; a cache file that fails is rewritten and the rebuild
// logged. A segment owns its mappings and unmaps them when its last holder
// releases it (segment Holders): every read acquires the segments it
// reads (snapshot, selectSegments) and releases them when done, and the
// delegator releases its own hold when the segment leaves it (a release,
// a compaction, a stop), so nothing is unmapped under a read. A segment
// dropped for good (compacted away) also loses its cache files; a released
// one keeps them for the next load. The files of dropped collections,
// partitions and indexes are collected by Run (collectCache, mmap.go): at
// start, after each drop the data coordinator signals (DropNotifier) and
// every MmapConfig.CollectInterval, every file whose segment is gone or
// dropped, or whose index build is no longer a finished one of an
// existing index, is removed; a mapping a read still holds stays valid
// and its blocks are freed when it is unmapped.
//
// # Indexes kept on disk (DISKANN)
//
// An index type that keeps its file on disk (registry.OnDisk) is always
// loaded from a local cache copy of its file, whatever mmap.enabled says:
// the copy is opened for reads by position (mmapcache.File, pread, not a
// mapping) and the index holds only what its format loads (DISKANN: PQ
// codebooks and codes) and reads node records from the file per search.
// The segment owns the open file as it owns mappings, a damaged copy is
// rewritten and logged, and the files are collected like mapped ones.
// Without a cache directory the file is read into the heap, with a
// warning.
package querynode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/mmapcache"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/wal"
)

// Objects reads object storage: Get for binlogs and delta logs, Open for
// index files, which are decoded as they stream (objstore.Store).
type Objects interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
}

// SegmentMeta tells which segments exist and where a vchannel's replay
// starts (data coordinator). An error means the coordinator could not
// answer (it may be remote): never "no segments" or "no such segment".
type SegmentMeta interface {
	Recovery(ctx context.Context, vchannel string) (catalog.RecoveryInfo, error)
	Segment(ctx context.Context, id int64) (catalog.SegmentInfo, bool, error)
}

// IndexMeta tells which indexes a collection has and which of them are
// built for a segment (data coordinator). An error means the coordinator
// could not answer, never "no indexes".
type IndexMeta interface {
	SegmentIndexes(ctx context.Context, segmentID int64) ([]catalog.IndexTask, error)
	Indexes(ctx context.Context, collectionID int64) ([]catalog.IndexInfo, error)
}

// DropNotifier tells when the catalog dropped segments or indexes: the
// channel Dropped returns is closed at the next drop (the in-process data
// coordinator). It is optional: a Segments that does not implement it (a
// remote coordinator's client) leaves the mmap cache to be collected
// every Mmap.CollectInterval.
type DropNotifier interface {
	Dropped() <-chan struct{}
}

// DropWaiter is DropNotifier across processes (a remote coordinator's
// client): WaitDropped returns the catalog's drop generation once it
// differs from after, or when wait passes. It is optional too; a Segments
// that implements neither leaves the mmap cache to the timer.
type DropWaiter interface {
	WaitDropped(ctx context.Context, after uint64, wait time.Duration) (uint64, error)
}

// Segments is the data coordinator as the query node uses it: its roles.
type Segments interface {
	SegmentMeta
	IndexMeta
}

// Collections resolves collections by ID.
type Collections interface {
	CollectionByID(id int64) (*catalog.Collection, error)
	// ExpireBefore is the collection's TTL cut-off: rows inserted before it
	// are expired and invisible (0 = no TTL). An error means the
	// coordinator could not answer, never "no TTL".
	ExpireBefore(ctx context.Context, collectionID int64) (uint64, error)
}

// Ticker makes a pchannel emit a time tick now.
type Ticker interface {
	Tick(ctx context.Context, pchannel string) (uint64, error)
}

// Config configures a query node.
type Config struct {
	// RootPath is the object-storage root of binlogs ("files"); the app
	// sets it (app.Config.RootPath).
	RootPath string `json:"-"`
	// Mmap is Milvus's queryNode.mmap.*: which loaded data is served from
	// memory-mapped local cache files by default.
	Mmap MmapConfig `json:"mmap"`
	// GrowingReserve is the address space, in bytes, reserved outside the
	// Go heap for each growing segment's fixed-width columns and
	// timestamps (segment.NewGrowing), one slot per column for the same
	// number of rows: memory is committed page by page as rows arrive, so
	// it bounds the rows a segment keeps off the heap, not what they cost.
	// 0 keeps growing rows on the Go heap.
	GrowingReserve int64 `json:"growingReserve"`
	// SealedOffHeap copies the fixed-width columns, timestamps and key
	// permutation of a segment loaded from its binlogs into memory outside
	// the Go heap, of their exact size (segment.MoveOffHeap); mapped and
	// index-shared columns stay as they are. false keeps them on the heap.
	SealedOffHeap bool `json:"sealedOffHeap"`
}

// DefaultGrowingReserve is Config.GrowingReserve's default: 1 GiB a
// segment, several times what a growing segment holds before the data
// coordinator seals it (segmentMaxSize × sealProportion, ~123 MiB by
// default).
const DefaultGrowingReserve = 1 << 30

// Defaults returns the default configuration.
func Defaults() Config {
	return Config{
		RootPath: storage.DefaultRootPath, Mmap: MmapConfig{CollectInterval: DefaultCollectInterval},
		GrowingReserve: DefaultGrowingReserve, SealedOffHeap: true,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.RootPath == "" || objstore.ValidateKey(c.RootPath) != nil {
		return fmt.Errorf("querynode: root path %q is not a valid object key", c.RootPath)
	}
	if c.GrowingReserve < 0 || c.GrowingReserve > maxGrowingReserve {
		return fmt.Errorf("querynode: growing reserve %d is not in [0, %d]", c.GrowingReserve, int64(maxGrowingReserve))
	}
	return nil
}

// maxGrowingReserve bounds GrowingReserve (64 GiB a segment).
const maxGrowingReserve = 64 << 30

// Node is a query node.
type Node struct {
	cfg     Config
	log     wal.Log
	objects Objects
	segs    Segments
	colls   Collections
	ticker  Ticker
	pins    *wal.Pins // nil: nothing truncates the WAL
	logger  *slog.Logger

	// mu guards the node's tables. It is never held across I/O: Load
	// builds delegators without it and installs them under it.
	mu          sync.RWMutex
	collections map[int64]*collection
	// loading holds the loads in progress (not serving yet): a second Load
	// of the collection joins the first, a Release cancels it.
	loading map[int64]*loading
	// failed holds the collections whose last load failed, or that stopped
	// serving (cleared by the next Load or a Release): a delegator that
	// cannot read its vchannel or a segment that cannot be loaded stops its
	// collection, never the node.
	failed map[int64]loadFailure
	// workers holds the worker shards (worker.go): collection → vchannel
	// → the sealed segments it serves for the vchannel's shard leader on
	// another node. workMu serialises their loads and releases.
	workers map[int64]map[string]*workerShard
	workMu  sync.Mutex
	// dialWorker reaches the workers of the shards the node leads.
	dialWorker WorkerDialer
	// closed is set by Close (when Run ends): no load starts after it.
	closed bool
	// loads counts the Load calls in progress; serving counts the
	// delegators' goroutines. Close waits for both.
	loads   sync.WaitGroup
	serving sync.WaitGroup
	// quarantined counts the WAL messages the delegators could not apply
	// and skipped; quarantine lists them by vchannel.
	quarantined atomic.Int64
	quarantine  health.Set
	// cache holds the mapped copies of index files, opened on first use
	// (mmapCache).
	cacheOnce sync.Once
	cache     *mmapcache.Cache
	cacheErr  error
}

// loadFailure is why a collection's load failed, or why it stopped serving.
type loadFailure struct {
	name string
	err  error
	at   time.Time
	// vchannel is the vchannel whose delegator stopped after the load was
	// done ("" for a load that failed).
	vchannel string
}

// collection is a loaded collection: one delegator per vchannel.
type collection struct {
	info       *catalog.Collection
	partitions map[int64]bool // loaded partitions; nil = all
	// vchannels are the vchannels the node serves (LoadVChannels); nil =
	// all of the collection's.
	vchannels  map[string]bool
	delegators []*delegator
	cancel     context.CancelFunc // stops the delegators (nil until they start)
	wg         sync.WaitGroup
	// readers counts the reads in progress (Node.loaded adds them under
	// Node.mu while the collection is the node's).
	readers sync.WaitGroup
	// progress counts the sealed segments its load has to attach and has
	// attached (GetLoadingProgress while it loads).
	progress segmentProgress
}

// segmentProgress counts a load's sealed segments: total is added as each
// delegator reads its recovery view, done as each segment is attached; an
// attempt that fails takes back what it added (newDelegatorRetrying).
type segmentProgress struct {
	total, done atomic.Int64
}

// New returns a query node. Its delegators pin the WAL offsets they still
// have to read in pins (nil when nothing truncates the WAL).
func New(cfg Config, log wal.Log, objects Objects, segs Segments, colls Collections, ticker Ticker, pins *wal.Pins,
	logger *slog.Logger,
) *Node {
	return &Node{
		cfg: cfg, log: log, objects: objects, segs: segs, colls: colls, ticker: ticker, pins: pins, logger: logger,
		collections: map[int64]*collection{}, loading: map[int64]*loading{}, failed: map[int64]loadFailure{},
		workers: map[int64]map[string]*workerShard{},
	}
}

// LoadFailure returns why the collection's last load failed, or nil.
func (n *Node) LoadFailure(_ context.Context, collectionID int64) (failure, err error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if f, ok := n.failed[collectionID]; ok {
		return f.err, nil
	}
	return nil, nil
}

// Quarantined is the number of WAL messages the delegators skipped because
// they could not apply them.
func (n *Node) Quarantined() int64 { return n.quarantined.Load() }

// Problems implements health.Source: collections whose load failed and
// vchannels with quarantined messages.
func (n *Node) Problems() []health.Problem {
	n.mu.RLock()
	var out []health.Problem
	for _, f := range n.failed {
		reason := "load failed: " + f.err.Error()
		if f.vchannel != "" {
			reason = "stopped serving: " + f.err.Error()
		}
		out = append(out, health.Problem{
			Component: "querynode", Subject: "collection " + f.name,
			Reason: reason, Since: f.at,
		})
	}
	n.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Subject < out[j].Subject })
	return append(out, n.quarantine.Problems()...)
}

// loadAttempts bounds newDelegatorRetrying.
const loadAttempts = 5

// newDelegatorRetrying builds a delegator, starting over from a fresh
// recovery view when an attempt fails: compaction and garbage collection go
// on while the sealed segments load, so a segment of the view the attempt
// started from may be compacted away and its files deleted before they are read.
func newDelegatorRetrying(ctx context.Context, n *Node, info *catalog.Collection, vchannel, pchannel string,
	progress *segmentProgress,
) (*delegator, error) {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		d, err := newDelegator(ctx, n, info, vchannel, pchannel, progress)
		if err == nil || attempt == loadAttempts || ctx.Err() != nil {
			return d, err
		}
		n.logger.Warn("loading a vchannel failed; starting over", "vchannel", vchannel, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

func (c *collection) setPartitions(parts []int64) {
	if len(parts) == 0 {
		c.partitions = nil
		return
	}
	m := map[int64]bool{}
	for p := range c.partitions {
		m[p] = true
	}
	for _, p := range parts {
		m[p] = true
	}
	c.partitions = m
}

// ReleasePartitions removes partitions from a loaded collection's partition set.
func (n *Node) ReleasePartitions(collectionID int64, parts []int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	c, ok := n.collections[collectionID]
	if !ok || c.partitions == nil {
		return
	}
	for _, p := range parts {
		delete(c.partitions, p)
	}
}

// Loading reports whether a load of the collection is in progress: it does
// not serve yet (Loaded is false) and GetLoadState says Loading, as Milvus's
// does while its query nodes load.
func (n *Node) Loading(_ context.Context, collectionID int64) (bool, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	_, ok := n.loading[collectionID]
	return ok, nil
}

// Loaded reports whether a collection is loaded, and its loaded partitions
// (nil = all). The in-process node always answers (nil error).
func (n *Node) Loaded(_ context.Context, collectionID int64) (bool, []int64, error) {
	loaded, parts := n.loadedPartitions(collectionID)
	return loaded, parts, nil
}

// loadedPartitions is Loaded's answer.
func (n *Node) loadedPartitions(collectionID int64) (bool, []int64) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c, ok := n.collections[collectionID]
	if !ok {
		return false, nil
	}
	if c.partitions == nil {
		return true, nil
	}
	out := make([]int64, 0, len(c.partitions))
	for p := range c.partitions {
		out = append(out, p)
	}
	return true, out
}

// loaded returns the loaded collection of a read, or a CollectionNotLoaded
// error; a read that names a partition that is not loaded gets a
// PartitionNotLoaded error, as in Milvus. The read is counted among the
// collection's readers: the caller calls c.readers.Done when it ends (a
// load of another vchannel subset stops the subset it replaces only
// after its reads end).
func (n *Node) loaded(r *plan.Read) (*collection, map[int64]bool, error) {
	collectionID := r.CollectionID
	n.mu.RLock()
	defer n.mu.RUnlock()
	c, ok := n.collections[collectionID]
	if !ok {
		name := fmt.Sprint(collectionID)
		if info, err := n.colls.CollectionByID(collectionID); err == nil {
			name = info.Name
		}
		if f, failed := n.failed[collectionID]; failed {
			if f.vchannel != "" {
				return nil, nil, channelNotAvailable(f.vchannel, name, f.err)
			}
			return nil, nil, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: load failed: %v", name, f.err)
		}
		if l, loading := n.loading[collectionID]; loading {
			// Not served before every sealed segment is attached: a read
			// now would miss their rows.
			return nil, nil, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]: still loading (%d%%)",
				name, l.c.progress.percent(0))
		}
		return nil, nil, errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%s]", name)
	}
	var parts map[int64]bool
	if c.partitions != nil {
		parts = make(map[int64]bool, len(c.partitions))
		for p := range c.partitions {
			parts[p] = true
		}
		for _, p := range r.PartitionIDs {
			if parts[p] {
				continue
			}
			name := fmt.Sprint(p)
			if info, err := n.colls.CollectionByID(collectionID); err == nil {
				for _, part := range info.Partitions {
					if part.ID == p {
						name = part.Name
					}
				}
			}
			return nil, nil, errcode.New(errcode.PartitionNotLoaded, "partition not loaded[partition=%s]", name)
		}
	}
	c.readers.Add(1)
	return c, parts, nil
}

// expireBefore is the read's TTL cut-off: the one its caller resolved, or
// the root coordinator's.
func (n *Node) expireBefore(ctx context.Context, r *plan.Read) (uint64, error) {
	if r.HasExpireBefore {
		return r.ExpireBefore, nil
	}
	return n.colls.ExpireBefore(ctx, r.CollectionID)
}

// readDelegators returns the delegators a read of c covers: those of
// vchannels, or all of them when vchannels is empty. A vchannel the node
// does not serve fails the read with Milvus's "channel not available" (the
// query coordinator routed it here before the shard moved away).
func readDelegators(c *collection, vchannels []string) ([]*delegator, error) {
	if len(vchannels) == 0 {
		return c.delegators, nil
	}
	out := make([]*delegator, 0, len(vchannels))
	for _, v := range vchannels {
		i := slices.IndexFunc(c.delegators, func(d *delegator) bool { return d.vchannel == v })
		if i < 0 {
			return nil, errcode.New(errcode.ChannelNotAvailable, "channel not available[channel=%s]: query node does not serve it for collection %s",
				v, c.info.Name)
		}
		if !slices.Contains(out, c.delegators[i]) {
			out = append(out, c.delegators[i])
		}
	}
	return out, nil
}

// readTimestamp waits for every delegator of the read to pass the
// guarantee timestamp and returns the MVCC timestamp to read at (the
// smallest tsafe).
func (n *Node) readTimestamp(ctx context.Context, ds []*delegator, guarantee uint64, strong bool) (uint64, error) {
	// Strong reads, and reads whose guarantee a delegator has not reached
	// yet, make the pchannel tick now rather than wait for the periodic tick.
	ticks := make([]uint64, len(ds))
	var wg sync.WaitGroup
	errs := make([]error, len(ds))
	for i, d := range ds {
		if !strong && d.currentTSafe() >= guarantee {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ticks[i], errs[i] = n.ticker.Tick(ctx, d.pchannel)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("querynode: tick for read: %w", err)
	}
	read := uint64(0)
	for i, d := range ds {
		ts, err := d.waitTSafe(ctx, max(guarantee, ticks[i]))
		if err != nil {
			return 0, err
		}
		if read == 0 || ts < read {
			read = ts
		}
	}
	return read, nil
}

// partitionSelected reports whether partition p passes both the request's and the load's partition sets.
func partitionSelected(p int64, req map[int64]bool, loaded map[int64]bool) bool {
	if req != nil && !req[p] {
		return false
	}
	return loaded == nil || loaded[p]
}

// Segments lists the segments served for a loaded collection: those of
// the vchannels the node leads (not those it gave workers) and those it
// serves as a worker.
func (n *Node) Segments(_ context.Context, collectionID int64) ([]plan.SegmentInfo, error) {
	return n.segments(collectionID), nil
}

// segments is Segments's answer.
func (n *Node) segments(collectionID int64) []plan.SegmentInfo {
	n.mu.RLock()
	c, ok := n.collections[collectionID]
	var ds []*delegator
	if ok {
		ds = slices.Clone(c.delegators)
	}
	for _, w := range n.workers[collectionID] {
		ds = append(ds, w.d)
	}
	n.mu.RUnlock()
	var out []plan.SegmentInfo
	for _, d := range ds {
		d.mu.RLock()
		for _, s := range d.sealed {
			out = append(out, plan.SegmentInfo{ID: s.ID, PartitionID: s.PartitionID, Rows: int64(s.Len()), Level: s.Level})
		}
		for _, s := range d.growing {
			out = append(out, plan.SegmentInfo{
				ID: s.ID, PartitionID: s.PartitionID, Rows: int64(s.Len()), Growing: true,
				Level: s.Level,
			})
		}
		d.mu.RUnlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Replicas implements the proxy's Loader role: a single query node is the
// collection's one replica, which the proxy reports itself, so it is nil.
func (n *Node) Replicas(context.Context, int64) ([]plan.Replica, error) { return nil, nil }

// VChannels lists the vchannels the node serves for a loaded collection
// (nil when it is not loaded).
func (n *Node) VChannels(collectionID int64) []string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if c, ok := n.collections[collectionID]; ok {
		return c.VChannels()
	}
	return nil
}
