package querynode

import (
	"context"
	"fmt"
	"path"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// attachedIndex is a vector index attached to a sealed segment: idx over
// float vectors (Float16, BFloat16 and Int8 vectors are indexed widened to
// float32), bin over packed binary vectors or sparse over sparse vectors.
type attachedIndex struct {
	idx     index.Index
	bin     index.BinaryIndex
	sparse  *sparse.Index
	metric  string
	buildID int64
}

// len returns the number of indexed rows.
func (a *attachedIndex) len() int {
	switch {
	case a.bin != nil:
		return a.bin.Len()
	case a.sparse != nil:
		return a.sparse.Len()
	}
	return a.idx.Len()
}

// search runs query q of req through the index, over the rows of mask
// (nil = every row), allowed of them.
func (a *attachedIndex) search(req *plan.Search, q int, mask []bool, allowed int) ([]index.Hit, error) {
	p := index.SearchParams{Ef: req.Ef, Nprobe: req.Nprobe, Allowed: allowed}
	if a.bin != nil {
		return a.bin.SearchBinary(req.Binary[q], req.TopK, p, mask)
	}
	return a.idx.Search(req.Vectors[q], req.TopK, p, mask)
}

// attachIndexes loads the finished index builds of a sealed segment that are
// not attached yet. A segment is searchable by brute force until then, so
// attaching never makes it unavailable.
func (d *delegator) attachIndexes(ctx context.Context, seg *segment.Segment) error {
	for _, t := range d.node.segs.SegmentIndexes(seg.ID) {
		if len(t.Files) == 0 || seg.HasIndex(t.FieldID) {
			continue
		}
		var metric string
		for _, idx := range d.node.segs.Indexes(seg.CollectionID) {
			if idx.ID == t.IndexID {
				metric = idx.Params["metric_type"]
			}
		}
		data, err := d.node.objects.Get(ctx, t.Files[0])
		if err != nil {
			return fmt.Errorf("load index %s: %w", t.Files[0], err)
		}
		x, err := registry.Load(path.Base(t.Files[0]), data)
		if err != nil {
			return fmt.Errorf("decode index %s: %w", t.Files[0], err)
		}
		ai := newAttached(x)
		if ai == nil {
			// A filter index (scalar or RTREE): the filter evaluator finds it
			// through segment.View.Index.
			if err := attachDecoded(seg, t.FieldID, t.Files[0], x); err != nil {
				return err
			}
			continue
		}
		if ai.len() != seg.Len() {
			return fmt.Errorf("index %s has %d rows, segment %d has %d", t.Files[0], ai.len(), seg.ID, seg.Len())
		}
		ai.metric, ai.buildID = metric, t.BuildID
		seg.SetIndex(t.FieldID, ai)
	}
	return nil
}

// newAttached wraps a loaded vector index for searching; it returns nil for
// a filter index.
func newAttached(x registry.Built) *attachedIndex {
	switch x := x.(type) {
	case index.Index:
		return &attachedIndex{idx: x}
	case index.BinaryIndex:
		return &attachedIndex{bin: x}
	case *sparse.Index:
		return &attachedIndex{sparse: x}
	}
	return nil
}

// attachAll tries to attach indexes to every sealed segment lacking one.
func (d *delegator) attachAll(ctx context.Context) {
	d.mu.RLock()
	segs := make([]*segment.Segment, 0, len(d.sealed))
	for _, s := range d.sealed {
		segs = append(segs, s)
	}
	d.mu.RUnlock()
	if len(segs) == 0 || len(d.node.segs.Indexes(d.info.ID)) == 0 {
		return
	}
	for _, s := range segs {
		if err := d.attachIndexes(ctx, s); err != nil && ctx.Err() == nil {
			d.node.logger.Warn("attach index failed; searching the segment exactly", "segment", s.ID, "err", err)
		}
	}
}
