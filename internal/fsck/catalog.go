package fsck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/objstore"
	objlocal "github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/storage"
)

// Layout of a standalone data directory (see package app).
const (
	// MetaFile is the meta store's file in the data directory.
	MetaFile = "meta.db"
	// StorageDir is the object store's directory in the data directory.
	StorageDir = "storage"
	// WALDir is the WAL's directory in the data directory.
	WALDir = "wal"
)

// Checkers returns the checkers `strata check` runs, in order, for data
// files under the object-storage root path rootPath (the data node's and
// data coordinator's RootPath, "files" by default).
func Checkers(rootPath string) []Checker {
	return []Checker{
		MetaChecker(),
		WALChecker(0),
		CatalogChecker(rootPath),
	}
}

// CatalogChecker verifies every file the meta store references (see the
// package documentation).
func CatalogChecker(rootPath string) Checker {
	return Checker{Name: "catalog", Check: func(ctx context.Context, dir string) (Result, error) {
		return checkCatalog(ctx, dir, rootPath)
	}}
}

// objects is what the checker reads object storage through.
type objects interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Stat(ctx context.Context, key string) (objstore.ObjectInfo, error)
}

// noObjects stands for an absent storage directory: every object is missing.
type noObjects struct{}

func (noObjects) Get(_ context.Context, key string) ([]byte, error) {
	return nil, fmt.Errorf("%w: %q", objstore.ErrNotFound, key)
}

func (noObjects) Stat(_ context.Context, key string) (objstore.ObjectInfo, error) {
	return objstore.ObjectInfo{}, fmt.Errorf("%w: %q", objstore.ErrNotFound, key)
}

// openObjects opens the data directory's object store without creating it.
func openObjects(dir string) (objects, error) {
	p := filepath.Join(dir, StorageDir)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return noObjects{}, nil
	}
	return objlocal.Open(p)
}

// catalogCheck is one run of the catalog checker.
type catalogCheck struct {
	root     string
	kv       metastore.KV
	objs     objects
	res      Result
	colls    map[int64]*catalog.Collection
	segments map[int64]catalog.SegmentInfo
}

func checkCatalog(ctx context.Context, dir, root string) (Result, error) {
	kv, err := embedded.OpenReadOnly(filepath.Join(dir, MetaFile), nil)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = kv.Close() }()
	objs, err := openObjects(dir)
	if err != nil {
		return Result{}, err
	}
	c := &catalogCheck{
		root: root, kv: kv, objs: objs, colls: map[int64]*catalog.Collection{},
		segments: map[int64]catalog.SegmentInfo{},
	}
	if err := c.run(ctx); err != nil {
		return c.res, err
	}
	return c.res, nil
}

func (c *catalogCheck) add(d Damage) { c.res.Damage = append(c.res.Damage, d) }

func (c *catalogCheck) scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error) {
	kvs, err := c.kv.Scan(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("read meta store (%s): %w", prefix, err)
	}
	c.res.Stats.Records += len(kvs)
	return kvs, nil
}

func (c *catalogCheck) run(ctx context.Context) error {
	kvs, err := c.scan(ctx, catalog.CollectionPrefix)
	if err != nil {
		return err
	}
	for _, e := range kvs {
		coll, err := catalog.DecodeCollection(e.Value)
		if err != nil {
			c.add(Damage{Kind: KindMeta, File: e.Key, Problem: err.Error(), Affects: "the collection cannot be read"})
			continue
		}
		c.colls[coll.ID] = coll
		if coll.State != catalog.CollectionDropped {
			c.res.Stats.Collections++
		}
	}
	if kvs, err = c.scan(ctx, catalog.SegmentPrefix); err != nil {
		return err
	}
	for _, e := range kvs {
		var s catalog.SegmentInfo
		if err := catalog.Unmarshal(e.Value, &s); err != nil {
			c.add(Damage{
				Kind: KindMeta, File: e.Key, Problem: "segment record does not decode: " + err.Error(),
				Affects: "the segment's rows are not served",
			})
			continue
		}
		c.segments[s.ID] = s
	}
	ids := make([]int64, 0, len(c.segments))
	for id := range c.segments {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.segment(ctx, c.segments[id])
	}
	return c.indexes(ctx)
}

// base is the Damage template for a segment.
func (c *catalogCheck) base(s catalog.SegmentInfo) Damage {
	d := Damage{CollectionID: s.CollectionID, SegmentID: s.ID, Rows: s.NumRows}
	if coll := c.colls[s.CollectionID]; coll != nil {
		d.Collection = coll.Name
	}
	return d
}

