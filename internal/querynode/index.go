package querynode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indexfile"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/mmapcache"
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
	// mapping is the read-only mapping the index points into (nil: heap);
	// the segment owns it (hold).
	mapping *mmapcache.Mapping
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
	p := index.SearchParams{Ef: req.Ef, Nprobe: req.Nprobe, RefineK: req.RefineK, QueryBits: req.RbqBitsQuery, Allowed: allowed}
	if a.bin != nil {
		return a.bin.SearchBinary(req.Binary[q], req.TopK, p, mask)
	}
	return a.idx.Search(req.Vectors[q], req.TopK, p, mask)
}

// indexFile is a finished index build of a segment, read from its file.
type indexFile struct {
	fieldID int64
	file    string
	buildID int64
	metric  string // the metric of the collection's index definition
	x       registry.Built
	// mapping is the read-only mapping x points into (mmap.enabled), or
	// nil when x is on the heap; hold gives it to the segment.
	mapping *mmapcache.Mapping
	// local is the local copy x reads by position (an index type that
	// keeps its file on disk, DISKANN), or nil; hold gives it to the
	// segment.
	local *mmapcache.File
}

// readIndexes reads the finished index builds of seg that are not attached
// yet. A file that cannot be read or decoded is skipped, and its error
// joined into the one returned: the other indexes are read.
func (d *delegator) readIndexes(ctx context.Context, seg *segment.Segment) ([]indexFile, error) {
	var out []indexFile
	var errs []error
	tasks, err := d.node.segs.SegmentIndexes(ctx, seg.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if len(t.Files) == 0 || seg.HasIndex(t.FieldID) {
			continue
		}
		idxs, err := d.node.segs.Indexes(ctx, seg.CollectionID)
		if err != nil {
			closeMappings(out)
			return nil, err
		}
		var params map[string]string
		for _, idx := range idxs {
			if idx.ID == t.IndexID {
				params = idx.Params
			}
		}
		x, m, lf, err := d.readIndex(ctx, t.FieldID, t.Files[0], params)
		if err != nil {
			if ctx.Err() != nil {
				closeMappings(out)
				return nil, ctx.Err()
			}
			errs = append(errs, err)
			continue
		}
		out = append(out, indexFile{fieldID: t.FieldID, file: t.Files[0], buildID: t.BuildID, metric: params["metric_type"], x: x, mapping: m, local: lf})
	}
	return out, errors.Join(errs...)
}

// readIndex reads the index file key of a field: read by position from
// its local cache copy when its type keeps its file on disk
// (registry.OnDisk: DISKANN), mapped from that copy when mmap is on for it
// (MmapConfig.mmapIndex) and its type can be mapped, else decoded into the
// heap as it streams. A file that cannot be kept locally or mapped (no
// cache directory, a full disk) is read into the heap instead, with a
// warning.
func (d *delegator) readIndex(ctx context.Context, fieldID int64, key string, params map[string]string) (registry.Built, *mmapcache.Mapping, *mmapcache.File, error) {
	if registry.OnDisk(path.Base(key)) {
		x, lf, err := d.node.openDiskIndex(ctx, key)
		if err == nil || ctx.Err() != nil {
			return x, nil, lf, err
		}
		d.node.logger.Warn("reading an on-disk index file from a local copy failed; reading it into memory", "file", key, "err", err)
	} else if f := fieldSchema(d.info.Schema.GetFields(), fieldID); f != nil && registry.Mappable(path.Base(key)) && d.node.cfg.Mmap.mmapIndex(d.info, f, params) {
		x, m, err := d.node.mapIndexFile(ctx, key)
		if err == nil || ctx.Err() != nil {
			return x, m, nil, err
		}
		d.node.logger.Warn("mapping an index file failed; reading it into memory", "file", key, "err", err)
	}
	x, err := d.node.readIndexFile(ctx, key)
	return x, nil, nil, err
}

// fieldSchema returns the field with ID id, or nil.
func fieldSchema(fields []*schemapb.FieldSchema, id int64) *schemapb.FieldSchema {
	for _, f := range fields {
		if f.GetFieldID() == id {
			return f
		}
	}
	return nil
}

// hold makes seg own the mappings of files: they are closed (unmapped)
// when its last holder releases it, never while a read holds it (segment
// Holders). On a freed segment it closes them and fails; the caller must
// not attach files then.
func hold(seg *segment.Segment, files []indexFile) error {
	for i, fi := range files {
		for _, c := range fi.closers() {
			if err := seg.OnFree(c); err != nil {
				closeMappings(files[i:])
				return err
			}
		}
	}
	return nil
}

// closers returns the Close methods of the cache files fi holds.
func (fi indexFile) closers() []func() error {
	var out []func() error
	if fi.mapping != nil {
		out = append(out, fi.mapping.Close)
	}
	if fi.local != nil {
		out = append(out, fi.local.Close)
	}
	return out
}

// closeMappings closes the mappings and local files of files.
func closeMappings(files []indexFile) {
	for _, fi := range files {
		for _, c := range fi.closers() {
			_ = c() // an unmap or close error leaves nothing to undo
		}
	}
}

