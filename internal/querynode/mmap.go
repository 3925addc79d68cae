package querynode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/column/colfile"
	"github.com/strata-db/strata/internal/index/indexfile"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/mmapcache"
	"github.com/strata-db/strata/internal/offheap"
	"github.com/strata-db/strata/internal/storage"
)

// MmapConfig is the node-wide default of the mmap settings, Milvus's
// queryNode.mmap.*: whether a loaded segment's data is served from
// read-only memory mappings of local cache files (package mmapcache)
// rather than the Go heap. A collection property, field type parameter or
// index parameter "mmap.enabled" overrides it (see mmapDecision).
type MmapConfig struct {
	// VectorField maps the raw data of vector fields.
	VectorField bool `json:"vectorField"`
	// VectorIndex maps the index files of vector fields.
	VectorIndex bool `json:"vectorIndex"`
	// ScalarField maps the raw data of scalar fields.
	ScalarField bool `json:"scalarField"`
	// ScalarIndex maps the index files of scalar fields.
	ScalarIndex bool `json:"scalarIndex"`
	// Dir is the directory of the cache files; empty means
	// {dataDir}/cache/mmap (the app sets it) or, for a node built without
	// one, that nothing is mapped.
	Dir string `json:"mmapDirPath"`
	// CollectInterval is how often the node looks for the cache files of
	// what no longer exists (collectCache), besides at start and after
	// each drop the catalog signals; 0 means DefaultCollectInterval.
	CollectInterval time.Duration `json:"collectInterval"`
}

// DefaultCollectInterval is MmapConfig.CollectInterval's default.
const DefaultCollectInterval = time.Minute

// collectInterval is CollectInterval or its default.
func (c MmapConfig) collectInterval() time.Duration {
	if c.CollectInterval <= 0 {
		return DefaultCollectInterval
	}
	return c.CollectInterval
}

// mmapSetting parses an "mmap.enabled" value as Milvus does
// (strconv.ParseBool: "true", "True", "1", "false", …); ok is false for
// anything else, which counts as no setting.
func mmapSetting(v string) (on, ok bool) {
	on, err := strconv.ParseBool(strings.TrimSpace(v))
	return on, err == nil
}

// typeParam returns the value of a field's type parameter key.
func typeParam(f *schemapb.FieldSchema, key string) (string, bool) {
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == key {
			return kv.GetValue(), true
		}
	}
	return "", false
}

// isVector reports whether a field holds vectors.
func isVector(f *schemapb.FieldSchema) bool {
	switch f.GetDataType() {
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector, schemapb.DataType_SparseFloatVector,
		schemapb.DataType_ArrayOfVector:
		return true
	}
	return false
}

// mmapIndex decides, as Milvus does, whether the index of field f, whose
// index parameters are params, is mapped: the index's own mmap.enabled
// (set at CreateIndex or AlterIndex) wins, then the collection's property
// mmap.enabled, then the node's VectorIndex or ScalarIndex. It decides
// only: whether the index type can be mapped is registry.Mappable's.
func (c MmapConfig) mmapIndex(coll *catalog.Collection, f *schemapb.FieldSchema, params map[string]string) bool {
	if on, ok := mmapSetting(params[catalog.MmapKey]); ok {
		return on
	}
	if coll != nil {
		if on, ok := mmapSetting(coll.Properties[catalog.MmapKey]); ok {
			return on
		}
	}
	if isVector(f) {
		return c.VectorIndex
	}
	return c.ScalarIndex
}

// mmapField decides whether the raw data of field f is mapped: the field's
// type parameter mmap.enabled (CreateCollection or AlterCollectionField)
// wins, then the collection's property, then the node's VectorField or
// ScalarField.
func (c MmapConfig) mmapField(coll *catalog.Collection, f *schemapb.FieldSchema) bool {
	if v, ok := typeParam(f, catalog.MmapKey); ok {
		if on, ok := mmapSetting(v); ok {
			return on
		}
	}
	if coll != nil {
		if on, ok := mmapSetting(coll.Properties[catalog.MmapKey]); ok {
			return on
		}
	}
	if isVector(f) {
		return c.VectorField
	}
	return c.ScalarField
}

