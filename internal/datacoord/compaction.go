package datacoord

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/catalog"
)

// CompactionConfig tunes automatic compaction.
type CompactionConfig struct {
	// L0Count triggers L0 compaction on a vchannel with at least this many L0 segments.
	L0Count int `json:"l0Count"`
	// L0MaxAge triggers L0 compaction when the oldest L0 segment is this old.
	L0MaxAge time.Duration `json:"l0MaxAge"`
	// L0Size triggers L0 compaction when the delta logs of a vchannel's L0
	// segments reach this many bytes (0 = no size trigger).
	L0Size int64 `json:"l0Size"`
	// SmallProportion marks a segment small when below SegmentMaxSize × this.
	SmallProportion float64 `json:"smallProportion"`
	// MinSmallSegments triggers a mix compaction of a partition's small segments.
	MinSmallSegments int `json:"minSmallSegments"`
	// DeletedRatio triggers compacting a segment whose deleted rows reach this share.
	DeletedRatio float64 `json:"deletedRatio"`
	// ExpiryGrace is how long rows stay past their collection's TTL before
	// an automatic compaction removes them (a manual one removes them at
	// once): until then they are only hidden, so raising the TTL brings them
	// back, as in Milvus, whose periodic compaction leaves them a while.
	ExpiryGrace time.Duration `json:"expiryGrace"`
	// ClusteringMaxRows caps the rows of each L2 segment a clustering
	// compaction writes (0 = derived from SegmentMaxSize and the row size).
	ClusteringMaxRows int64 `json:"clusteringMaxRows"`
}

// DefaultCompaction returns the default compaction settings.
func DefaultCompaction() CompactionConfig {
	return CompactionConfig{
		L0Count: 8, L0MaxAge: 10 * time.Minute, L0Size: 64 << 20, SmallProportion: 0.5, MinSmallSegments: 4,
		DeletedRatio: 0.2, ExpiryGrace: time.Minute,
	}
}

// planState tracks a plan in memory. Plans are not persisted: after a crash
// their inputs are still valid and their half-written outputs are orphans
// that garbage collection removes; the triggers plan them again.
type planState struct {
	plan      catalog.CompactionPlan
	forced    bool
	state     string // "pending", "executing", "completed", "failed"
	err       string
	claimedAt time.Time
}

// compactionState is the coordinator's compaction bookkeeping.
type compactionState struct {
	// trigger serialises triggers (the Run loop's, follow-ups and
	// ManualCompaction): the busy vchannels are read and the new plans
	// recorded as one step, so two triggers never plan the same vchannel
	// from one snapshot (an L0 plan and a mix plan over the same segments
	// would lose the L0 deletes for the mix output).
	trigger sync.Mutex
	plans   map[int64]*planState
	kick    chan struct{}
	// followUps are forced triggers to continue once their L0 plans are
	// done: a manual compaction applies deletes first, then merges.
	followUps []followUp
	// failedSegs (inputs of merges) and failedL0 (vchannels of L0 plans)
	// that failed to execute wait with exponential backoff before the
	// automatic triggers plan them again: a segment that cannot be read
	// must not make compaction loop (milvus#37549).
	failedSegs map[int64]failure
	failedL0   map[string]failure
}

// failure counts consecutive failures and says when to try again.
type failure struct {
	count   int
	retryAt time.Time
}

// Backoff after a failed compaction plan: failureBackoff doubled per
// consecutive failure, at most maxFailureBackoff.
const (
	failureBackoff    = 30 * time.Second
	maxFailureBackoff = 30 * time.Minute
)

// next returns the failure after one more, at now.
func (f failure) next(now time.Time) failure {
	f.count++
	d := failureBackoff << min(f.count-1, 10)
	f.retryAt = now.Add(min(d, maxFailureBackoff))
	return f
}

type followUp struct{ trigger, collection, mergeTo int64 }

