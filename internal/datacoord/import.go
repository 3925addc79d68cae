package datacoord

import (
	"context"
	"fmt"
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
)

// importState tracks the bulk-import jobs writing segments now: garbage
// collection keeps files of IDs above a running job's marker, since no
// record names them until the job commits.
type importState struct {
	mu      sync.Mutex
	markers map[int64]int64 // job ID → marker
}

// BeginImport records that job is about to write segment files whose
// segment and log IDs are above marker.
func (c *Coordinator) BeginImport(job, marker int64) {
	c.imports.mu.Lock()
	defer c.imports.mu.Unlock()
	if c.imports.markers == nil {
		c.imports.markers = map[int64]int64{}
	}
	c.imports.markers[job] = marker
}

// EndImport forgets job's marker (committed or failed).
func (c *Coordinator) EndImport(job int64) {
	c.imports.mu.Lock()
	defer c.imports.mu.Unlock()
	delete(c.imports.markers, job)
}

// importInflight lowers a garbage-collection keep-above ID to the lowest
// running import's marker (0 = nothing to keep).
func (c *Coordinator) importInflight(inflight int64) int64 {
	c.imports.mu.Lock()
	defer c.imports.mu.Unlock()
	for _, m := range c.imports.markers {
		if inflight == 0 || m < inflight {
			inflight = m
		}
	}
	return inflight
}

// CommitImport records a bulk-import job's segments, every one Flushed and
// new, together with ops (the job's Completed record) in one meta-store
// transaction, so that all of them become visible at once or none does.
// It refuses segments of a collection that is gone or partly dropped.
func (c *Coordinator) CommitImport(ctx context.Context, segs []catalog.SegmentInfo, ops ...metastore.Op) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	c.mu.Lock()
	for _, s := range segs {
		if _, exists := c.segments[s.ID]; exists || s.State != catalog.SegmentFlushed {
			c.mu.Unlock()
			return fmt.Errorf("datacoord: import segment %d is not a new flushed segment", s.ID)
		}
	}
	c.mu.Unlock()
	all := make([]metastore.Op, 0, len(segs)+len(ops))
	for i := range segs {
		b, err := catalog.Marshal(&segs[i])
		if err != nil {
			return err
		}
		all = append(all, metastore.Put(catalog.SegmentKey(segs[i].CollectionID, segs[i].ID), b))
	}
	all = append(all, ops...)
	if err := c.kv.Txn(ctx, all...); err != nil {
		return fmt.Errorf("datacoord: commit import: %w", err)
	}
	c.apply(segs)
	select {
	case c.schedKick <- struct{}{}:
	default:
	}
	return nil
}