// mmapCache returns the node's cache of mapped files, opening it on first
// use; nil when the node has no mmap directory.
func (n *Node) mmapCache() (*mmapcache.Cache, error) {
	if n.cfg.Mmap.Dir == "" {
		return nil, errors.New("querynode: no mmap directory configured")
	}
	n.cacheOnce.Do(func() { n.cache, n.cacheErr = mmapcache.Open(n.cfg.Mmap.Dir, n.logger) })
	return n.cache, n.cacheErr
}

// mapIndexFile loads an index file from its local cache copy, mapped
// read-only: the index's big arrays (HNSW vectors and links, IVF
// centroids, lists and vectors or codes) point into the mapping, which the
// caller must close once the index is dropped. The copy is checked as a
// download is (the file's CRC-32C and the decoder's structure checks); one
// that fails is written again from object storage and the rebuild logged,
// and one whose arrays do not line up in memory is written again shifted
// so that they do.
func (n *Node) mapIndexFile(ctx context.Context, key string) (registry.Built, *mmapcache.Mapping, error) {
	cache, err := n.mmapCache()
	if err != nil {
		return nil, nil, err
	}
	open := mmapcache.FromObject(key, func(ctx context.Context) (io.ReadCloser, int64, error) { return n.objects.Open(ctx, key) })
	m, err := cache.Map(ctx, key, open)
	if err != nil {
		return nil, nil, fmt.Errorf("map index %s: %w", key, err)
	}
	name := path.Base(key)
	aligned, rebuilt := true, false
	for {
		x, err := registry.Load(name, &indexfile.Mapped{Data: m.Data(), Aligned: aligned})
		if err == nil {
			return x, m, nil
		}
		var shift int
		damaged := err
		if mis, ok := errors.AsType[*indexfile.MisalignedError](err); ok && aligned {
			// Shifted once; anything still misaligned is decoded instead.
			shift, damaged, aligned = mis.Shift, nil, false
		} else if rebuilt {
			_ = m.Close()
			return nil, nil, fmt.Errorf("decode index %s: %w", key, err)
		} else {
			rebuilt = true
		}
		m2, rerr := cache.Rebuild(ctx, key, open, m, shift, damaged)
		_ = m.Close() // the index that failed holds no slice of it
		if rerr != nil {
			return nil, nil, fmt.Errorf("map index %s: %w", key, rerr)
		}
		m = m2
	}
}

// openDiskIndex loads an index file whose type keeps it on disk
// (registry.OnDisk: DISKANN) from its local cache copy, opened for reads
// by position: the index keeps only what its format loads into memory and
// reads the rest from the file, which the caller must close once the
// index is dropped. A copy that fails the decoder's checks is written
// again from object storage and the rebuild logged.
func (n *Node) openDiskIndex(ctx context.Context, key string) (registry.Built, *mmapcache.File, error) {
	cache, err := n.mmapCache()
	if err != nil {
		return nil, nil, err
	}
	open := mmapcache.FromObject(key, func(ctx context.Context) (io.ReadCloser, int64, error) { return n.objects.Open(ctx, key) })
	f, err := cache.OpenFile(ctx, key, open)
	if err != nil {
		return nil, nil, fmt.Errorf("open index %s: %w", key, err)
	}
	name := path.Base(key)
	x, err := registry.LoadFile(name, f, f.Size())
	if err == nil {
		return x, f, nil
	}
	_ = f.Close() // read-only; the index that failed holds nothing of it
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	f, rerr := cache.RefillFile(ctx, key, open, err)
	if rerr != nil {
		return nil, nil, fmt.Errorf("open index %s: %w", key, rerr)
	}
	if x, err = registry.LoadFile(name, f, f.Size()); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("decode index %s: %w", key, err)
	}
	return x, f, nil
}

