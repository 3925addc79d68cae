package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/diskann"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/index/ivf"
	"github.com/strata-db/strata/internal/index/rabitq"
)

// HNSWFileKey is the file key of an HNSW index file, which HNSW and
// AUTOINDEX on dense (float, half-precision and int8) vectors write. It is
// durable: index files written under it must keep loading.
const HNSWFileKey = "HNSW"

// Data types of the dense-vector index types. Float16, BFloat16 and Int8
// vectors are indexed widened to float32. Embedding lists (ArrayOfVector,
// the vector sub-fields of an Array of Structs) are searched by exact
// MAX_SIM scans whatever the type, so nothing is built on them.
var (
	denseFields   = []schemapb.DataType{schemapb.DataType_FloatVector, schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector}
	embListFields = slices.Concat(denseFields, []schemapb.DataType{schemapb.DataType_ArrayOfVector})
	hnswFields    = slices.Concat(embListFields, []schemapb.DataType{schemapb.DataType_Int8Vector})
	denseMetrics  = []string{"L2", "IP", "COSINE"}
	sqFields      = slices.Concat(denseFields, []schemapb.DataType{schemapb.DataType_Int8Vector})
)

// quantHNSWType is a quantized HNSW index type (HNSW_SQ, HNSW_PQ): an HNSW
// graph searched over quantized vectors, with an optional refine store.
// parse reads its build parameters (dim is the field's, 0 when unknown).
// Its file key is its name.
func quantHNSWType(name string, fields []schemapb.DataType, parse func(params map[string]string, dim int) (hnsw.Config, error)) *Type {
	return &Type{
		Name: name, Family: Dense, Fields: fields, Metrics: denseMetrics, SearchParams: []string{"ef", "refine_k"},
		ParseParams: func(f *schemapb.FieldSchema, params map[string]string) error {
			dim, _ := column.Dim(f)
			if _, err := parse(params, dim); err != nil {
				// Milvus words knowhere's refusal as merr's invalid parameter.
				return fmt.Errorf("%w: invalid parameter", err)
			}
			return nil
		},
		Build: func(ctx context.Context, c column.Column, params map[string]string) (Built, error) {
			return buildDense(c, params, func(vecs *column.FloatVectors, metric index.Metric) (Built, error) {
				cfg, err := parse(params, vecs.Dim)
				if err != nil {
					return nil, err
				}
				return hnsw.Build(ctx, vecs.Data, vecs.Dim, metric, cfg)
			})
		},
		FileKey: name,
		Load:    func(r io.Reader) (Built, error) { return unwrap(hnsw.UnmarshalQuantized(r)) },
	}
}

// denseTypes are the index types of float (and half-precision and int8)
// vectors. FLAT and SCANN are accepted and served by exact search.
// HNSW_SQ and HNSW_PQ build quantized HNSW graphs, IVF_RABITQ inverted
// lists of RaBitQ codes, DISKANN a graph kept on local disk with PQ codes
// in memory (OnDisk).
func denseTypes() []*Type {
	ivfType := func(name string, fields []schemapb.DataType) *Type {
		return &Type{
			Name: name, Family: Dense, Fields: fields, Metrics: denseMetrics, SearchParams: []string{"nprobe"},
			ParseParams: func(f *schemapb.FieldSchema, params map[string]string) error {
				dim, _ := column.Dim(f)
				_, err := ivf.ParseParams(name, params, dim)
				return err
			},
			Build: func(ctx context.Context, c column.Column, params map[string]string) (Built, error) {
				return buildDense(c, params, func(vecs *column.FloatVectors, metric index.Metric) (Built, error) {
					cfg, err := ivf.ParseParams(name, params, vecs.Dim)
					if err != nil {
						return nil, err
					}
					return ivf.Build(ctx, vecs.Data, vecs.Dim, metric, cfg)
				})
			},
			FileKey:  name,
			Load:     func(r io.Reader) (Built, error) { return unwrap(ivf.Unmarshal(r)) },
			Mappable: true,
		}
	}
	return []*Type{
		{Name: "FLAT", Family: Dense, Fields: embListFields, Metrics: denseMetrics},
		ivfType("IVF_FLAT", embListFields),
		ivfType("IVF_SQ8", denseFields),
		ivfType("IVF_PQ", denseFields),
		{
			Name: "HNSW", Family: Dense, Fields: hnswFields, Metrics: denseMetrics, SearchParams: []string{"ef"},
			ParseParams: func(_ *schemapb.FieldSchema, params map[string]string) error {
				_, err := hnsw.ParseParams(params)
				return err
			},
			Build:    buildHNSW,
			FileKey:  HNSWFileKey,
			Load:     func(r io.Reader) (Built, error) { return unwrap(hnsw.Unmarshal(r)) },
			Mappable: true,
		},
		quantHNSWType("HNSW_SQ", sqFields, func(params map[string]string, _ int) (hnsw.Config, error) {
			return hnsw.ParseSQParams(params)
		}),
		quantHNSWType("HNSW_PQ", denseFields, hnsw.ParsePQParams),
		diskannType(),
		{Name: "SCANN", Family: Dense, Fields: denseFields, Metrics: denseMetrics},
		{
			Name: "IVF_RABITQ", Family: Dense, Fields: denseFields, Metrics: denseMetrics,
			SearchParams: []string{"nprobe", "rbq_bits_query", "refine_k"},
			ParseParams: func(_ *schemapb.FieldSchema, params map[string]string) error {
				if _, err := rabitq.ParseParams(params); err != nil {
					return fmt.Errorf("%w: invalid parameter", err)
				}
				return nil
			},
			Build: func(ctx context.Context, c column.Column, params map[string]string) (Built, error) {
				cfg, err := rabitq.ParseParams(params)
				if err != nil {
					return nil, err
				}
				return buildDense(c, params, func(vecs *column.FloatVectors, metric index.Metric) (Built, error) {
					return rabitq.Build(ctx, vecs.Data, vecs.Dim, metric, cfg)
				})
			},
			FileKey: "IVF_RABITQ",
			Load:    func(r io.Reader) (Built, error) { return unwrap(rabitq.Unmarshal(r)) },
		},
		{Name: "EMB_LIST_HNSW", Family: Dense, Fields: []schemapb.DataType{schemapb.DataType_ArrayOfVector}},
	}
}

