// Package datacoord is the data coordinator: it owns segment metadata and the
// segment lifecycle Growing → Sealed → Flushed → Dropped, assigns rows to
// segments, decides when to seal (size, idle time, age, memory pressure),
// records what data nodes synced to object storage, keeps channel
// checkpoints, and lets the WAL be truncated behind them.
//
// Sealing is announced through the WAL: a Flush message on the segment's
// vchannel, appended under the pchannel lock that also guards segment
// assignment, so every insert assigned to a segment precedes its Flush
// message. The data node syncs the segment when it reads the message and
// reports it here; only then is the segment Flushed.
//
// The lifecycle only moves forward (the transitions table in policy.go): a
// seal that finds the segment Flushed already leaves it so, and a sync
// report never takes a Sealed segment back to Growing. A sync report for a
// Dropped segment, or for one garbage collection already removed (a data
// node replaying its WAL after a restart), is ignored: a dropped segment
// never comes back. Every change of a
// segment record is computed from the current record, persisted and
// installed as one step under metaMu, so that concurrent writers (a data
// node's sync, a seal, a compaction commit, garbage collection) never
// persist stale copies over each other.
package datacoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/wal"
)

// KV is the part of the meta store the data coordinator uses.
type KV interface {
	Scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error)
	Txn(ctx context.Context, ops ...metastore.Op) error
}

// Allocator hands out TSO-shaped IDs.
type Allocator interface {
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// Appender appends messages built under the pchannel locks (see wal.Writer.AppendBuild).
type Appender interface {
	AppendBuild(ctx context.Context, pchannels []string, build func(ts uint64) (map[string][]wal.Message, error)) (uint64, error)
}

// Channels knows the live collections: their vchannels, and each one's TTL
// cut-off (rows inserted before the returned timestamp have expired; 0 = no TTL).
type Channels interface {
	LiveVChannels() []string
	// StartOffset is where a vchannel's messages start in its pchannel
	// (false when unknown: a collection that predates start offsets).
	StartOffset(vchannel string) (int64, bool)
	// ExpireBefore is the collection's TTL cut-off (0 = none).
	ExpireBefore(ctx context.Context, collectionID int64) (uint64, error)
	// ClusteringKey is the collection's clustering-key field ID (0 = none).
	ClusteringKey(collectionID int64) int64
}

// Remover is the part of object storage garbage collection uses: it lists
// keys under a prefix and deletes objects (objstore.Store semantics).
type Remover interface {
	List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error)
	Delete(ctx context.Context, key string) error
}

// Truncater lets the WAL drop records before an offset.
type Truncater interface {
	Truncate(ctx context.Context, pchannel string, before int64) error
}

// Coordinator is the data coordinator.
type Coordinator struct {
	cfg    Config
	kv     KV
	ids    Allocator
	wal    Appender
	trunc  Truncater
	chans  Channels
	files  Remover
	logger *slog.Logger
	now    func() time.Time

	// metaMu serialises every read-modify-write of segment records (seal,
	// Synced, compaction commits, drops, garbage collection): each computes
	// the new records from the current ones under mu, persists them, and
	// applies them under mu, all while holding metaMu. Without it two writers
	// can persist stale copies in either order, so that the meta store ends
	// up with a record that misses files whose rows the checkpoint already
	// covers (a kill then loses them), or a Sealed segment reverts to Growing.
	// Lock order: metaMu before mu; never held across a WAL append.
	metaMu   sync.Mutex
	mu       sync.Mutex
	segments map[int64]*segment
	cps      map[string]catalog.ChannelCheckpoint
	epochs   map[string]int64 // vchannel → assignment epoch (epoch.go)
	indexes  map[int64]catalog.IndexInfo
	tasks    map[int64]catalog.IndexTask

	indexKick chan struct{}
	schedKick chan struct{}
	// dropped is closed, and replaced, by every drop of segments or
	// indexes (Dropped); guarded by mu.
	dropped chan struct{}
	drops   uint64 // drops signalled so far (WaitDropped's generation)
	// indexPlanMu serialises scheduleIndexTasks, so that two concurrent
	// plans (CreateIndex and the periodic loop) never both create the same
	// missing build.
	indexPlanMu sync.Mutex
	// claimMu serialises the read-modify-writes of claimed index tasks
	// (ClaimIndexTask, FinishIndexTask, ReleaseExecutor), so that a
	// release never overwrites the report it raced with, nor the reverse.
	claimMu sync.Mutex

	compaction compactionState
	gc         gcState     // garbage collection (gc.go)
	assign     assignState // segment assignment and spares (assign.go)
	imports    importState // bulk imports writing segments (import.go)
}