// mappableField reports whether the raw data of field f can be served
// from a mapped column file (package colfile): a Bool, integer,
// floating-point or fixed-width vector field without nulls. Timestamps
// (field 1) are converted on load and stay on the heap.
func mappableField(f *schemapb.FieldSchema) bool {
	if f.GetFieldID() < 100 || f.GetNullable() {
		return false
	}
	switch f.GetDataType() {
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_Timestamptz, schemapb.DataType_Float, schemapb.DataType_Double,
		schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector:
		return true
	}
	return false
}

// columnKey is the cache key of the column file of a segment's field.
// Segments are immutable, so the key names one content for good.
func columnKey(info catalog.SegmentInfo, fieldID int64) string {
	return fmt.Sprintf("columns/%d/%d/%d/%d", info.CollectionID, info.PartitionID, info.ID, fieldID)
}

// loadColumn reads a field of a sealed segment: from its mapped column
// file when mmap is on for the field (MmapConfig.mmapField) and it can be
// mapped, else decoded from its binlogs into the heap. m is the mapping
// the column points into (nil: heap); the caller makes the segment own it.
// A column that cannot be mapped (no cache directory, a full disk) is
// decoded into the heap instead, with a warning.
func (d *delegator) loadColumn(ctx context.Context, info catalog.SegmentInfo, f *schemapb.FieldSchema) (c column.Column, m *mmapcache.Mapping, r *offheap.Region, err error) {
	if mappableField(f) && d.node.cfg.Mmap.mmapField(d.info, f) {
		c, m, err := d.mapColumn(ctx, info, f)
		if err == nil || ctx.Err() != nil {
			return c, m, nil, err
		}
		d.node.logger.Warn("mapping a column failed; reading it into memory", "segment", info.ID, "field", f.GetFieldID(), "err", err)
	}
	if d.node.cfg.SealedOffHeap {
		c, r, ok, err := d.loadFieldOffHeap(ctx, info, f)
		if ok || err != nil {
			return c, nil, r, err
		}
	}
	c, err = d.loadField(ctx, info, f)
	return c, nil, nil, err
}

// mapColumn maps the column file of a segment's field, writing it from
// the binlogs when missing; one that fails its checks (checksum, shape) is
// written again and the rebuild logged.
func (d *delegator) mapColumn(ctx context.Context, info catalog.SegmentInfo, f *schemapb.FieldSchema) (column.Column, *mmapcache.Mapping, error) {
	cache, err := d.node.mmapCache()
	if err != nil {
		return nil, nil, err
	}
	want, err := column.New(f)
	if err != nil {
		return nil, nil, err
	}
	key := columnKey(info, f.GetFieldID())
	fill := func(ctx context.Context, w io.Writer) error {
		c, err := d.loadField(ctx, info, f)
		if err != nil {
			return err
		}
		return colfile.Write(w, c)
	}
	m, err := cache.Map(ctx, key, fill)
	if err != nil {
		return nil, nil, err
	}
	for rebuilt := false; ; rebuilt = true {
		c, err := colfile.Read(&indexfile.Mapped{Data: m.Data()}, want, int(info.NumRows))
		if err == nil {
			return c, m, nil
		}
		if rebuilt {
			_ = m.Close()
			return nil, nil, fmt.Errorf("column %s: %w", key, err)
		}
		m2, rerr := cache.Rebuild(ctx, key, fill, m, 0, err)
		_ = m.Close() // the column that failed holds no slice of it
		if rerr != nil {
			return nil, nil, rerr
		}
		m = m2
	}
}

// cacheLive reports whether the cache file key still has an owner in the
// catalog, so that collectCache keeps it: a column file while its segment
// exists and is not dropped (a released collection's segments, and those
// of a load in progress, still exist); an index file while a finished,
// undropped build of an existing segment lists it. A key of another shape
// is kept: the node did not write it, and so is a key whose owner the
// data coordinator cannot tell now (an error is never read as "gone").
func (n *Node) cacheLive(ctx context.Context, key string) bool {
	if rest, ok := strings.CutPrefix(key, "columns/"); ok {
		ids := strings.Split(rest, "/")
		if len(ids) != 4 {
			return true
		}
		seg, err := strconv.ParseInt(ids[2], 10, 64)
		if err != nil {
			return true
		}
		return n.segmentExists(ctx, seg)
	}
	k, err := storage.ParseObjectKey(n.cfg.RootPath, key)
	if err != nil || k.Kind != storage.KindIndexFile {
		return true
	}
	if !n.segmentExists(ctx, k.SegmentID) {
		return false
	}
	tasks, err := n.segs.SegmentIndexes(ctx, k.SegmentID)
	if err != nil {
		return true
	}
	for _, t := range tasks {
		if slices.Contains(t.Files, key) {
			return true
		}
	}
	return false
}

