package datacoord

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
)

// MaxIndexAttempts is how many times a failing build is tried before it
// stays Failed. Only attempts that report an error count (IndexTask.Failures);
// one abandoned by a shutdown is simply claimed again.
const MaxIndexAttempts = 3

// IndexLease is how long a builder holds an InProgress task before it may be
// handed to another builder (the first one is presumed dead). A builder
// known to be dead (its session ended) is released at once instead
// (ReleaseExecutor); the lease is the backstop for one alive but stuck.
const IndexLease = 10 * time.Minute

// taskWant is one index build the planner wants to exist.
type taskWant struct {
	index   catalog.IndexInfo
	segment catalog.SegmentInfo
}

// planIndexTasks returns the builds missing for every live index over every
// flushed L1 or L2 segment with rows, except an L1 segment that is not
// sorted yet: its sort compaction (sortPlans) is about to replace it, and
// the index is built once, on the sorted output, as Milvus builds indexes
// on sorted segments. It is pure: the caller passes snapshots.
func planIndexTasks(indexes []catalog.IndexInfo, segments []catalog.SegmentInfo, tasks []catalog.IndexTask) []taskWant {
	have := map[[2]int64]bool{}
	for _, t := range tasks {
		if !t.Deleted {
			have[[2]int64{t.IndexID, t.SegmentID}] = true
		}
	}
	var out []taskWant
	for _, idx := range indexes {
		if idx.Deleted {
			continue
		}
		for _, s := range segments {
			if s.CollectionID != idx.CollectionID || s.State != catalog.SegmentFlushed ||
				s.Level == catalog.LevelL0 || s.NumRows == 0 || have[[2]int64{idx.ID, s.ID}] ||
				(s.Level == catalog.LevelL1 && !s.Sorted) {
				continue
			}
			out = append(out, taskWant{index: idx, segment: s})
		}
	}
	return out
}

func (c *Coordinator) saveTasks(ctx context.Context, tasks ...catalog.IndexTask) error {
	ops := make([]metastore.Op, 0, len(tasks))
	for i := range tasks {
		b, err := catalog.Marshal(&tasks[i])
		if err != nil {
			return err
		}
		ops = append(ops, metastore.Put(catalog.IndexTaskKey(tasks[i].BuildID), b))
	}
	if len(ops) == 0 {
		return nil
	}
	if err := c.kv.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("datacoord: save index tasks: %w", err)
	}
	c.mu.Lock()
	for _, t := range tasks {
		c.tasks[t.BuildID] = t
	}
	c.mu.Unlock()
	c.kickIndex()
	return nil
}

// kickIndex wakes builders waiting in ClaimIndexTask (non-blocking, coalescing).
func (c *Coordinator) kickIndex() {
	select {
	case c.indexKick <- struct{}{}:
	default:
	}
}

// scheduleIndexTasks creates the missing build tasks.
func (c *Coordinator) scheduleIndexTasks(ctx context.Context) error {
	c.indexPlanMu.Lock()
	defer c.indexPlanMu.Unlock()
	c.mu.Lock()
	var indexes []catalog.IndexInfo
	for _, idx := range c.indexes {
		indexes = append(indexes, idx)
	}
	var segs []catalog.SegmentInfo
	for _, s := range c.segments {
		segs = append(segs, s.info)
	}
	tasks := make([]catalog.IndexTask, 0, len(c.tasks))
	for _, t := range c.tasks {
		tasks = append(tasks, t)
	}
	c.mu.Unlock()
	wants := planIndexTasks(indexes, segs, tasks)
	if len(wants) == 0 {
		return nil
	}
	first, err := c.ids.Allocate(ctx, uint32(len(wants)))
	if err != nil {
		return err
	}
	out := make([]catalog.IndexTask, len(wants))
	for i, w := range wants {
		out[i] = catalog.IndexTask{
			BuildID: int64(first) + int64(i), IndexID: w.index.ID, CollectionID: w.segment.CollectionID,
			PartitionID: w.segment.PartitionID, SegmentID: w.segment.ID, FieldID: w.index.FieldID,
			Rows: w.segment.NumRows, State: catalog.IndexUnissued,
		}
	}
	return c.saveTasks(ctx, out...)
}

// ClaimIndexTask hands the oldest Unissued task (or an InProgress one whose
// lease expired) to builder, marking it InProgress with a new version. It
// waits up to wait for one to appear; ok is false when none did. A builder
// builds one task at a time, so a task still leased to the builder that
// claims is one whose claim it never received (a remote claim whose answer
// was lost): it is handed out again at once, with a new version, instead of
// waiting for its lease to end. Builder names must therefore be unique.
func (c *Coordinator) ClaimIndexTask(ctx context.Context, builder string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		if err := ctx.Err(); err != nil {
			// The claimant is gone (a remote one cancelled its call while
			// a kick woke this wait): a task claimed now would sit leased
			// to nobody until its lease ends.
			return catalog.IndexTask{}, catalog.IndexInfo{}, false, err
		}
		now := c.now()
		c.claimMu.Lock()
		c.mu.Lock()
		var pick *catalog.IndexTask
		ids := make([]int64, 0, len(c.tasks))
		for id := range c.tasks {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			t := c.tasks[id]
			if t.Deleted {
				continue
			}
			if t.State == catalog.IndexUnissued || (t.State == catalog.IndexInProgress && (t.LeaseUntil < now.UnixMilli() || t.Builder == builder)) {
				pick = &t
				break
			}
		}
		var idx catalog.IndexInfo
		if pick != nil {
			idx = c.indexes[pick.IndexID]
		}
		c.mu.Unlock()
		if pick != nil {
			pick.State = catalog.IndexInProgress
			pick.Version++
			pick.Builder = builder
			pick.LeaseUntil = now.Add(IndexLease).UnixMilli()
			err := c.saveTasks(ctx, *pick)
			c.claimMu.Unlock()
			if err != nil {
				return catalog.IndexTask{}, catalog.IndexInfo{}, false, err
			}
			return *pick, idx, true, nil
		}
		c.claimMu.Unlock()
		select {
		case <-ctx.Done():
			return catalog.IndexTask{}, catalog.IndexInfo{}, false, ctx.Err()
		case <-deadline.C:
			return catalog.IndexTask{}, catalog.IndexInfo{}, false, nil
		case <-c.indexKick:
		}
	}
}