// read fetches one referenced file and checks its recorded size; it reports
// and returns false when the file is missing, unreadable or of the wrong size.
func (c *catalogCheck) read(ctx context.Context, d Damage, key string, size int64) ([]byte, bool) {
	d.File = key
	c.res.Stats.Files++
	data, err := c.objs.Get(ctx, key)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		d.Problem = "file is missing"
		c.add(d)
		return nil, false
	case err != nil:
		d.Problem = "file cannot be read: " + err.Error()
		c.add(d)
		return nil, false
	}
	c.res.Stats.Bytes += int64(len(data))
	if size > 0 && int64(len(data)) != size {
		d.Problem = fmt.Sprintf("file has %d bytes, the metadata records %d", len(data), size)
		c.add(d)
		return nil, false
	}
	return data, true
}

// segment checks the files of one segment.
func (c *catalogCheck) segment(ctx context.Context, s catalog.SegmentInfo) {
	if s.State == catalog.SegmentDropped {
		return // its files are garbage, collected after the retention period
	}
	coll := c.colls[s.CollectionID]
	if coll != nil && coll.State == catalog.CollectionDropped {
		return
	}
	c.res.Stats.Segments++
	base := c.base(s)
	base.Affects = fmt.Sprintf("segment %d (%d rows) cannot be loaded", s.ID, s.NumRows)
	if coll == nil {
		d := base
		d.Kind, d.File = KindMeta, catalog.SegmentKey(s.CollectionID, s.ID)
		d.Problem = fmt.Sprintf("segment of collection %d, which has no record", s.CollectionID)
		c.add(d)
		return
	}
	fields := map[int64]*schemapb.FieldSchema{}
	for _, f := range coll.Schema.GetFields() {
		fields[f.GetFieldID()] = f
	}
	for _, fid := range sortedKeys(s.Binlogs) {
		d := base
		d.Kind, d.FieldID = KindBinlog, fid
		f := fields[fid]
		if f == nil {
			d.Kind, d.File = KindMeta, catalog.SegmentKey(s.CollectionID, s.ID)
			d.Problem = fmt.Sprintf("binlogs of field %d, which is not in the collection's schema", fid)
			c.add(d)
			continue
		}
		d.Field = f.GetName()
		c.fieldBinlogs(ctx, d, s, f)
	}
	for _, fid := range sortedKeys(s.Statslogs) {
		for _, l := range s.Statslogs[fid] {
			d := base
			d.Kind, d.FieldID = KindStatslog, fid
			if f := fields[fid]; f != nil {
				d.Field = f.GetName()
			}
			key := storage.StatsLogKey(c.root, s.CollectionID, s.PartitionID, s.ID, fid, l.LogID)
			if l.LogID == storage.CompoundStatsLogID {
				key = storage.CompoundStatsLogKey(c.root, s.CollectionID, s.PartitionID, s.ID, fid)
			}
			data, ok := c.read(ctx, d, key, l.Size)
			if !ok {
				continue
			}
			if _, err := storage.UnmarshalStats(data); err != nil {
				d.File, d.Problem = key, "stats log does not decode: "+err.Error()
				c.add(d)
			}
		}
	}
	for _, l := range s.Deltalogs {
		d := base
		d.Kind = KindDeltalog
		d.Affects = fmt.Sprintf("deletes of segment %d cannot be read (the segment cannot be loaded)", s.ID)
		key := storage.DeltaLogKey(c.root, s.CollectionID, s.PartitionID, s.ID, l.LogID)
		data, ok := c.read(ctx, d, key, l.Size)
		if !ok {
			continue
		}
		d.File = key
		_, tss, err := storage.DecodeDeltaLog(data)
		switch {
		case err != nil:
			d.Problem = "delta log does not decode: " + err.Error()
			c.add(d)
		case l.Entries > 0 && int64(len(tss)) != l.Entries:
			d.Problem = fmt.Sprintf("delta log holds %d deletes, the metadata records %d", len(tss), l.Entries)
			c.add(d)
		}
	}
}

