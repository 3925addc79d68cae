package querynode

import (
	"bytes"
	"context"
	"fmt"
	"path"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/index/ivf"
	"github.com/strata-db/strata/internal/index/scalar"
	"github.com/strata-db/strata/internal/segment"
)

// attachedIndex is a vector index attached to a sealed segment.
type attachedIndex struct {
	idx     index.Index
	metric  string
	buildID int64
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
		if _, ok := scalar.ParseKind(path.Base(t.Files[0])); ok {
			if err := attachScalarIndex(seg, t.FieldID, t.Files[0], data); err != nil {
				return err
			}
			continue
		}
		x, err := decodeIndex(path.Base(t.Files[0]), data)
		if err != nil {
			return fmt.Errorf("decode index %s: %w", t.Files[0], err)
		}
		if x.Len() != seg.Len() {
			return fmt.Errorf("index %s has %d rows, segment %d has %d", t.Files[0], x.Len(), seg.ID, seg.Len())
		}
		seg.SetIndex(t.FieldID, &attachedIndex{idx: x, metric: metric, buildID: t.BuildID})
	}
	return nil
}

// decodeIndex decodes an index file by its file key, the name of the index
// type that the data node built.
func decodeIndex(fileKey string, data []byte) (index.Index, error) {
	switch fileKey {
	case "HNSW":
		return hnsw.Unmarshal(bytes.NewReader(data))
	case "IVF_FLAT", "IVF_SQ8", "IVF_PQ":
		return ivf.Unmarshal(bytes.NewReader(data))
	}
	return nil, fmt.Errorf("unknown index file key %q", fileKey)
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
