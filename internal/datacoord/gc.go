package datacoord

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/storage"
)

// Garbage collection deletes what no record needs any more, in two steps per
// pass (collectGarbage, every Config.GCInterval):
//
//  1. Dropped segments. A segment Dropped (by DropCollection, DropPartition
//     or compaction) keeps its files for Config.DroppedRetention after
//     DroppedAt, so that readers still holding it can finish. Then every file
//     its record lists is deleted, and only then the record. A crash between
//     the two leaves a Dropped record pointing at missing files, which the
//     next pass deletes again (deleting an absent object is not an error).
//     A segment that still has index build tasks waits until
//     collectIndexGarbage has removed them, so no task outlives its segment.
//  2. Orphans. Every key under {root}/insert_log/, stats_log/, delta_log/ and
//     index_files/ is listed, then the records are read. A file is referenced
//     when a segment record (any state, Dropped ones included until step 1
//     removes them) lists its log, when an index task lists it, or when it
//     belongs to the current attempt of an InProgress build. Unreferenced
//     files older than Config.OrphanRetention are deleted: outputs of syncs,
//     builds or compactions that crashed before their meta-store commit,
//     stale build attempts, files written for segments that were dropped
//     meanwhile. Writers put files before they commit the records that name
//     them, so a file younger than the retention may still be claimed; and
//     since listing precedes reading the records, a commit that lands during
//     the pass is seen. Files whose segment or log ID is above the ID of a
//     compaction plan being executed are kept too: they may be its outputs,
//     which no record names until its commit, however long it runs. A key
//     that does not parse as one of the storage key
//     shapes is never deleted; it is logged and counted. Temporary files of
//     writes cut short by a crash (objstore/local's hidden ".tmp-" files,
//     see TempRemover) are deleted past OrphanRetention too.
//
// Index files of deleted build tasks are collected by collectIndexGarbage.
// Channel checkpoints of dropped collections are deleted by DropCollection,
// and the WAL behind every checkpoint by truncateWAL.

// Every object store (objstore/local, objstore/s3) can serve as the Remover.
var _ Remover = objstore.Store(nil)

// TempRemover is implemented by object stores whose Put leaves a hidden
// temporary file behind when the process dies mid-write (objstore/local);
// List never shows such files, so garbage collection asks the store to
// delete those older than the orphan retention.
type TempRemover interface {
	RemoveStaleTemp(ctx context.Context, prefix string, cutoff time.Time) ([]objstore.ObjectInfo, error)
}

// GCStats counts what garbage collection has done since the coordinator
// started. File counts include deletions retried after a failed pass (a
// deletion of an object already gone counts again).
type GCStats struct {
	// Runs is the number of passes, failed ones included.
	Runs int64
	// FilesDeleted is the number of objects deleted.
	FilesDeleted int64
	// BytesDeleted is their total size (from the segment records for files
	// of dropped segments, from the listing for orphans).
	BytesDeleted int64
	// OrphansDeleted is how many of FilesDeleted were orphans.
	OrphansDeleted int64
	// SegmentsDeleted is the number of Dropped segment records removed.
	SegmentsDeleted int64
	// Unparsed is the number of keys the last pass could not parse and left alone.
	Unparsed int64
	// LastRun is when the last pass started, by the coordinator's clock;
	// zero before the first pass.
	LastRun time.Time
}

// gcState is the coordinator's garbage-collection state.
type gcState struct {
	run   sync.Mutex // serialises passes
	mu    sync.Mutex // guards stats
	stats GCStats
}

// gcPass counts what one pass did.
type gcPass struct {
	files, bytes, orphans, segments, unparsed int64
}

// GCStats returns the garbage-collection counters.
func (c *Coordinator) GCStats() GCStats {
	c.gc.mu.Lock()
	defer c.gc.mu.Unlock()
	return c.gc.stats
}

// maybeCollectGarbage runs a pass when GCInterval has passed since the last one.
func (c *Coordinator) maybeCollectGarbage(ctx context.Context) {
	c.gc.mu.Lock()
	last := c.gc.stats.LastRun
	c.gc.mu.Unlock()
	if !last.IsZero() && c.now().Sub(last) < c.cfg.GCInterval {
		return
	}
	if err := c.collectGarbage(ctx); err != nil && ctx.Err() == nil {
		c.logger.Warn("garbage collection failed", "err", err)
	}
}