// mappedKeys returns the keys of the files among files that have a cache
// copy (mapped or read by position).
func mappedKeys(files []indexFile) []string {
	var out []string
	for _, fi := range files {
		if fi.mapping != nil || fi.local != nil {
			out = append(out, fi.file)
		}
	}
	return out
}

// readIndexFile decodes an index file as it streams from object storage,
// into the index's final structures: no copy of the whole file is held.
func (n *Node) readIndexFile(ctx context.Context, key string) (registry.Built, error) {
	r, size, err := n.objects.Open(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load index %s: %w", key, err)
	}
	defer func() { _ = r.Close() }() // a read error is the decoder's
	x, err := registry.Load(path.Base(key), indexfile.Sized{Reader: r, N: size})
	if err != nil {
		return nil, fmt.Errorf("decode index %s: %w", key, err)
	}
	return x, nil
}

// sharedColumn returns the column of field f that one of files, an index
// of f storing the raw vectors (index.RawVectors), can serve, or nil. Only
// float vector fields without nulls qualify: indexes hold other dense types
// widened to float32, and no slot for a null row.
func sharedColumn(f *schemapb.FieldSchema, files []indexFile) column.Column {
	if f.GetDataType() != schemapb.DataType_FloatVector || f.GetNullable() {
		return nil
	}
	dim, err := column.Dim(f)
	if err != nil || dim <= 0 {
		return nil
	}
	for _, fi := range files {
		rv, ok := fi.x.(index.RawVectors)
		if fi.fieldID != f.GetFieldID() || !ok {
			continue
		}
		if data := rv.RawVectors(); data != nil && len(data) == dim*fi.x.Len() {
			return &column.FloatVectors{Dim: dim, Data: data}
		}
	}
	return nil
}

// attach attaches the read index files to seg. A vector field whose column
// seg still owns, and whose index stores the same vectors bit for bit,
// switches to the index's copy (segment.ShareColumn): an index that
// finished after the segment loaded frees the decoded column too.
func (d *delegator) attach(seg *segment.Segment, files []indexFile) error {
	var errs []error
	for _, fi := range files {
		ai := newAttached(fi.x)
		if ai == nil {
			// A filter index (scalar or RTREE): the filter evaluator finds it
			// through segment.View.Index.
			if err := attachDecoded(seg, fi.fieldID, fi.file, fi.x); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if ai.len() != seg.Len() {
			errs = append(errs, fmt.Errorf("index %s has %d rows, segment %d has %d", fi.file, ai.len(), seg.ID, seg.Len()))
			continue
		}
		ai.metric, ai.buildID, ai.mapping = fi.metric, fi.buildID, fi.mapping
		if !seg.SharesColumn(fi.fieldID) {
			if err := shareVectors(seg, fi); err != nil {
				errs = append(errs, err)
			}
		}
		seg.SetIndex(fi.fieldID, ai)
	}
	return errors.Join(errs...)
}

// shareVectors makes seg's column of an indexed float vector field the
// index's stored vectors when they equal the column bit for bit.
func shareVectors(seg *segment.Segment, fi indexFile) error {
	var own *column.FloatVectors
	var f *schemapb.FieldSchema
	_ = seg.Read(func(v *segment.View) error {
		own, _ = v.Column(fi.fieldID).(*column.FloatVectors)
		for _, vf := range v.Fields() {
			if vf.GetFieldID() == fi.fieldID {
				f = vf
			}
		}
		return nil
	})
	if own == nil || f == nil {
		return nil
	}
	c, ok := sharedColumn(f, []indexFile{fi}).(*column.FloatVectors)
	if !ok || own.Valid != nil {
		return nil
	}
	if !sameBits(own.Data, c.Data) {
		return fmt.Errorf("index %s stores other vectors than segment %d's binlogs", fi.file, seg.ID)
	}
	return seg.ShareColumn(fi.fieldID, c)
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		if math.Float32bits(v) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// attachIndexes loads the finished index builds of a sealed segment that
// are not attached yet. A segment is searchable by brute force until then,
// so attaching never makes it unavailable.
func (d *delegator) attachIndexes(ctx context.Context, seg *segment.Segment) error {
	files, err := d.readIndexes(ctx, seg)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if herr := hold(seg, files); herr != nil {
		return errors.Join(err, herr)
	}
	d.noteCached(seg.ID, mappedKeys(files))
	return errors.Join(err, d.attach(seg, files))
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
	segs, err := d.snapshot(false)
	defer releaseSegments(segs)
	if err != nil || len(segs) == 0 { // stopped: nothing to attach to
		return
	}
	idxs, err := d.node.segs.Indexes(ctx, d.info.ID)
	if err != nil {
		if ctx.Err() == nil {
			d.node.logger.Warn("attach index: the collection's indexes are unknown", "vchannel", d.vchannel, "err", err)
		}
		return
	}
	if len(idxs) == 0 {
		return
	}
	for _, s := range segs {
		if err := d.attachIndexes(ctx, s); err != nil && ctx.Err() == nil {
			d.node.logger.Warn("attach index failed; searching the segment exactly", "segment", s.ID, "err", err)
		}
	}
}