// segment is the coordinator's in-memory view of one segment.
type segment struct {
	info      catalog.SegmentInfo
	rowSize   int64
	assigned  int64 // rows assigned (≥ info.NumRows until synced)
	lastWrite time.Time
	sealing   bool // a Flush message was appended; no more assignments
	// full marks a segment that turned a request away for lack of room
	// (one that would fit an empty segment): it is sealed by size, since
	// assigned rows may stop short of MaxRows forever.
	full bool
	// fenced marks a growing segment that may have a Flush message in the
	// WAL though the meta store does not record it Sealed: one that was
	// growing when the coordinator started (a crash may have come between
	// the append and the seal's record), or one whose Flush append failed
	// in a way that leaves its outcome unknown (see unseal). The data node
	// drops rows that follow a segment's Flush message, so a fenced segment
	// takes no new rows; it is still sealed by the next seal.
	fenced bool
	// claimUnsaved marks a spare claimed in memory (assign.go) whose record
	// still says Spare: the data node's first report persists the claim, and
	// a clean stop persists the ones it has not reported yet (saveClaims).
	claimUnsaved bool
}

// New loads segment metadata and checkpoints from kv.
func New(ctx context.Context, cfg Config, kv KV, ids Allocator, appender Appender, trunc Truncater, chans Channels,
	files Remover, logger *slog.Logger,
) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Coordinator{
		cfg: cfg, kv: kv, ids: ids, wal: appender, trunc: trunc, chans: chans, files: files, logger: logger,
		now: time.Now, segments: map[int64]*segment{}, cps: map[string]catalog.ChannelCheckpoint{},
		epochs:  map[string]int64{},
		indexes: map[int64]catalog.IndexInfo{}, tasks: map[int64]catalog.IndexTask{}, indexKick: make(chan struct{}, 1), dropped: make(chan struct{}),
		schedKick: make(chan struct{}, 1), assign: newAssignState(),
		compaction: compactionState{plans: map[int64]*planState{}, kick: make(chan struct{}, 1)},
	}
	kvs, err := kv.Scan(ctx, catalog.SegmentPrefix)
	if err != nil {
		return nil, fmt.Errorf("datacoord: load segments: %w", err)
	}
	for _, e := range kvs {
		var info catalog.SegmentInfo
		if err := catalog.Unmarshal(e.Value, &info); err != nil {
			return nil, fmt.Errorf("datacoord: decode %s: %w", e.Key, err)
		}
		s := &segment{
			info: info, assigned: info.NumRows, lastWrite: c.now(), sealing: info.State != catalog.SegmentGrowing,
			fenced: info.State == catalog.SegmentGrowing,
		}
		if info.MaxRows > 0 {
			// The inverse of AssignSegment's maxRows = maxSize × sealProportion / rowSize.
			s.rowSize = max(int64(float64(cfg.SegmentMaxSize)*cfg.SealProportion)/info.MaxRows, 1)
		}
		c.segments[info.ID] = s
	}
	kvs, err = kv.Scan(ctx, catalog.CheckpointPrefix)
	if err != nil {
		return nil, fmt.Errorf("datacoord: load checkpoints: %w", err)
	}
	for _, e := range kvs {
		var cp catalog.ChannelCheckpoint
		if err := catalog.Unmarshal(e.Value, &cp); err != nil {
			return nil, fmt.Errorf("datacoord: decode %s: %w", e.Key, err)
		}
		c.cps[cp.VChannel] = cp
	}
	if err := c.loadEpochs(ctx); err != nil {
		return nil, err
	}
	kvs, err = kv.Scan(ctx, catalog.IndexPrefix)
	if err != nil {
		return nil, fmt.Errorf("datacoord: load indexes: %w", err)
	}
	for _, e := range kvs {
		var idx catalog.IndexInfo
		if err := catalog.Unmarshal(e.Value, &idx); err != nil {
			return nil, fmt.Errorf("datacoord: decode %s: %w", e.Key, err)
		}
		c.indexes[idx.ID] = idx
	}
	kvs, err = kv.Scan(ctx, catalog.IndexTaskPrefix)
	if err != nil {
		return nil, fmt.Errorf("datacoord: load index tasks: %w", err)
	}
	for _, e := range kvs {
		var t catalog.IndexTask
		if err := catalog.Unmarshal(e.Value, &t); err != nil {
			return nil, fmt.Errorf("datacoord: decode %s: %w", e.Key, err)
		}
		// An InProgress task keeps its builder and lease: a builder of
		// another process (a data node, through a coordinator failover)
		// may still be building it. A builder that claims again under its
		// name takes its task back at once (ClaimIndexTask), and the
		// process that runs the builders releases those of builders that
		// are gone (ReleaseExecutor): the coordinator role those of every
		// builder that is not a live data node, a standalone process those
		// of every builder but its own.
		c.tasks[t.BuildID] = t
	}
	return c, nil
}

func (c *Coordinator) persist(ctx context.Context, infos []catalog.SegmentInfo, cps ...catalog.ChannelCheckpoint) error {
	return c.persistOps(ctx, infos, cps)
}