// collectGarbage runs one garbage-collection pass: files and records of
// Dropped segments past DroppedRetention, then orphans past OrphanRetention.
func (c *Coordinator) collectGarbage(ctx context.Context) error {
	if c.files == nil {
		return nil
	}
	c.gc.run.Lock()
	defer c.gc.run.Unlock()
	now := c.now()
	var p gcPass
	errDropped := c.collectDroppedSegments(ctx, now, &p)
	errOrphans := c.collectOrphans(ctx, now, &p)

	c.gc.mu.Lock()
	st := &c.gc.stats
	st.Runs++
	st.FilesDeleted += p.files
	st.BytesDeleted += p.bytes
	st.OrphansDeleted += p.orphans
	st.SegmentsDeleted += p.segments
	st.Unparsed = p.unparsed
	st.LastRun = now
	c.gc.mu.Unlock()
	if p.files > 0 || p.segments > 0 {
		c.logger.Info("garbage collected", "files", p.files, "bytes", p.bytes, "orphans", p.orphans,
			"segments", p.segments)
	}
	return errors.Join(errDropped, errOrphans)
}

// collectDroppedSegments deletes the files, then the records, of Dropped
// segments whose retention has passed.
func (c *Coordinator) collectDroppedSegments(ctx context.Context, now time.Time, p *gcPass) error {
	cutoff := now.Add(-c.cfg.DroppedRetention).UnixMilli()
	c.mu.Lock()
	hasTask := map[int64]bool{}
	for _, t := range c.tasks {
		hasTask[t.SegmentID] = true
	}
	var due []catalog.SegmentInfo
	for _, s := range c.segments {
		if s.info.State == catalog.SegmentDropped && s.info.DroppedAt < cutoff && !hasTask[s.info.ID] {
			due = append(due, s.info)
		}
	}
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].ID < due[j].ID })
	var errs []error
	for _, info := range due {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := c.deleteSegment(ctx, info, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteSegment deletes a Dropped segment's files, then its record.
func (c *Coordinator) deleteSegment(ctx context.Context, info catalog.SegmentInfo, p *gcPass) error {
	for _, f := range segmentFiles(c.cfg.RootPath, &info) {
		if err := c.files.Delete(ctx, f.key); err != nil {
			return fmt.Errorf("datacoord: gc segment %d: %w", info.ID, err)
		}
		p.files++
		p.bytes += f.size
	}
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	if err := c.kv.Txn(ctx, metastore.Delete(catalog.SegmentKey(info.CollectionID, info.ID))); err != nil {
		return fmt.Errorf("datacoord: gc segment %d: delete record: %w", info.ID, err)
	}
	c.mu.Lock()
	if s, ok := c.segments[info.ID]; ok && s.info.State == catalog.SegmentDropped {
		delete(c.segments, info.ID)
	}
	c.mu.Unlock()
	p.segments++
	return nil
}

// segmentFile is one file a segment record lists.
type segmentFile struct {
	key  string
	size int64
}

// segmentFiles lists the object keys of every file a segment record names:
// insert logs of each field, stats logs (the compound `1` included) and
// delta logs.
func segmentFiles(root string, info *catalog.SegmentInfo) []segmentFile {
	var out []segmentFile
	for _, f := range sortedFields(info.Binlogs) {
		for _, l := range info.Binlogs[f] {
			out = append(out, segmentFile{storage.InsertLogKey(root, info.CollectionID, info.PartitionID, info.ID, f, l.LogID), l.Size})
		}
	}
	for _, f := range sortedFields(info.Statslogs) {
		for _, l := range info.Statslogs[f] {
			out = append(out, segmentFile{storage.StatsLogKey(root, info.CollectionID, info.PartitionID, info.ID, f, l.LogID), l.Size})
		}
	}
	for _, l := range info.Deltalogs {
		out = append(out, segmentFile{storage.DeltaLogKey(root, info.CollectionID, info.PartitionID, info.ID, l.LogID), l.Size})
	}
	return out
}

func sortedFields(m map[int64][]catalog.Binlog) []int64 {
	out := make([]int64, 0, len(m))
	for f := range m {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// logRef identifies a binlog by what its key encodes below the partition:
// kind, segment, field (0 for delta logs) and log ID. Matching on these
// rather than on the whole key keeps a file whose partition directory
// disagrees with its record (which should never happen) out of reach.
type logRef struct {
	kind               storage.KeyKind
	segment, field, id int64
}

// gcRefs is what the records reference, snapshotted for one pass.
type gcRefs struct {
	logs       map[logRef]bool
	indexFiles map[string]bool
	building   map[[2]int64]bool // {buildID, version} of InProgress builds
	// inflight is the smallest ID of a compaction plan being executed (0 =
	// none). Its outputs get segment and log IDs allocated after it, from
	// the same allocator, and are unreferenced until the commit, however
	// long the plan runs: files with a larger segment or log ID are kept.
	inflight int64
}

func (c *Coordinator) gcReferences() gcRefs {
	r := gcRefs{logs: map[logRef]bool{}, indexFiles: map[string]bool{}, building: map[[2]int64]bool{}}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.compaction.plans {
		if p.state == "executing" && (r.inflight == 0 || p.plan.ID < r.inflight) {
			r.inflight = p.plan.ID
		}
	}
	r.inflight = c.importInflight(r.inflight)
	for _, s := range c.segments {
		i := &s.info
		for f, logs := range i.Binlogs {
			for _, l := range logs {
				r.logs[logRef{storage.KindInsertLog, i.ID, f, l.LogID}] = true
			}
		}
		for f, logs := range i.Statslogs {
			for _, l := range logs {
				r.logs[logRef{storage.KindStatsLog, i.ID, f, l.LogID}] = true
			}
		}
		for _, l := range i.Deltalogs {
			r.logs[logRef{storage.KindDeltaLog, i.ID, 0, l.LogID}] = true
		}
	}
	for _, t := range c.tasks {
		for _, f := range t.Files {
			r.indexFiles[f] = true
		}
		if t.State == catalog.IndexInProgress {
			r.building[[2]int64{t.BuildID, t.Version}] = true
		}
	}
	return r
}

func (r gcRefs) has(k storage.ObjectKey, key string) bool {
	switch k.Kind {
	case storage.KindInsertLog, storage.KindStatsLog, storage.KindDeltaLog:
		if r.inflight != 0 && (k.SegmentID > r.inflight || k.LogID > r.inflight) {
			return true // possibly a running compaction's output
		}
	}
	switch k.Kind {
	case storage.KindInsertLog, storage.KindStatsLog:
		return r.logs[logRef{k.Kind, k.SegmentID, k.FieldID, k.LogID}]
	case storage.KindDeltaLog:
		return r.logs[logRef{k.Kind, k.SegmentID, 0, k.LogID}]
	case storage.KindIndexFile:
		return r.indexFiles[key] || r.building[[2]int64{k.BuildID, k.Version}]
	}
	return true // unknown kinds are never garbage
}

// collectOrphans deletes unreferenced files older than OrphanRetention.
func (c *Coordinator) collectOrphans(ctx context.Context, now time.Time, p *gcPass) error {
	root := c.cfg.RootPath
	var objs []objstore.ObjectInfo
	for _, kind := range storage.KeyKinds {
		l, err := c.files.List(ctx, storage.KindPrefix(root, kind))
		if err != nil {
			return fmt.Errorf("datacoord: gc: list %s: %w", kind, err)
		}
		objs = append(objs, l...)
	}
	// Records are read after listing: a file listed above whose record was
	// committed before this point is seen as referenced.
	refs := c.gcReferences()
	cutoff := now.Add(-c.cfg.OrphanRetention)
	var errs []error
	var firstUnparsed string
	for _, o := range objs {
		k, err := storage.ParseObjectKey(root, o.Key)
		if err != nil {
			if p.unparsed == 0 {
				firstUnparsed = o.Key
			}
			p.unparsed++
			c.logger.Debug("gc: leaving an object with an unknown key alone", "key", o.Key, "err", err)
			continue
		}
		if !o.ModTime.Before(cutoff) || refs.has(k, o.Key) {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		if err := c.files.Delete(ctx, o.Key); err != nil {
			errs = append(errs, fmt.Errorf("datacoord: gc orphan: %w", err))
			continue
		}
		c.logger.Debug("gc: deleted orphan", "key", o.Key, "size", o.Size, "modified", o.ModTime)
		p.files++
		p.orphans++
		p.bytes += o.Size
	}
	// Temporary files of writes a crash cut short: half-written outputs.
	if tr, ok := c.files.(TempRemover); ok && ctx.Err() == nil {
		for _, kind := range storage.KeyKinds {
			removed, err := tr.RemoveStaleTemp(ctx, storage.KindPrefix(root, kind), cutoff)
			if err != nil {
				errs = append(errs, fmt.Errorf("datacoord: gc temporary files: %w", err))
			}
			for _, o := range removed {
				c.logger.Debug("gc: deleted temporary file", "key", o.Key, "size", o.Size, "modified", o.ModTime)
				p.files++
				p.orphans++
				p.bytes += o.Size
			}
		}
	}
	c.gc.mu.Lock()
	before := c.gc.stats.Unparsed
	c.gc.mu.Unlock()
	if p.unparsed > 0 && p.unparsed != before { // warn on change, not every pass
		c.logger.Warn("gc: left objects with unknown keys alone", "count", p.unparsed, "example", firstUnparsed)
	}
	return errors.Join(errs...)
}
