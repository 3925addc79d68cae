package querynode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/index/indexfile"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/mmapcache"
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
	open := func(ctx context.Context) (io.ReadCloser, int64, error) { return n.objects.Open(ctx, key) }
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