// persistOps is persist with more operations in the same transaction.
func (c *Coordinator) persistOps(ctx context.Context, infos []catalog.SegmentInfo, cps []catalog.ChannelCheckpoint,
	extra ...metastore.Op,
) error {
	ops := make([]metastore.Op, 0, len(infos)+len(cps)+len(extra))
	for i := range infos {
		b, err := catalog.Marshal(&infos[i])
		if err != nil {
			return err
		}
		ops = append(ops, metastore.Put(catalog.SegmentKey(infos[i].CollectionID, infos[i].ID), b))
	}
	for i := range cps {
		b, err := catalog.Marshal(&cps[i])
		if err != nil {
			return err
		}
		ops = append(ops, metastore.Put(catalog.CheckpointKey(cps[i].VChannel), b))
	}
	ops = append(ops, extra...)
	if len(ops) == 0 {
		return nil
	}
	if err := c.kv.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("datacoord: persist: %w", err)
	}
	return nil
}

// seal appends Flush messages for the segments of the given vchannels
// (segIDs nil = every growing segment there) and marks them Sealed.
// Every vchannel in vchannels gets a Flush message even when it has no
// segments, so data nodes sync deletes and advance the checkpoint.
func (c *Coordinator) seal(ctx context.Context, vchannels []string, only map[int64]bool) ([]int64, uint64, error) {
	pchs := map[string]bool{}
	for _, v := range vchannels {
		pchs[wal.PChannelOf(v)] = true
	}
	var pchList []string
	for p := range pchs {
		pchList = append(pchList, p)
	}
	sort.Strings(pchList)
	vset := map[string]bool{}
	for _, v := range vchannels {
		vset[v] = true
	}
	var sealed []int64
	ts, err := c.wal.AppendBuild(ctx, pchList, func(uint64) (map[string][]wal.Message, error) {
		sealed = sealed[:0]
		byV := map[string][]int64{}
		c.mu.Lock()
		for _, s := range c.segments {
			if !vset[s.info.VChannel] || s.info.State != catalog.SegmentGrowing || s.sealing || s.info.Level != catalog.LevelL1 ||
				unclaimedSpare(s) {
				continue
			}
			if only != nil && !only[s.info.ID] {
				continue
			}
			s.sealing = true
			byV[s.info.VChannel] = append(byV[s.info.VChannel], s.info.ID)
			sealed = append(sealed, s.info.ID)
		}
		c.mu.Unlock()
		batch := map[string][]wal.Message{}
		for _, v := range vchannels {
			ids := byV[v]
			if only != nil && len(ids) == 0 {
				continue
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
			p := wal.PChannelOf(v)
			batch[p] = append(batch[p], wal.Message{Type: wal.TypeFlush, VChannel: v, Payload: wal.EncodeFlush(ids)})
		}
		return batch, nil
	})
	if err != nil {
		c.unseal(sealed, appendOutcomeUnknown(ctx, err, len(pchList)))
		return nil, 0, fmt.Errorf("datacoord: seal: %w", err)
	}
	sort.Slice(sealed, func(i, j int) bool { return sealed[i] < sealed[j] })
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	var infos []catalog.SegmentInfo
	c.mu.Lock()
	for _, id := range sealed {
		s, ok := c.segments[id]
		// The data node may have flushed it already (it reads the Flush
		// message as soon as it is appended): never move it backwards.
		if !ok || !canTransition(s.info.State, catalog.SegmentSealed) {
			continue
		}
		info := s.info
		info.State, info.FlushTS = catalog.SegmentSealed, ts
		infos = append(infos, info)
	}
	c.mu.Unlock()
	if err := c.persist(ctx, infos); err != nil {
		return sealed, ts, err
	}
	c.apply(infos)
	return sealed, ts, nil
}

// appendOutcomeUnknown reports whether a failed AppendBuild may still have
// made some of its records durable. A wal.Log reports an error only for
// records that are not durable (and wal/local cuts away whatever a failed
// commit wrote), and a failed timestamp allocation writes nothing, so a
// single-pchannel append that failed on its own wrote nothing. The append
// may have landed when ctx ended while the writer waited, or on some
// pchannels of a multi-pchannel batch (the writer reports the first error).
func appendOutcomeUnknown(ctx context.Context, err error, pchannels int) bool {
	return pchannels > 1 || ctx.Err() != nil ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// unseal undoes the sealing marks of a seal whose Flush append failed, so
// that the next seal (a Flush, the seal policy) announces the segments
// again instead of leaving them marked and never sealed. When the append
// surely wrote nothing the segments take rows again; when its outcome is
// unknown they are fenced: a Flush message for them may be in the WAL, and
// rows assigned after it would be dropped by the data node.
func (c *Coordinator) unseal(ids []int64, unknown bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		s, ok := c.segments[id]
		if !ok || s.info.State != catalog.SegmentGrowing {
			continue // flushed (its Flush was durable after all) or dropped meanwhile
		}
		s.sealing = false
		s.fenced = s.fenced || unknown
	}
}

// apply installs persisted records in memory. The caller holds metaMu.
func (c *Coordinator) apply(infos []catalog.SegmentInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, info := range infos {
		s, ok := c.segments[info.ID]
		if !ok {
			s = &segment{sealing: true}
			c.segments[info.ID] = s
		}
		if info.State != catalog.SegmentGrowing {
			s.sealing = true
		}
		s.info = info
		if !info.Spare {
			s.claimUnsaved = false
		}
		if s.assigned < info.NumRows {
			s.assigned = info.NumRows
		}
	}
}

// Flush seals every growing segment of the collection's vchannels and returns
// the sealed segment IDs and the flush timestamp. Use FlushState to wait.
func (c *Coordinator) Flush(ctx context.Context, collectionID int64, vchannels []string) ([]int64, uint64, error) {
	_ = collectionID
	return c.seal(ctx, vchannels, nil)
}

// FlushState reports whether every listed segment is Flushed (or Dropped or
// gone) and every vchannel's checkpoint has passed flushTS. The error is
// always nil in process; the signature is the proxy's role (proxy.Flusher),
// which a remote data coordinator implements too.
func (c *Coordinator) FlushState(_ context.Context, segIDs []int64, vchannels []string, flushTS uint64) (bool, error) {
	return c.flushState(segIDs, vchannels, flushTS), nil
}

// flushState is FlushState's answer.
func (c *Coordinator) flushState(segIDs []int64, vchannels []string, flushTS uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range segIDs {
		if s, ok := c.segments[id]; ok && (s.info.State == catalog.SegmentGrowing || s.info.State == catalog.SegmentSealed) {
			return false
		}
	}
	for _, v := range vchannels {
		if cp, ok := c.cps[v]; !ok || cp.Position.TimeTick < flushTS {
			return false
		}
	}
	return true
}

// Synced records a data node sync in one meta-store transaction: new files,
// row counts, states, the L0 segment and the checkpoint.
//
// A report whose Epoch is older than the vchannel's (it moved to another
// data node since) is refused with catalog.StaleEpoch and changes
// nothing; a newer one raises the vchannel's epoch (epoch.go).
//
// A report already applied (its answer was lost and the data node sent
// the sync again, with new files) changes nothing and succeeds; see
// applied for how it is recognised. The stored checkpoint never moves
// back.
func (c *Coordinator) Synced(ctx context.Context, r catalog.SyncReport) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	c.mu.Lock()
	raise, err := c.checkEpoch(r)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	stored, hasCP := c.cps[r.VChannel]
	if !hasCP {
		stored = catalog.ChannelCheckpoint{VChannel: r.VChannel, DeltaSyncedOffset: -1}
	}
	var infos []catalog.SegmentInfo
	repeated, fresh := false, false
	for _, ss := range r.Segments {
		s, ok := c.segments[ss.SegmentID]
		if !ok || s.info.State == catalog.SegmentDropped {
			// Every segment is persisted when assigned, before any row can
			// name it, so an unknown one was Dropped and garbage collected. A
			// data node replaying the WAL after a restart reports such a
			// segment (its Flush message, typically) long after compaction or
			// a drop removed it: it must not come back, not even as an empty
			// Flushed record. Files this sync wrote for it are orphans that
			// garbage collection removes.
			continue
		}
		if applied(ss, s.info) {
			repeated = true
			continue
		}
		fresh = fresh || changes(ss)
		info := s.info // copy; maps are cloned below
		info.Binlogs = cloneLogs(info.Binlogs)
		info.Statslogs = cloneLogs(info.Statslogs)
		for f, logs := range ss.Binlogs {
			info.Binlogs[f] = append(info.Binlogs[f], logs...)
		}
		for f, logs := range ss.Statslogs {
			info.Statslogs[f] = append(info.Statslogs[f], logs...)
		}
		if ss.Rows > 0 {
			// Each batch is a sorted run (datanode.writeSegment): the
			// segment is sorted while it holds one batch.
			info.Sorted = info.NumRows == 0
		}
		info.NumRows += ss.Rows
		if info.StartPosition == nil && ss.StartPosition != nil {
			info.StartPosition = ss.StartPosition
		}
		if ss.SyncedOffset > info.SyncedOffset {
			info.SyncedOffset = ss.SyncedOffset
		}
		info.LastSyncAt = c.now().UnixMilli()
		if info.Spare && (ss.Rows > 0 || ss.StartPosition != nil) {
			// A spare claimed before a restart that did not persist the
			// claim: the data node's report is the claim (see assign.go).
			info.Spare, info.PartitionID = false, ss.PartitionID
		}
		if ss.Flushed && info.Spare && info.NumRows == 0 {
			// A spare that never took a row (sealed after a restart): it
			// leaves no segment behind.
			info.State, info.DroppedAt = catalog.SegmentDropped, c.now().UnixMilli()
			infos = append(infos, info)
			continue
		}
		if ss.Flushed {
			if !canTransition(info.State, catalog.SegmentFlushed) {
				c.mu.Unlock()
				return fmt.Errorf("datacoord: segment %d cannot go from %s to Flushed", info.ID, info.State)
			}
			info.State = catalog.SegmentFlushed
		}
		infos = append(infos, info)
	}
	if r.L0 != nil {
		// The deletes of a sync are in its L0 segment, and the report's
		// checkpoint says through which offset (DeltaSyncedOffset, the
		// sync's last message): a data node never writes a delete at or
		// below the stored one again, so an L0 segment reported with a
		// checkpoint not past it is one already recorded (under another
		// ID: each attempt allocates its own).
		if r.Checkpoint.DeltaSyncedOffset <= stored.DeltaSyncedOffset {
			repeated = true
		} else {
			fresh = true
			infos = append(infos, *r.L0)
		}
	}
	if repeated && !fresh {
		c.mu.Unlock()
		c.logger.Info("datacoord: sync report already applied; ignored (its files are orphans)", "vchannel", r.VChannel,
			"epoch", r.Epoch, "checkpoint", r.Checkpoint.Position.Offset)
		return nil
	}
	cp := r.Checkpoint
	if stored.Position.Offset > cp.Position.Offset {
		cp.Position = stored.Position
	}
	cp.DeltaSyncedOffset = max(cp.DeltaSyncedOffset, stored.DeltaSyncedOffset)
	c.mu.Unlock()
	var extra []metastore.Op
	if raise {
		op, err := epochPut(r.VChannel, r.Epoch)
		if err != nil {
			return err
		}
		extra = append(extra, op)
	}
	if err := c.persistOps(ctx, infos, []catalog.ChannelCheckpoint{cp}, extra...); err != nil {
		return err
	}
	c.apply(infos)
	if c.logger.Enabled(ctx, slog.LevelDebug) {
		var flushed []int64
		for _, ss := range r.Segments {
			if ss.Flushed {
				flushed = append(flushed, ss.SegmentID)
			}
		}
		c.logger.Debug("datacoord: synced", "vchannel", r.VChannel, "segments", len(r.Segments), "flushed", flushed,
			"l0", r.L0 != nil, "checkpoint", r.Checkpoint.Position.Offset)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cps[cp.VChannel] = cp
	if raise {
		c.epochs[r.VChannel] = max(c.epochs[r.VChannel], r.Epoch)
	}
	flushed := false
	for _, info := range infos {
		flushed = flushed || (info.State == catalog.SegmentFlushed && info.Level != catalog.LevelL0)
	}
	if flushed && len(c.indexes) > 0 {
		select { // coalescing trigger for Run
		case c.schedKick <- struct{}{}:
		default:
		}
	}
	return nil
}

// applied reports whether ss, a segment's part of a sync report, was
// applied to the segment's record info already: it adds rows or files or
// flushes the segment, and its SyncedOffset is not past the record's.
//
// Every such part of a data node's report is past it: a sync covers the
// vchannel's messages through its last one (SyncedOffset), the node syncs
// a segment's rows only once (a replay skips rows at or below the
// record's SyncedOffset, the reports of one vchannel are applied in
// order), and a segment's Flush message comes after its rows (and no row
// after it). So a part that is not past it is one the coordinator applied
// before: the same sync sent again because its answer was lost (with new
// files: the node writes each attempt anew) or a late copy of an older
// one. A part that only records a start position (SyncedOffset -1) changes
// nothing the second time and is applied.
func applied(ss catalog.SegmentSync, info catalog.SegmentInfo) bool {
	return changes(ss) && ss.SyncedOffset <= info.SyncedOffset
}

// changes reports whether a segment's part of a sync report changes the
// segment's record beyond its start position.
func changes(ss catalog.SegmentSync) bool {
	return ss.Rows > 0 || len(ss.Binlogs) > 0 || len(ss.Statslogs) > 0 || ss.Flushed
}

func cloneLogs(m map[int64][]catalog.Binlog) map[int64][]catalog.Binlog {
	out := make(map[int64][]catalog.Binlog, len(m))
	for k, v := range m {
		out[k] = append([]catalog.Binlog(nil), v...)
	}
	return out
}

// Segment returns a segment's record (false when it has none). The error is
// always nil in process; the signature is the nodes' (querynode.SegmentMeta,
// datanode.SegmentMeta), whose remote coordinator can fail.
func (c *Coordinator) Segment(_ context.Context, id int64) (catalog.SegmentInfo, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.segments[id]
	if !ok {
		return catalog.SegmentInfo{}, false, nil
	}
	return s.info, true, nil
}

// Segments returns the records of a collection's segments that are not
// dropped, by ID. Spares (assign.go) are left out: they hold no rows.
func (c *Coordinator) Segments(collectionID int64) []catalog.SegmentInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []catalog.SegmentInfo
	for _, s := range c.segments {
		if s.info.CollectionID == collectionID && s.info.State != catalog.SegmentDropped && !s.info.Spare {
			out = append(out, s.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RowCount is the number of rows in the collection's live L1 segments
// (partitions nil = all), counting rows assigned to growing segments that
// are not synced yet. Deleted rows are counted until compaction removes them,
// as in Milvus. The error is always nil in process (proxy.SegmentLister's
// signature).
func (c *Coordinator) RowCount(_ context.Context, collectionID int64, partitions []int64) (int64, error) {
	return c.rowCount(collectionID, partitions), nil
}

// rowCount is RowCount's answer.
func (c *Coordinator) rowCount(collectionID int64, partitions []int64) int64 {
	var want map[int64]bool
	if len(partitions) > 0 {
		want = map[int64]bool{}
		for _, p := range partitions {
			want[p] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, s := range c.segments {
		i := &s.info
		if i.CollectionID != collectionID || i.State == catalog.SegmentDropped || i.Level == catalog.LevelL0 {
			continue
		}
		if want != nil && !want[i.PartitionID] {
			continue
		}
		if i.State == catalog.SegmentFlushed {
			n += i.NumRows
		} else {
			n += max(i.NumRows, s.assigned)
		}
	}
	return n
}

// Checkpoint returns a vchannel's checkpoint.
func (c *Coordinator) Checkpoint(vchannel string) (catalog.ChannelCheckpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, ok := c.cps[vchannel]
	return cp, ok
}

// Recovery returns a vchannel's recovery information. The error is always
// nil in process (see Segment).
func (c *Coordinator) Recovery(_ context.Context, vchannel string) (catalog.RecoveryInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, ok := c.cps[vchannel]
	ri := catalog.RecoveryInfo{Checkpoint: cp, SeekOffset: cp.Position.Offset}
	if !ok {
		// No checkpoint yet: the vchannel is read from where it started (its
		// pchannel may have been truncated well past offset 0 before it was
		// created).
		ri.Checkpoint = catalog.ChannelCheckpoint{DeltaSyncedOffset: -1}
		ri.SeekOffset = 0
		if c.chans != nil {
			if start, known := c.chans.StartOffset(vchannel); known {
				ri.SeekOffset = start
			}
		}
	}
	for _, s := range c.segments {
		if s.info.VChannel != vchannel || s.info.State == catalog.SegmentDropped || unclaimedSpare(s) {
			continue
		}
		ri.Segments = append(ri.Segments, s.info)
		if s.info.State != catalog.SegmentFlushed && s.info.StartPosition != nil && s.info.StartPosition.Offset < ri.SeekOffset {
			ri.SeekOffset = s.info.StartPosition.Offset
		}
	}
	sort.Slice(ri.Segments, func(i, j int) bool { return ri.Segments[i].ID < ri.Segments[j].ID })
	return ri, nil
}

// DropCollection marks every segment of the collection Dropped and forgets
// its checkpoints.
func (c *Coordinator) DropCollection(ctx context.Context, collectionID int64, vchannels []string) error {
	if err := c.drop(ctx, func(s *catalog.SegmentInfo) bool { return s.CollectionID == collectionID }, vchannels); err != nil {
		return err
	}
	return c.DropIndex(ctx, collectionID, "")
}

// DropPartition marks every segment of the partition Dropped.
func (c *Coordinator) DropPartition(ctx context.Context, collectionID, partitionID int64) error {
	return c.drop(ctx, func(s *catalog.SegmentInfo) bool {
		return s.CollectionID == collectionID && s.PartitionID == partitionID
	}, nil)
}

func (c *Coordinator) drop(ctx context.Context, match func(*catalog.SegmentInfo) bool, vchannels []string) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	c.mu.Lock()
	var infos []catalog.SegmentInfo
	now := c.now().UnixMilli()
	for _, s := range c.segments {
		if match(&s.info) && canTransition(s.info.State, catalog.SegmentDropped) {
			info := s.info
			info.State = catalog.SegmentDropped
			info.DroppedAt = now
			infos = append(infos, info)
		}
	}
	c.mu.Unlock()
	ops := []metastore.Op{}
	for i := range infos {
		b, err := catalog.Marshal(&infos[i])
		if err != nil {
			return err
		}
		ops = append(ops, metastore.Put(catalog.SegmentKey(infos[i].CollectionID, infos[i].ID), b))
	}
	for _, v := range vchannels {
		ops = append(ops, metastore.Delete(catalog.CheckpointKey(v)), metastore.Delete(catalog.EpochKey(v)))
	}
	if len(ops) > 0 {
		if err := c.kv.Txn(ctx, ops...); err != nil {
			return fmt.Errorf("datacoord: drop: %w", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, info := range infos {
		c.segments[info.ID].info = info
		c.segments[info.ID].sealing = true
		if sp := c.assign.spares[info.VChannel]; sp != nil && sp.info.ID == info.ID {
			delete(c.assign.spares, info.VChannel)
		}
		delete(c.assign.growing, growKey{info.CollectionID, info.PartitionID, info.VChannel})
	}
	for _, v := range vchannels {
		delete(c.cps, v)
		delete(c.epochs, v)
	}
	if len(infos) > 0 {
		c.signalDropLocked()
	}
	return nil
}

// Dropped returns a channel that is closed at the next drop of segments (a
// dropped collection or partition) or indexes, once the catalog says so:
// the query node collects the cache files of what is gone then. Take it
// before reading the catalog, so that no drop goes unseen.
func (c *Coordinator) Dropped() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// signalDropLocked wakes the waiters of Dropped. The caller holds mu.
func (c *Coordinator) signalDropLocked() {
	close(c.dropped)
	c.dropped = make(chan struct{})
	c.drops++
}

// WaitDropped returns the drop generation (the number of drops signalled
// since the coordinator started) once it differs from after, or when wait
// passes or ctx ends: Dropped for a caller in another process, which
// passes the generation it saw last so that no drop goes unseen between
// two calls.
func (c *Coordinator) WaitDropped(ctx context.Context, after uint64, wait time.Duration) (uint64, error) {
	c.mu.Lock()
	gen, ch := c.drops, c.dropped
	c.mu.Unlock()
	if gen != after || wait <= 0 {
		return gen, nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drops, nil
}

// Run applies the seal policy and truncates the WAL behind every checkpoint,
// every CheckInterval, and makes the spare segments assignment asks for
// (assign.go), until ctx ends.
func (c *Coordinator) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.keepSpares(ctx)
	}()
	defer wg.Wait()
	t := time.NewTicker(c.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.saveClaims(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
		case <-c.schedKick:
		}
		if err := c.sealByPolicy(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("seal policy failed", "err", err)
		}
		if err := c.truncateWAL(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("wal truncation failed", "err", err)
		}
		if err := c.runFollowUps(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("compaction follow-up failed", "err", err)
		}
		if _, _, err := c.triggerCompaction(ctx, false, 0, 0); err != nil && ctx.Err() == nil {
			c.logger.Warn("compaction trigger failed", "err", err)
		}
		c.requeueStale(30 * time.Minute)
		if err := c.scheduleIndexTasks(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("index scheduling failed", "err", err)
		}
		if err := c.collectIndexGarbage(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("index garbage collection failed", "err", err)
		}
		c.maybeCollectGarbage(ctx)
	}
}

// saveClaims persists, at a clean stop, the spares claimed since the data
// node last reported them, so the records a stopped server leaves name every
// segment a client was shown. (After a crash the data node's replay persists
// the claim instead; see assign.go.) A failure is logged: the claim is then
// recovered as after a crash.
func (c *Coordinator) saveClaims(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	c.mu.Lock()
	var infos []catalog.SegmentInfo
	for _, s := range c.segments {
		if s.claimUnsaved && s.info.State != catalog.SegmentDropped && !s.info.Spare {
			infos = append(infos, s.info)
		}
	}
	c.mu.Unlock()
	if len(infos) == 0 {
		return
	}
	if err := c.persist(ctx, infos); err != nil {
		c.logger.Warn("datacoord: claimed spares not saved at stop; the data node's replay claims them", "segments", len(infos), "err", err)
		return
	}
	c.apply(infos)
}

func (c *Coordinator) sealByPolicy(ctx context.Context) error {
	c.mu.Lock()
	var stats []growingStat
	vch := map[int64]string{}
	all := make([]catalog.SegmentInfo, 0, len(c.segments))
	var idleSpares []int64
	for _, s := range c.segments {
		if unclaimedSpare(s) {
			continue
		}
		all = append(all, s.info)
		if s.info.State != catalog.SegmentGrowing || s.sealing || s.info.Level != catalog.LevelL1 {
			continue
		}
		if s.info.Spare && s.assigned == 0 && c.now().Sub(s.lastWrite) >= c.cfg.MaxIdle {
			// A spare from before a restart that no replayed row claimed:
			// its flush collects it (Synced drops an empty spare).
			idleSpares = append(idleSpares, s.info.ID)
		}
		stats = append(stats, growingStat{
			ID: s.info.ID, Rows: s.assigned, MaxRows: s.info.MaxRows, RowSize: s.rowSize,
			Full: s.full, CreatedAt: time.UnixMilli(s.info.CreatedAt), LastWrite: s.lastWrite,
		})
		vch[s.info.ID] = s.info.VChannel
	}
	c.mu.Unlock()
	now := c.now()
	ids := append(sealPolicy(c.cfg, stats, now), idleSpares...)
	for _, id := range l0Blockers(c.cfg.Compaction, all, now) {
		if _, growing := vch[id]; growing && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	only := map[int64]bool{}
	vset := map[string]bool{}
	for _, id := range ids {
		only[id] = true
		vset[vch[id]] = true
	}
	var vs []string
	for v := range vset {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	sealed, _, err := c.seal(ctx, vs, only)
	if len(sealed) > 0 {
		c.logger.Info("sealed segments by policy", "segments", sealed)
	}
	return err
}

// truncateWAL lets each pchannel drop records below the smallest offset any
// vchannel on it still needs (its seek offset for recovery).
func (c *Coordinator) truncateWAL(ctx context.Context) error {
	if c.trunc == nil || c.chans == nil {
		return nil
	}
	live := c.chans.LiveVChannels()
	low := map[string]int64{}
	blocked := map[string]bool{}
	for _, v := range live {
		p := wal.PChannelOf(v)
		if _, ok := c.Checkpoint(v); !ok {
			if _, known := c.chans.StartOffset(v); !known {
				// A vchannel without a checkpoint or a start position needs
				// its pchannel from the start.
				blocked[p] = true
				continue
			}
		}
		ri, err := c.Recovery(ctx, v)
		if err != nil {
			return err
		}
		if cur, ok := low[p]; !ok || ri.SeekOffset < cur {
			low[p] = ri.SeekOffset
		}
	}
	for p := range blocked {
		delete(low, p)
	}
	var errs []error
	for p, off := range low {
		if off > 0 {
			errs = append(errs, c.trunc.Truncate(ctx, p, off))
		}
	}
	return errors.Join(errs...)
}

// CreateIndex records an index on a field; an identical existing index is
// not an error. As in Milvus 2.6, a field holds one index, except a JSON
// field (or the dynamic field), which holds one per json_path; an index
// named like an existing one with other parameters, or a second index on
// the same field (same json_path), is refused (indexConflict).
func (c *Coordinator) CreateIndex(ctx context.Context, idx catalog.IndexInfo) error {
	c.mu.Lock()
	for _, old := range c.indexes {
		if old.CollectionID != idx.CollectionID || old.Deleted {
			continue
		}
		same, err := indexConflict(old, idx)
		if same || err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.mu.Unlock()
	id, err := c.ids.Allocate(ctx, 1)
	if err != nil {
		return err
	}
	idx.ID = int64(id)
	b, err := catalog.Marshal(&idx)
	if err != nil {
		return err
	}
	if err := c.kv.Txn(ctx, metastore.Put(catalog.IndexKey(idx.CollectionID, idx.ID), b)); err != nil {
		return fmt.Errorf("datacoord: save index: %w", err)
	}
	c.mu.Lock()
	c.indexes[idx.ID] = idx
	c.mu.Unlock()
	return c.scheduleIndexTasks(ctx)
}

// Indexes lists the live indexes of a collection, by ID. The error is
// always nil in process (see Segment).
func (c *Coordinator) Indexes(_ context.Context, collectionID int64) ([]catalog.IndexInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []catalog.IndexInfo
	for _, idx := range c.indexes {
		if idx.CollectionID == collectionID && !idx.Deleted {
			out = append(out, idx)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// DropIndex marks matching indexes deleted (name "" = all of the collection's).
func (c *Coordinator) DropIndex(ctx context.Context, collectionID int64, name string) error {
	c.mu.Lock()
	var ops []metastore.Op
	var ids []int64
	for _, idx := range c.indexes {
		if idx.CollectionID != collectionID || idx.Deleted || (name != "" && idx.Name != name) {
			continue
		}
		idx.Deleted = true
		b, err := catalog.Marshal(&idx)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		ops = append(ops, metastore.Put(catalog.IndexKey(collectionID, idx.ID), b))
		ids = append(ids, idx.ID)
	}
	c.mu.Unlock()
	if len(ops) == 0 {
		return nil
	}
	if err := c.kv.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("datacoord: drop index: %w", err)
	}
	c.mu.Lock()
	for _, id := range ids {
		idx := c.indexes[id]
		idx.Deleted = true
		c.indexes[id] = idx
	}
	c.signalDropLocked()
	var tasks []catalog.IndexTask
	for _, t := range c.tasks {
		for _, id := range ids {
			if t.IndexID == id && !t.Deleted {
				t.Deleted = true
				tasks = append(tasks, t)
			}
		}
	}
	c.mu.Unlock()
	return c.saveTasks(ctx, tasks...)
}

// collectIndexGarbage deletes the files of deleted build tasks (dropped
// indexes, dropped segments), then the tasks themselves.
func (c *Coordinator) collectIndexGarbage(ctx context.Context) error {
	c.mu.Lock()
	var dead []catalog.IndexTask
	for _, t := range c.tasks {
		s, ok := c.segments[t.SegmentID]
		if t.Deleted || c.indexes[t.IndexID].Deleted || (ok && s.info.State == catalog.SegmentDropped) {
			dead = append(dead, t)
		}
	}
	c.mu.Unlock()
	for _, t := range dead {
		if t.State == catalog.IndexInProgress && t.LeaseUntil > c.now().UnixMilli() {
			continue // a builder may still write files; collect after it finishes or its lease ends
		}
		for _, f := range t.Files {
			if c.files == nil {
				break
			}
			if err := c.files.Delete(ctx, f); err != nil {
				return err
			}
		}
		if err := c.kv.Txn(ctx, metastore.Delete(catalog.IndexTaskKey(t.BuildID))); err != nil {
			return err
		}
		c.mu.Lock()
		delete(c.tasks, t.BuildID)
		c.mu.Unlock()
	}
	return nil
}
