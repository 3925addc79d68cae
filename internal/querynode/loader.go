package querynode

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"golang.org/x/sync/errgroup"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/mmapcache"
	"github.com/strata-db/strata/internal/offheap"
	"github.com/strata-db/strata/internal/segment"
	"github.com/strata-db/strata/internal/storage"
)

// loadSealed builds a sealed segment from its insert binlogs and attaches
// its finished indexes (see attachIndexes). The index files are read first:
// a vector field whose index stores the raw vectors (index.RawVectors) is
// not decoded from its binlogs at all; the segment's column is the index's
// vectors (segment.ShareColumn), so each vector is held once. An index file
// that cannot be read or decoded does not fail the load: the field is read
// from its binlogs, the segment is searched exactly, and the error is
// logged. With mmap on for a field (MmapConfig.mmapField), its column is
// read from a mapped column file (loadColumn) instead of the heap; with
// Config.SealedOffHeap the other fixed-width fields are read into regions
// outside the heap binlog by binlog (loadFieldOffHeap), and what is left
// of the segment's fixed-width data (timestamps, key permutation, fields
// that had to be read into the heap) is copied there once loaded
// (segment.MoveOffHeap).
func (d *delegator) loadSealed(ctx context.Context, info catalog.SegmentInfo) (*segment.Segment, error) {
	si := segment.Info{
		ID: info.ID, CollectionID: info.CollectionID, PartitionID: info.PartitionID, VChannel: info.VChannel,
		Level: int(info.Level),
	}
	if r := info.KeyRange; r != nil {
		si.ClusterField = r.FieldID
		si.ClusterLo, si.ClusterHi = r.Bounds()
	}
	seg, err := segment.New(si, d.info.Schema)
	if err != nil {
		return nil, err
	}
	if info.NumRows == 0 {
		return seg, nil
	}
	ok := false
	defer func() {
		if !ok { // frees what it maps
			_ = seg.Release()
		}
	}()
	files, idxErr := d.readIndexes(ctx, seg)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := hold(seg, files); err != nil {
		return nil, err
	}
	// Fields load in parallel; each one's binlogs are concatenated in order.
	var fields []*schemapb.FieldSchema
	shared := map[int64]column.Column{}
	schemaOf := map[int64]*schemapb.FieldSchema{}
	for _, f := range d.info.Schema.GetFields() {
		id := f.GetFieldID()
		if id < 100 && id != 1 {
			continue
		}
		if c := sharedColumn(f, files); c != nil {
			shared[id], schemaOf[id] = c, f
			continue
		}
		fields = append(fields, f)
	}
	loaded := make([]column.Column, len(fields))
	maps := make([]*mmapcache.Mapping, len(fields))
	regions := make([]*offheap.Region, len(fields))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range fields {
		g.Go(func() error {
			c, m, r, err := d.loadColumn(gctx, info, f)
			loaded[i], maps[i], regions[i] = c, m, r
			return err
		})
	}
	err = g.Wait()
	for _, r := range regions {
		if r == nil {
			continue
		}
		if herr := seg.OwnRegion(r); herr != nil {
			err = errors.Join(err, herr, r.Close())
		}
	}
	var colKeys []string
	for i, m := range maps {
		if m == nil {
			continue
		}
		if herr := seg.OnFree(m.Close); herr != nil {
			_ = m.Close()
			err = errors.Join(err, herr)
			continue
		}
		colKeys = append(colKeys, columnKey(info, fields[i].GetFieldID()))
	}
	if err != nil {
		return nil, err
	}
	cols := map[int64]column.Column{}
	for i, f := range fields {
		cols[f.GetFieldID()] = loaded[i]
	}
	tsCol, ok := cols[1].(*column.Ints)
	if !ok {
		return nil, fmt.Errorf("load segment %d: timestamp field missing", info.ID)
	}
	delete(cols, 1)
	for id, c := range shared {
		if c.Len() == len(tsCol.Data) {
			cols[id] = c
			continue
		}
		// The index disagrees with the binlogs on the row count:
		// attachIndexes reports it; the field is read from its binlogs.
		delete(shared, id)
		if cols[id], err = d.loadField(ctx, info, schemaOf[id]); err != nil {
			return nil, err
		}
	}
	tss := make([]uint64, len(tsCol.Data))
	for i, v := range tsCol.Data {
		tss[i] = uint64(v)
	}
	if err := seg.Load(cols, tss); err != nil {
		return nil, fmt.Errorf("load segment %d: %w", info.ID, err)
	}
	for id, c := range shared {
		if err := seg.ShareColumn(id, c); err != nil {
			return nil, fmt.Errorf("load segment %d: %w", info.ID, err)
		}
	}
	if d.node.cfg.SealedOffHeap {
		keep := map[int64]bool{} // mapped, or read into a region already
		for i := range fields {
			if maps[i] != nil || regions[i] != nil {
				keep[fields[i].GetFieldID()] = true
			}
		}
		if err := seg.MoveOffHeap(keep); err != nil {
			return nil, fmt.Errorf("load segment %d: %w", info.ID, err)
		}
	}
	// Deletes that L0 compaction moved into the segment's own delta logs.
	for _, l := range info.Deltalogs {
		pks, dts, err := d.node.readDeltaLog(ctx, info, l)
		if err != nil {
			return nil, err
		}
		seg.Delete(pks, dts)
	}
	if err := errors.Join(idxErr, d.attach(seg, files)); err != nil {
		d.node.logger.Warn("attach index failed; searching the segment exactly", "segment", info.ID, "err", err)
	}
	d.noteCached(info.ID, append(mappedKeys(files), colKeys...))
	ok = true
	return seg, nil
}

// loadField reads and concatenates one field's insert binlogs.
func (d *delegator) loadField(ctx context.Context, info catalog.SegmentInfo, f *schemapb.FieldSchema) (column.Column, error) {
	return storage.ReadField(ctx, d.node.objects, storage.FieldLogs{
		Root:       d.node.cfg.RootPath,
		Collection: info.CollectionID, Partition: info.PartitionID, ID: info.ID, LogIDs: info.LogIDs(f.GetFieldID()), Rows: info.FieldLogRows(),
	}, f)
}

// readDeltaLog reads one delta log of a segment.
func (n *Node) readDeltaLog(ctx context.Context, s catalog.SegmentInfo, l catalog.Binlog) (column.Column, []uint64, error) {
	key := storage.DeltaLogKey(n.cfg.RootPath, s.CollectionID, s.PartitionID, s.ID, l.LogID)
	data, err := n.objects.Get(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("read delta log %s: %w", key, err)
	}
	pks, tss, err := storage.DecodeDeltaLog(data)
	if err != nil {
		return nil, nil, fmt.Errorf("decode delta log %s: %w", key, err)
	}
	return pks, tss, nil
}