// segmentRowSize estimates the bytes per row of a segment.
func (c *Coordinator) segmentRowSize(s *segment) int64 {
	if s.rowSize > 0 {
		return s.rowSize
	}
	var bytes int64
	for _, logs := range s.info.Binlogs {
		for _, l := range logs {
			bytes += l.MemSize
		}
	}
	if s.info.NumRows > 0 && bytes > 0 {
		return bytes / s.info.NumRows
	}
	return 1
}

// deletedRows is the number of delete records in a segment's own delta logs.
func deletedRows(s catalog.SegmentInfo) int64 {
	var n int64
	for _, l := range s.Deltalogs {
		n += l.Entries
	}
	return n
}

// planCompactions returns the plans to run now for the given segments
// (force: plan everything that can be compacted, as ManualCompaction does;
// mergeTo > 0 with force: a force merge, every flushed L1 segment of a
// partition merged into segments of at most mergeTo bytes, each one in a
// plan even when it is alone, as Milvus's force merge reports them).
// busy vchannels (with a plan in flight, or waiting after a failed L0 plan)
// are skipped; held segments (inputs of a failed merge, waiting before the
// next try) are not merged, though L0 deletes still target them. A flushed
// L1 segment that is not sorted (synced in several batches) and in no other
// plan gets a plan of its own, which sorts it. Pure.
func planCompactions(cfg CompactionConfig, maxSize int64, segs []catalog.SegmentInfo, rowSize func(catalog.SegmentInfo) int64,
	busy map[string]bool, held map[int64]bool, now time.Time, force bool, mergeTo, only int64, expire func(collectionID int64) uint64,
	clusterKey func(collectionID int64) int64,
) []catalog.CompactionPlan {
	byV := byVChannel(segs, func(s catalog.SegmentInfo) bool { return only == 0 || s.CollectionID == only })
	var vs []string
	for v := range byV {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	var out []catalog.CompactionPlan
	for _, v := range vs {
		if busy[v] {
			continue
		}
		list := byV[v]
		sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
		// L0 first: deletes older than every unflushed segment can be applied.
		minStart := int64(1<<62 - 1)
		var l0, flushed []catalog.SegmentInfo
		for _, s := range list {
			switch {
			case s.Level == catalog.LevelL0:
				if s.State == catalog.SegmentFlushed {
					l0 = append(l0, s)
				}
			case s.State == catalog.SegmentFlushed:
				flushed = append(flushed, s)
			default: // growing or sealed
				minStart = min(minStart, startOffset(s))
			}
		}
		var eligible []catalog.SegmentInfo
		oldest := now
		var l0Bytes int64
		for _, s := range l0 {
			if s.SyncedOffset < minStart {
				eligible = append(eligible, s)
				oldest = minTime(oldest, time.UnixMilli(s.CreatedAt))
				for _, l := range s.Deltalogs {
					l0Bytes += l.Size
				}
			}
		}
		bySize := cfg.L0Size > 0 && l0Bytes >= cfg.L0Size
		if len(eligible) > 0 && (force || len(eligible) >= cfg.L0Count || now.Sub(oldest) >= cfg.L0MaxAge || bySize) {
			out = append(out, catalog.CompactionPlan{
				Type: catalog.CompactionL0, CollectionID: eligible[0].CollectionID,
				PartitionID: -1, VChannel: v, Inputs: eligible, Targets: flushed,
			})
			continue // one plan per vchannel at a time
		}
		// Mix: per partition, merge small segments (and rewrite ones with many deletes).
		byPart := map[int64][]catalog.SegmentInfo{}
		for _, s := range flushed {
			if !held[s.ID] {
				byPart[s.PartitionID] = append(byPart[s.PartitionID], s)
			}
		}
		var parts []int64
		for p := range byPart {
			parts = append(parts, p)
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		for _, p := range parts {
			planned := len(out)
			if ck := clusterKey(byPart[p][0].CollectionID); ck != 0 {
				// Clustered collections compact into L2 key ranges instead of mixing.
				l1 := 0
				var rows, bytes int64
				for _, s := range byPart[p] {
					if s.Level == catalog.LevelL1 {
						l1++
					}
					rows += s.NumRows
					bytes += s.NumRows * rowSize(s)
				}
				if (force && l1 > 0) || l1 >= cfg.MinSmallSegments {
					maxRows := cfg.ClusteringMaxRows
					if maxRows <= 0 && bytes > 0 {
						maxRows = max(rows*maxSize/bytes, 1)
					}
					plan := mixPlan(byPart[p], l0)
					plan.Type, plan.ClusteringField, plan.MaxRows = catalog.CompactionClustering, ck, max(maxRows, 1)
					out = append(out, plan)
					break
				}
				out = append(out, sortPlans(byPart[p], nil, l0)...)
				continue
			}
			if force && mergeTo > 0 {
				out = append(out, forceMergePlans(byPart[p], rowSize, mergeTo, l0)...)
				continue
			}
			var small []catalog.SegmentInfo
			var heavy []catalog.SegmentInfo
			for _, s := range byPart[p] {
				size := s.NumRows * rowSize(s)
				switch {
				case s.NumRows > 0 && float64(deletedRows(s)) >= cfg.DeletedRatio*float64(s.NumRows):
					heavy = append(heavy, s)
				case expire != nil && expiredShare(s, expire(s.CollectionID)) >= cfg.DeletedRatio:
					heavy = append(heavy, s) // many rows past the collection TTL
				case force && expire != nil && expiredShare(s, expire(s.CollectionID)) > 0:
					heavy = append(heavy, s)
				case float64(size) < cfg.SmallProportion*float64(maxSize) && (force || len(s.CompactedFrom) == 0):
					// An automatic merge takes only freshly flushed segments:
					// a compaction output is not merged again for its size,
					// so ingest rewrites each row at most once (merging the
					// outputs again with every batch of fresh segments
					// rewrote all rows once per batch).
					small = append(small, s)
				case force && deletedRows(s) > 0:
					heavy = append(heavy, s) // a manual compaction removes every deleted row it can
				}
			}
			if len(small) >= cfg.MinSmallSegments || (force && len(small) >= 2) {
				groups := groupBySize(small, rowSize, maxSize)
				for i, g := range groups {
					switch {
					case len(g) >= 2:
						out = append(out, mixPlan(g, l0))
					case i == len(groups)-1:
						heavy = append(heavy, g...)
					}
				}
			}
			for _, s := range heavy {
				if force || float64(deletedRows(s)) >= cfg.DeletedRatio*float64(s.NumRows) ||
					(expire != nil && expiredShare(s, expire(s.CollectionID)) >= cfg.DeletedRatio) {
					out = append(out, mixPlan([]catalog.SegmentInfo{s}, l0))
				}
			}
			out = append(out, sortPlans(byPart[p], out[planned:], l0)...)
			if len(out) > 0 && out[len(out)-1].VChannel == v {
				break // one plan per vchannel at a time
			}
		}
	}
	return out
}

// l0Blockers returns the growing segments to seal so that L0 compaction is
// not held up for long. An L0 segment may only be applied once every
// segment still growing (or sealed) started after its deletes (its rows
// could be their targets, and only its flushed copy can receive them), so a
// long-lived growing segment, one written slowly but steadily, would keep
// the L0 segments synced after it started, and their deletes, waiting until
// it fills or reaches MaxLife (Milvus users met a day, milvus#33464). Once
// the oldest such L0 segment of a vchannel is L0MaxAge old, the growing
// segments that block it are sealed: their flush lets the L0 compaction
// run. Pure.
func l0Blockers(cfg CompactionConfig, segs []catalog.SegmentInfo, now time.Time) []int64 {
	var out []int64
	for _, list := range byVChannel(segs, nil) {
		// The newest synced offset among L0 segments old enough to be due.
		due := int64(-1)
		for _, s := range list {
			if s.Level == catalog.LevelL0 && s.State == catalog.SegmentFlushed && now.Sub(time.UnixMilli(s.CreatedAt)) >= cfg.L0MaxAge {
				due = max(due, s.SyncedOffset)
			}
		}
		if due < 0 {
			continue
		}
		for _, s := range list {
			if s.Level == catalog.LevelL1 && s.State == catalog.SegmentGrowing && startOffset(s) <= due {
				out = append(out, s.ID)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// byVChannel groups the segments that are not Dropped (and that keep
// holds, when given) by vchannel.
func byVChannel(segs []catalog.SegmentInfo, keep func(catalog.SegmentInfo) bool) map[string][]catalog.SegmentInfo {
	out := map[string][]catalog.SegmentInfo{}
	for _, s := range segs {
		if s.State != catalog.SegmentDropped && (keep == nil || keep(s)) {
			out[s.VChannel] = append(out[s.VChannel], s)
		}
	}
	return out
}

// startOffset is the WAL offset of an unflushed segment's first row; -1
// when unknown (no row buffered yet), which holds back every L0 segment of
// its vchannel.
func startOffset(s catalog.SegmentInfo) int64 {
	if s.StartPosition == nil {
		return -1
	}
	return s.StartPosition.Offset
}

// expiredShare estimates the share of a segment's rows inserted before the
// TTL cut-off from the insert time range of its timestamp binlogs (rows are
// assumed spread evenly over it): 0 when none can have expired, 1 when all have.
func expiredShare(s catalog.SegmentInfo, cutoff uint64) float64 {
	if cutoff == 0 {
		return 0
	}
	oldest, newest := ^uint64(0), uint64(0)
	for _, l := range s.Binlogs[1] {
		if l.TsFrom > 0 {
			oldest = min(oldest, l.TsFrom)
		}
		newest = max(newest, l.TsTo)
	}
	switch {
	case newest == 0 || oldest >= cutoff:
		return 0
	case newest < cutoff || newest == oldest:
		return 1
	}
	return float64(cutoff-oldest) / float64(newest-oldest)
}

// sortPlans returns a plan of its own for every flushed L1 segment with
// rows that is not sorted and not an input of one of the plans given: the
// sort compaction of a segment synced in several batches (its output is
// sorted, see datanode.writeSegment).
func sortPlans(segs []catalog.SegmentInfo, plans []catalog.CompactionPlan, l0 []catalog.SegmentInfo) []catalog.CompactionPlan {
	in := map[int64]bool{}
	for _, p := range plans {
		for _, s := range p.Inputs {
			in[s.ID] = true
		}
	}
	var out []catalog.CompactionPlan
	for _, s := range segs {
		if s.Level == catalog.LevelL1 && !s.Sorted && s.NumRows > 0 && !in[s.ID] {
			out = append(out, mixPlan([]catalog.SegmentInfo{s}, l0))
		}
	}
	return out
}

// forceMergePlans puts a partition's flushed L1 segments, in ID order, in
// plans of at most mergeTo bytes each (a segment larger than that is a plan
// alone).
func forceMergePlans(segs []catalog.SegmentInfo, rowSize func(catalog.SegmentInfo) int64, mergeTo int64,
	l0 []catalog.SegmentInfo,
) []catalog.CompactionPlan {
	var l1 []catalog.SegmentInfo
	for _, s := range segs {
		if s.Level == catalog.LevelL1 {
			l1 = append(l1, s)
		}
	}
	var out []catalog.CompactionPlan
	for _, g := range groupBySize(l1, rowSize, mergeTo) {
		out = append(out, mixPlan(g, l0))
	}
	return out
}

// groupBySize cuts segs, in order, into consecutive groups of at most limit
// bytes each (a segment larger than limit is a group alone).
func groupBySize(segs []catalog.SegmentInfo, rowSize func(catalog.SegmentInfo) int64, limit int64) [][]catalog.SegmentInfo {
	var out [][]catalog.SegmentInfo
	var group []catalog.SegmentInfo
	var size int64
	for _, s := range segs {
		sz := s.NumRows * rowSize(s)
		if len(group) > 0 && size+sz > limit {
			out = append(out, group)
			group, size = nil, 0
		}
		group = append(group, s)
		size += sz
	}
	if len(group) > 0 {
		out = append(out, group)
	}
	return out
}

func mixPlan(inputs, l0 []catalog.SegmentInfo) catalog.CompactionPlan {
	return catalog.CompactionPlan{
		Type: catalog.CompactionMix, CollectionID: inputs[0].CollectionID,
		PartitionID: inputs[0].PartitionID, VChannel: inputs[0].VChannel, Inputs: inputs, Deletes: l0,
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// expireBefore returns a collection's TTL cut-off (0 = none).
func (c *Coordinator) expireBefore(collectionID int64) uint64 {
	if c.chans == nil {
		return 0
	}
	cut, err := c.chans.ExpireBefore(context.Background(), collectionID)
	if err != nil {
		// No cut-off drops no rows: they expire at a later compaction.
		c.logger.Warn("datacoord: no TTL cut-off", "collection_id", collectionID, "err", err)
		return 0
	}
	return cut
}

// compactionCutoff returns the TTL cut-off a compaction drops rows by: the
// collection's, moved back by ExpiryGrace unless the compaction was asked
// for (0 = none).
func (c *Coordinator) compactionCutoff(collectionID int64, force bool) uint64 {
	cut := c.expireBefore(collectionID)
	if cut == 0 || force {
		return cut
	}
	grace := uint64(c.cfg.Compaction.ExpiryGrace.Milliseconds()) << 18 // hybrid timestamps: ms << 18
	if cut <= grace {
		return 0
	}
	return cut - grace
}

// clusteringKey returns a collection's clustering-key field (0 = none).
func (c *Coordinator) clusteringKey(collectionID int64) int64 {
	if c.chans == nil {
		return 0
	}
	return c.chans.ClusteringKey(collectionID)
}

// triggerCompaction plans compactions (force for ManualCompaction, mergeTo
// for a force merge, see planCompactions) and returns the trigger ID and
// the number of plans.
func (c *Coordinator) triggerCompaction(ctx context.Context, force bool, mergeTo, collectionID int64) (int64, int, error) {
	return c.triggerCompactionAs(ctx, force, mergeTo, collectionID, 0)
}

// triggerCompactionAs plans under an existing trigger ID (0 = a new one).
func (c *Coordinator) triggerCompactionAs(ctx context.Context, force bool, mergeTo, collectionID, triggerID int64) (int64, int, error) {
	c.compaction.trigger.Lock()
	defer c.compaction.trigger.Unlock()
	c.mu.Lock()
	now := c.now()
	busy := map[string]bool{}
	for _, p := range c.compaction.plans {
		if p.state == "pending" || p.state == "executing" {
			busy[p.plan.VChannel] = true
		}
	}
	// Automatic triggers leave what failed alone until its backoff ends; a
	// manual compaction tries everything again.
	held := map[int64]bool{}
	if !force {
		for v, f := range c.compaction.failedL0 {
			if now.Before(f.retryAt) {
				busy[v] = true
			}
		}
		for id, f := range c.compaction.failedSegs {
			if now.Before(f.retryAt) {
				held[id] = true
			}
		}
	}
	segs := make([]catalog.SegmentInfo, 0, len(c.segments))
	sizes := map[int64]int64{}
	for _, s := range c.segments {
		if unclaimedSpare(s) {
			continue // no rows; its unknown start would hold L0 compaction back
		}
		segs = append(segs, s.info)
		sizes[s.info.ID] = c.segmentRowSize(s)
	}
	c.mu.Unlock()
	plans := planCompactions(c.cfg.Compaction, c.cfg.SegmentMaxSize, segs,
		func(s catalog.SegmentInfo) int64 { return sizes[s.ID] }, busy, held, now, force, mergeTo, collectionID,
		func(id int64) uint64 { return c.compactionCutoff(id, force) }, c.clusteringKey)
	if len(plans) == 0 && !force {
		return 0, 0, nil
	}
	first, err := c.ids.Allocate(ctx, uint32(len(plans)+1))
	if err != nil {
		return 0, 0, err
	}
	trigger := int64(first)
	if triggerID != 0 {
		trigger = triggerID
	}
	c.mu.Lock()
	for i := range plans {
		plans[i].ID = int64(first) + 1 + int64(i)
		plans[i].TriggerID = trigger
		plans[i].ExpireBefore = c.compactionCutoff(plans[i].CollectionID, force)
		c.compaction.plans[plans[i].ID] = &planState{plan: plans[i], state: "pending", forced: force, claimedAt: c.now()}
		if force && plans[i].Type == catalog.CompactionL0 {
			c.compaction.followUps = append(c.compaction.followUps, followUp{trigger: trigger, collection: plans[i].CollectionID, mergeTo: mergeTo})
		}
	}
	c.mu.Unlock()
	if len(plans) > 0 {
		select {
		case c.compaction.kick <- struct{}{}:
		default:
		}
	}
	return trigger, len(plans), nil
}

// runFollowUps continues forced triggers whose L0 plans have all finished.
func (c *Coordinator) runFollowUps(ctx context.Context) error {
	c.mu.Lock()
	var ready []followUp
	rest := c.compaction.followUps[:0]
	for _, f := range c.compaction.followUps {
		done := true
		for _, p := range c.compaction.plans {
			if p.plan.TriggerID == f.trigger && p.plan.Type == catalog.CompactionL0 && (p.state == "pending" || p.state == "executing") {
				done = false
			}
		}
		if done {
			ready = append(ready, f)
		} else {
			rest = append(rest, f)
		}
	}
	c.compaction.followUps = rest
	c.mu.Unlock()
	for _, f := range ready {
		if _, _, err := c.triggerCompactionAs(ctx, true, f.mergeTo, f.collection, f.trigger); err != nil {
			return err
		}
	}
	return nil
}

// ManualCompaction plans every compaction possible for a collection now and
// returns the compaction (trigger) ID to poll. targetSize > 0 (bytes) asks
// for a force merge: every flushed L1 segment of each partition is merged
// into segments of at most targetSize (see planCompactions).
func (c *Coordinator) ManualCompaction(ctx context.Context, collectionID, targetSize int64) (int64, error) {
	id, _, err := c.triggerCompaction(ctx, true, targetSize, collectionID)
	return id, err
}

// CompactionState reports a trigger's plans: how many are executing,
// completed and failed, and the plans themselves. The error is always nil
// in process (proxy.CompactionCoord's signature).
func (c *Coordinator) CompactionState(_ context.Context, triggerID int64) (executing, completed, failed int,
	plans []catalog.CompactionPlan, err error,
) {
	executing, completed, failed, plans = c.compactionState(triggerID)
	return executing, completed, failed, plans, nil
}

// compactionState is CompactionState's answer.
func (c *Coordinator) compactionState(triggerID int64) (executing, completed, failed int, plans []catalog.CompactionPlan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.compaction.plans {
		if p.plan.TriggerID != triggerID {
			continue
		}
		plans = append(plans, p.plan)
		switch p.state {
		case "completed":
			completed++
		case "failed":
			failed++
		default:
			executing++
		}
	}
	for _, f := range c.compaction.followUps {
		if f.trigger == triggerID {
			executing++
		}
	}
	sort.Slice(plans, func(i, j int) bool { return plans[i].ID < plans[j].ID })
	return executing, completed, failed, plans
}

// ClaimCompaction hands the oldest pending plan to executor as a new
// attempt (CompactionPlan.Attempt, Executor), waiting up to wait. As with
// ClaimIndexTask, a plan still executing under the executor that claims is
// one whose claim it never received (an executor runs one plan at a time):
// it is handed out again at once as a new attempt. Executor names must
// therefore be unique.
func (c *Coordinator) ClaimCompaction(ctx context.Context, executor string, wait time.Duration) (catalog.CompactionPlan, bool, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		if err := ctx.Err(); err != nil {
			// The executor is gone: a plan claimed now would wait for its
			// timeout (see ClaimIndexTask).
			return catalog.CompactionPlan{}, false, err
		}
		c.mu.Lock()
		var pick *planState
		for _, p := range c.compaction.plans {
			mine := p.state == "executing" && p.plan.Executor == executor
			if (p.state == "pending" || mine) && (pick == nil || p.plan.ID < pick.plan.ID) {
				pick = p
			}
		}
		if pick != nil {
			pick.state = "executing"
			pick.claimedAt = c.now()
			pick.plan.Executor = executor
			pick.plan.Attempt++
			plan := pick.plan
			c.mu.Unlock()
			return plan, true, nil
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return catalog.CompactionPlan{}, false, ctx.Err()
		case <-deadline.C:
			return catalog.CompactionPlan{}, false, nil
		case <-c.compaction.kick:
		}
	}
}

// CompleteCompaction commits a plan's result in one meta-store transaction:
// for L0, the targets gain their delta logs and the L0 segments are dropped;
// for Mix, the inputs are dropped and the output is Flushed. The commit is
// refused (and the result's files left for garbage collection) when an input
// changed since the plan was made. A result of an older attempt than the
// plan's (its executor was released, see ReleaseExecutor, or the plan was
// handed out again) is refused with ErrStaleClaim and changes nothing.
func (c *Coordinator) CompleteCompaction(ctx context.Context, res catalog.CompactionResult, execErr error) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	c.mu.Lock()
	ps, ok := c.compaction.plans[res.PlanID]
	if ok && ps.plan.Attempt != res.Attempt {
		c.mu.Unlock()
		return fmt.Errorf("%w: compaction plan %d attempt %d (now %d)", ErrStaleClaim, res.PlanID, res.Attempt, ps.plan.Attempt)
	}
	if !ok || ps.state != "executing" {
		c.mu.Unlock()
		return fmt.Errorf("datacoord: compaction plan %d is not executing", res.PlanID)
	}
	fail := func(reason string) error {
		ps.state, ps.err = "failed", reason
		c.mu.Unlock()
		return nil
	}
	if execErr != nil {
		c.noteFailure(ps.plan, execErr)
		return fail(execErr.Error())
	}
	now := c.now().UnixMilli()
	var infos []catalog.SegmentInfo
	for _, in := range ps.plan.Inputs {
		cur, ok := c.segments[in.ID]
		if !ok || cur.info.State != catalog.SegmentFlushed || len(cur.info.Deltalogs) != len(in.Deltalogs) {
			return fail(fmt.Sprintf("input segment %d changed during compaction", in.ID))
		}
		info := cur.info
		info.State, info.DroppedAt = catalog.SegmentDropped, now
		infos = append(infos, info)
	}
	switch ps.plan.Type {
	case catalog.CompactionL0:
		for _, t := range ps.plan.Targets {
			logs := res.Deltalogs[t.ID]
			if len(logs) == 0 {
				continue
			}
			cur, ok := c.segments[t.ID]
			if !ok || cur.info.State != catalog.SegmentFlushed {
				// Compacted (or dropped) meanwhile: whatever replaced it may
				// lack these deletes. Keep the L0 segments; a new plan
				// targets the segments there are now.
				return fail(fmt.Sprintf("target segment %d changed during compaction", t.ID))
			}
			info := cur.info
			info.Deltalogs = append(append([]catalog.Binlog(nil), info.Deltalogs...), logs...)
			infos = append(infos, info)
		}
	case catalog.CompactionMix, catalog.CompactionClustering:
		level := catalog.LevelL1
		if ps.plan.Type == catalog.CompactionClustering {
			level = catalog.LevelL2
		}
		for _, out := range res.Outputs {
			out.State, out.Level = catalog.SegmentFlushed, level
			out.CreatedAt, out.LastSyncAt = now, now
			infos = append(infos, out)
		}
	}
	c.mu.Unlock()
	if err := c.persist(ctx, infos); err != nil {
		c.mu.Lock()
		ps.state, ps.err = "failed", err.Error()
		c.mu.Unlock()
		return err
	}
	c.apply(infos)
	c.mu.Lock()
	c.clearFailure(ps.plan)
	c.mu.Unlock()
	if c.logger.Enabled(ctx, slog.LevelDebug) {
		var in, out []int64
		for _, s := range ps.plan.Inputs {
			in = append(in, s.ID)
		}
		for _, s := range res.Outputs {
			out = append(out, s.ID)
		}
		c.logger.Debug("datacoord: compaction committed", "plan", ps.plan.ID, "type", ps.plan.Type.String(),
			"vchannel", ps.plan.VChannel, "inputs", in, "outputs", out)
	}
	c.mu.Lock()
	ps.state = "completed"
	c.mu.Unlock()
	select {
	case c.schedKick <- struct{}{}:
	default:
	}
	return nil
}

// noteFailure starts or extends the backoff of a plan that failed to
// execute (reading an input failed, say). The caller holds c.mu.
func (c *Coordinator) noteFailure(p catalog.CompactionPlan, err error) {
	now := c.now()
	var retry time.Time
	if p.Type == catalog.CompactionL0 {
		if c.compaction.failedL0 == nil {
			c.compaction.failedL0 = map[string]failure{}
		}
		f := c.compaction.failedL0[p.VChannel].next(now)
		c.compaction.failedL0[p.VChannel], retry = f, f.retryAt
	} else {
		if c.compaction.failedSegs == nil {
			c.compaction.failedSegs = map[int64]failure{}
		}
		for _, in := range p.Inputs {
			f := c.compaction.failedSegs[in.ID].next(now)
			c.compaction.failedSegs[in.ID] = f
			retry = f.retryAt
		}
	}
	c.logger.Warn("compaction plan failed; automatic compaction leaves its segments alone until the retry time",
		"plan", p.ID, "type", p.Type.String(), "vchannel", p.VChannel, "inputs", len(p.Inputs), "retry", retry.Format(time.RFC3339),
		"err", err)
}

// clearFailure ends the backoff of a plan's segments after it committed.
// The caller holds c.mu.
func (c *Coordinator) clearFailure(p catalog.CompactionPlan) {
	if p.Type == catalog.CompactionL0 {
		delete(c.compaction.failedL0, p.VChannel)
		return
	}
	for _, in := range p.Inputs {
		delete(c.compaction.failedSegs, in.ID)
	}
}

// requeueStale puts plans whose executor has been silent for too long back
// to pending (an executor that died mid-plan).
func (c *Coordinator) requeueStale(timeout time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.compaction.plans {
		if p.state == "executing" && c.now().Sub(p.claimedAt) > timeout {
			p.state, p.plan.Executor = "pending", ""
		}
	}
	// Forget finished plans after an hour, and the failures of segments
	// that are gone.
	for id, p := range c.compaction.plans {
		if (p.state == "completed" || p.state == "failed") && c.now().Sub(p.claimedAt) > time.Hour {
			delete(c.compaction.plans, id)
		}
	}
	for id := range c.compaction.failedSegs {
		if s, ok := c.segments[id]; !ok || s.info.State == catalog.SegmentDropped {
			delete(c.compaction.failedSegs, id)
		}
	}
}