// fieldBinlogs checks one field's insert binlogs of a segment.
func (c *catalogCheck) fieldBinlogs(ctx context.Context, d Damage, s catalog.SegmentInfo, f *schemapb.FieldSchema) {
	damaged := false
	var total int64
	for _, l := range s.Binlogs[f.GetFieldID()] {
		key := storage.InsertLogKey(c.root, s.CollectionID, s.PartitionID, s.ID, f.GetFieldID(), l.LogID)
		data, ok := c.read(ctx, d, key, l.Size)
		if !ok {
			damaged = true
			continue
		}
		fd := d
		fd.File = key
		bl, err := storage.DecodeBinlog(data, storage.WithElementType(f.GetElementType()))
		if err != nil {
			fd.Problem = "binlog does not decode: " + err.Error()
			c.add(fd)
			damaged = true
			continue
		}
		desc := bl.Descriptor
		if desc.CollectionID != s.CollectionID || desc.PartitionID != s.PartitionID || desc.SegmentID != s.ID ||
			desc.FieldID != f.GetFieldID() {
			fd.Problem = fmt.Sprintf("binlog descriptor names collection %d partition %d segment %d field %d",
				desc.CollectionID, desc.PartitionID, desc.SegmentID, desc.FieldID)
			c.add(fd)
			damaged = true
			continue
		}
		rows := int64(0)
		if col := bl.Column(); col != nil {
			rows = int64(col.Len())
		}
		if l.Entries > 0 && rows != l.Entries {
			fd.Problem = fmt.Sprintf("binlog holds %d rows, the metadata records %d", rows, l.Entries)
			c.add(fd)
			damaged = true
			continue
		}
		total += rows
	}
	// A field added to the schema after the segment's first syncs holds
	// only the later rows; readers fill the first ones (storage.FieldLogs.Rows).
	addedLater := column.Fillable(f) && total < s.NumRows
	if !damaged && s.State == catalog.SegmentFlushed && total != s.NumRows && !addedLater {
		d.Problem = fmt.Sprintf("the field's binlogs hold %d rows, the segment records %d", total, s.NumRows)
		c.add(d)
	}
}

// indexes checks the files of every finished index build over a live segment.
func (c *catalogCheck) indexes(ctx context.Context) error {
	idxs := map[int64]catalog.IndexInfo{}
	kvs, err := c.scan(ctx, catalog.IndexPrefix)
	if err != nil {
		return err
	}
	for _, e := range kvs {
		var idx catalog.IndexInfo
		if err := catalog.Unmarshal(e.Value, &idx); err != nil {
			c.add(Damage{
				Kind: KindMeta, File: e.Key, Problem: "index record does not decode: " + err.Error(),
				Affects: "the index cannot be described or used",
			})
			continue
		}
		idxs[idx.ID] = idx
	}
	if kvs, err = c.scan(ctx, catalog.IndexTaskPrefix); err != nil {
		return err
	}
	for _, e := range kvs {
		if err := ctx.Err(); err != nil {
			return err
		}
		var t catalog.IndexTask
		if err := catalog.Unmarshal(e.Value, &t); err != nil {
			c.add(Damage{
				Kind: KindMeta, File: e.Key, Problem: "index task record does not decode: " + err.Error(),
				Affects: "one segment's index is rebuilt or missing",
			})
			continue
		}
		s, ok := c.segments[t.SegmentID]
		if t.Deleted || t.State != catalog.IndexFinished || idxs[t.IndexID].Deleted || !ok || s.State == catalog.SegmentDropped {
			continue
		}
		if coll := c.colls[s.CollectionID]; coll != nil && coll.State == catalog.CollectionDropped {
			continue
		}
		d := c.base(s)
		d.Kind, d.FieldID = KindIndex, t.FieldID
		if coll := c.colls[s.CollectionID]; coll != nil {
			for _, f := range coll.Schema.GetFields() {
				if f.GetFieldID() == t.FieldID {
					d.Field = f.GetName()
				}
			}
		}
		d.Affects = fmt.Sprintf("index %q of segment %d is unusable (the segment is searched without it)",
			idxs[t.IndexID].Name, s.ID)
		var size int64
		if len(t.Files) == 1 {
			size = t.SizeBytes
		}
		for _, key := range t.Files {
			data, ok := c.read(ctx, d, key, size)
			if !ok {
				continue
			}
			n, err := decodeIndexFile(path.Base(key), data)
			fd := d
			fd.File = key
			switch {
			case err != nil:
				fd.Problem = "index file does not load: " + err.Error()
				c.add(fd)
			case t.Rows > 0 && int64(n) != t.Rows:
				fd.Problem = fmt.Sprintf("index holds %d rows, the build task records %d", n, t.Rows)
				c.add(fd)
			}
		}
	}
	return nil
}

// decodeIndexFile decodes an index file by its file key, the name of the
// index type built (as the query node does), and returns its row count.
func decodeIndexFile(fileKey string, data []byte) (int, error) {
	x, err := registry.Load(fileKey, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	return x.Len(), nil
}

func sortedKeys[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