// DiskANNFileKey is the file key of a DISKANN index file. It is durable.
const DiskANNFileKey = "DISKANN"

// diskannType is DISKANN: Milvus's build parameters max_degree,
// search_list_size and pq_code_budget_gb_ratio, its search parameter
// search_list. Its files are read from a local copy by position
// (LoadFile); Load, for a stream, holds the whole file in memory.
func diskannType() *Type {
	return &Type{
		Name: "DISKANN", Family: Dense, Fields: embListFields, Metrics: denseMetrics, SearchParams: []string{"search_list"},
		ParseParams: func(_ *schemapb.FieldSchema, params map[string]string) error {
			_, err := diskann.ParseParams(params)
			return err
		},
		Build: func(ctx context.Context, c column.Column, params map[string]string) (Built, error) {
			cfg, err := diskann.ParseParams(params)
			if err != nil {
				return nil, err
			}
			return buildDense(c, params, func(vecs *column.FloatVectors, metric index.Metric) (Built, error) {
				return diskann.Build(ctx, vecs.Data, vecs.Dim, metric, cfg)
			})
		},
		FileKey: DiskANNFileKey,
		Load: func(r io.Reader) (Built, error) {
			data, err := io.ReadAll(r)
			if err != nil {
				return nil, fmt.Errorf("read DISKANN index file: %w", err)
			}
			return unwrap(diskann.Open(bytes.NewReader(data), int64(len(data))))
		},
		LoadFile: func(r io.ReaderAt, size int64) (Built, error) { return unwrap(diskann.Open(r, size)) },
	}
}

// buildHNSW builds an HNSW graph from the Milvus parameters M and
// efConstruction, parsed as ParseParams parses them.
func buildHNSW(ctx context.Context, c column.Column, params map[string]string) (Built, error) {
	cfg, err := hnsw.ParseParams(params)
	if err != nil {
		return nil, err
	}
	return buildDense(c, params, func(vecs *column.FloatVectors, metric index.Metric) (Built, error) {
		return hnsw.Build(ctx, vecs.Data, vecs.Dim, metric, cfg)
	})
}

// buildDense runs build over the float32 vectors of c (Float16, BFloat16
// and Int8 vectors widened; the widened copy lives only during the build)
// with the index's metric.
func buildDense(c column.Column, params map[string]string,
	build func(*column.FloatVectors, index.Metric) (Built, error),
) (Built, error) {
	metric, err := index.ParseMetric(params["metric_type"])
	if err != nil {
		return nil, err
	}
	if !metric.Float() {
		return nil, fmt.Errorf("metric type %s does not score float vectors", metric)
	}
	switch c := c.(type) {
	case *column.FloatVectors:
		return build(c, metric)
	case *column.ByteVectors:
		if vecs := c.Widen(); vecs != nil {
			return build(vecs, metric)
		}
	}
	return nil, fmt.Errorf("a %s column cannot have a dense-vector index", c.Type())
}