// FinishIndexTask records a build's outcome. A failure goes back to
// Unissued until MaxIndexAttempts failures, then stays Failed with its reason.
// The report of an older version (the task was released or handed to
// another builder since) changes nothing and fails with ErrStaleClaim; a
// report of the current version that is not InProgress any more (a retried
// report whose answer was lost) changes nothing and succeeds.
func (c *Coordinator) FinishIndexTask(ctx context.Context, buildID, version int64, files []string, size int64, buildErr error) error {
	c.claimMu.Lock()
	defer c.claimMu.Unlock()
	c.mu.Lock()
	t, ok := c.tasks[buildID]
	c.mu.Unlock()
	if ok && t.Version != version {
		return fmt.Errorf("%w: index build %d version %d (now %d)", ErrStaleClaim, buildID, version, t.Version)
	}
	if !ok || t.State != catalog.IndexInProgress {
		return nil
	}
	t.LeaseUntil = 0
	if buildErr != nil {
		t.FailReason = buildErr.Error()
		t.State = catalog.IndexUnissued
		t.Failures++
		if t.Failures >= MaxIndexAttempts {
			t.State = catalog.IndexFailed
		}
	} else {
		t.State, t.Files, t.SizeBytes, t.FailReason = catalog.IndexFinished, files, size, ""
	}
	return c.saveTasks(ctx, t)
}

// IndexTasks returns the live tasks of a collection, by build ID.
func (c *Coordinator) IndexTasks(collectionID int64) []catalog.IndexTask {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []catalog.IndexTask
	for _, t := range c.tasks {
		if t.CollectionID == collectionID && !t.Deleted {
			if s, ok := c.segments[t.SegmentID]; ok && s.info.State == catalog.SegmentDropped {
				continue
			}
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BuildID < out[j].BuildID })
	return out
}

// SegmentIndexes returns the finished builds of a segment. The error is
// always nil in process (see Segment).
func (c *Coordinator) SegmentIndexes(_ context.Context, segmentID int64) ([]catalog.IndexTask, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []catalog.IndexTask
	for _, t := range c.tasks {
		if t.SegmentID == segmentID && t.State == catalog.IndexFinished && !t.Deleted && !c.indexes[t.IndexID].Deleted {
			out = append(out, t)
		}
	}
	return out, nil
}

// IndexProgress reports how far an index's builds are. The error is
// always nil in process (proxy.IndexCoord's signature).
func (c *Coordinator) IndexProgress(_ context.Context, indexID int64) (catalog.IndexProgress, error) {
	return c.indexProgress(indexID), nil
}

// indexProgress is IndexProgress's answer.
func (c *Coordinator) indexProgress(indexID int64) catalog.IndexProgress {
	c.mu.Lock()
	defer c.mu.Unlock()
	idx := c.indexes[indexID]
	var p catalog.IndexProgress
	for _, s := range c.segments {
		if s.info.CollectionID == idx.CollectionID && s.info.State == catalog.SegmentFlushed && s.info.Level != catalog.LevelL0 {
			p.TotalRows += s.info.NumRows
		}
	}
	p.State = catalog.IndexFinished
	// One task counts per segment, the newest, so a rebuild or a retried
	// task never counts a segment's rows twice.
	latest := map[int64]catalog.IndexTask{}
	for _, t := range c.tasks {
		if t.IndexID != indexID || t.Deleted {
			continue
		}
		if s, ok := c.segments[t.SegmentID]; !ok || s.info.State != catalog.SegmentFlushed {
			continue
		}
		if prev, ok := latest[t.SegmentID]; !ok || t.BuildID > prev.BuildID {
			latest[t.SegmentID] = t
		}
	}
	built := map[int64]bool{}
	for _, t := range latest {
		built[t.SegmentID] = true
		switch t.State {
		case catalog.IndexFinished:
			p.IndexedRows += t.Rows
		case catalog.IndexFailed:
			p.State, p.FailReason = catalog.IndexFailed, t.FailReason
		default:
			p.PendingRows += t.Rows
			if p.State != catalog.IndexFailed {
				p.State = catalog.IndexInProgress
			}
		}
	}
	// Flushed segments without a task yet are pending too.
	for _, s := range c.segments {
		if s.info.CollectionID == idx.CollectionID && s.info.State == catalog.SegmentFlushed &&
			s.info.Level != catalog.LevelL0 && s.info.NumRows > 0 && !built[s.info.ID] {
			p.PendingRows += s.info.NumRows
			if p.State != catalog.IndexFailed {
				p.State = catalog.IndexInProgress
			}
		}
	}
	return p
}