// segmentExists reports whether the segment exists and is not dropped
// (true when the data coordinator cannot say now).
func (n *Node) segmentExists(ctx context.Context, id int64) bool {
	info, ok, err := n.segs.Segment(ctx, id)
	if err != nil {
		return true
	}
	return ok && info.State != catalog.SegmentDropped
}

// collectCache removes the mmap cache files of segments and index builds
// that no longer exist (cacheLive): those of a dropped collection,
// partition or index, and of a build replaced by a newer one. A file a
// loaded segment still maps is unlinked and its blocks freed when the
// segment unmaps it (mmapcache.Cache.Collect). A node whose cache
// directory does not exist has nothing to collect.
func (n *Node) collectCache(ctx context.Context) error {
	if n.cfg.Mmap.Dir == "" {
		return nil
	}
	if _, err := os.Stat(n.cfg.Mmap.Dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	cache, err := n.mmapCache()
	if err != nil {
		return err
	}
	removed, err := cache.Collect(ctx, func(key string) bool { return n.cacheLive(ctx, key) })
	if len(removed) > 0 {
		n.logger.Info("removed the mmap cache files of dropped data", "files", len(removed), "dir", cache.Dir())
	}
	return err
}

// collectLoop runs collectCache at start, after every drop the catalog
// signals (when Segments is a DropNotifier or a DropWaiter) and every
// CollectInterval, until ctx ends. A failed round is logged; the next one
// tries again.
func (n *Node) collectLoop(ctx context.Context) {
	t := time.NewTicker(n.cfg.Mmap.collectInterval())
	defer t.Stop()
	var waited chan struct{} // a DropWaiter's drops
	if w, ok := n.segs.(DropWaiter); ok {
		if _, local := n.segs.(DropNotifier); !local {
			waited = make(chan struct{}, 1)
			go n.waitDrops(ctx, w, waited)
		}
	}
	for {
		dropped := (<-chan struct{})(waited) // nil: no drop signals, the timer only
		if d, ok := n.segs.(DropNotifier); ok {
			dropped = d.Dropped() // before the round: no drop goes unseen
		}
		if err := n.collectCache(ctx); err != nil && ctx.Err() == nil {
			n.logger.Warn("collecting mmap cache files failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-dropped:
		}
	}
}

// dropWait is how long one WaitDropped call waits for a drop.
const dropWait = 30 * time.Second

// waitDrops follows a remote catalog's drops until ctx ends: it sends on
// sig (without blocking: one pending signal is enough) whenever the drop
// generation changes, and once at its first answer (the baseline). A coordinator
// that cannot be reached, or does not serve WaitDropped, is asked again
// after a pause (the timer collects meanwhile).
func (n *Node) waitDrops(ctx context.Context, w DropWaiter, sig chan<- struct{}) {
	var gen uint64
	known := false
	pause := time.Second
	for ctx.Err() == nil {
		wait := dropWait
		if !known {
			wait = 0
		}
		g, err := w.WaitDropped(ctx, gen, wait)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.logger.Debug("waiting for the catalog's drops failed; asking again", "err", err, "pause", pause.String())
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, n.cfg.Mmap.collectInterval())
			continue
		}
		pause = time.Second
		// The first answer signals too: a drop between collectLoop's
		// first round and it would go unseen otherwise.
		if !known || g != gen {
			select {
			case sig <- struct{}{}:
			default:
			}
		}
		gen, known = g, true
	}
}
