package querynode

import (
	"bytes"
	"context"
	"fmt"
	"path"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/binivf"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/index/ivf"
	"github.com/strata-db/strata/internal/index/scalar"
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

// search runs query q of req through the index.
func (a *attachedIndex) search(req *plan.Search, q int, mask []bool) ([]index.Hit, error) {
	p := index.SearchParams{Ef: req.Ef, Nprobe: req.Nprobe}
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
		if path.Base(t.Files[0]) == scalar.RTreeFileKey {
			if err := attachRTreeIndex(seg, t.FieldID, t.Files[0], data); err != nil {
				return err
			}
			continue
		}
		if _, ok := scalar.ParseKind(path.Base(t.Files[0])); ok {
			if err := attachScalarIndex(seg, t.FieldID, t.Files[0], data); err != nil {
				return err
			}
			continue
		}
		ai, err := decodeAttached(path.Base(t.Files[0]), data)
		if err != nil {
			return fmt.Errorf("decode index %s: %w", t.Files[0], err)
		}
		if ai.len() != seg.Len() {
			return fmt.Errorf("index %s has %d rows, segment %d has %d", t.Files[0], ai.len(), seg.ID, seg.Len())
		}
		ai.metric, ai.buildID = metric, t.BuildID
		seg.SetIndex(t.FieldID, ai)
	}
	return nil
}

// decodeIndex decodes an index file by its file key, the name of the index
// type that the data node built.
func decodeIndex(fileKey string, data []byte) (*attachedIndex, error) {
	var (
		x   index.Index
		err error
	)
	switch fileKey {
	case "HNSW":
		x, err = hnsw.Unmarshal(bytes.NewReader(data))
	case "IVF_FLAT", "IVF_SQ8", "IVF_PQ":
		x, err = ivf.Unmarshal(bytes.NewReader(data))
	case "BIN_IVF_FLAT":
		b, err := binivf.Unmarshal(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return &attachedIndex{bin: b}, nil
	default:
		return nil, fmt.Errorf("unknown index file key %q", fileKey)
	}
	if err != nil {
		return nil, err
	}
	return &attachedIndex{idx: x}, nil
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
