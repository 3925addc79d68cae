package datanode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/index/ivf"
	"github.com/strata-db/strata/internal/index/scalar"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/storage"
)

// IndexCoord hands out index build tasks and takes their results.
type IndexCoord interface {
	ClaimIndexTask(ctx context.Context, builder string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error)
	FinishIndexTask(ctx context.Context, buildID, version int64, files []string, size int64, buildErr error) error
	Segment(id int64) (catalog.SegmentInfo, bool)
}

// IndexFileName is the file key of an HNSW index inside its build
// directory. Every index file is keyed by the name of the index type built
// (HNSW, IVF_FLAT, IVF_SQ8, IVF_PQ, BIN_IVF_FLAT, SPARSE_INVERTED_INDEX or
// SPARSE_WAND), which is how the query node picks the decoder.
const IndexFileName = "HNSW"

// RunIndexBuilder claims build tasks from coord and builds them one at a
// time (each build uses every core) until ctx ends.
func (n *Node) RunIndexBuilder(ctx context.Context, coord IndexCoord, name string) error {
	for {
		task, idx, ok, err := coord.ClaimIndexTask(ctx, name, time.Second)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			n.logger.Warn("claim index task failed", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		if !ok {
			continue
		}
		start := time.Now()
		files, size, buildErr := n.buildIndex(ctx, coord, task, idx)
		if ctx.Err() != nil {
			return nil // the task goes back to Unissued on the next start
		}
		if buildErr != nil {
			n.logger.Warn("index build failed", "build", task.BuildID, "segment", task.SegmentID, "err", buildErr)
		} else {
			n.logger.Info("index built", "build", task.BuildID, "segment", task.SegmentID, "rows", task.Rows,
				"bytes", size, "took", time.Since(start).String())
		}
		if err := coord.FinishIndexTask(ctx, task.BuildID, task.Version, files, size, buildErr); err != nil && ctx.Err() == nil {
			n.logger.Warn("finish index task failed", "build", task.BuildID, "err", err)
		}
	}
}

// buildIndex builds one task and returns the files it wrote.
func (n *Node) buildIndex(ctx context.Context, coord IndexCoord, task catalog.IndexTask, idx catalog.IndexInfo) ([]string, int64, error) {
	if strings.ToUpper(idx.Params["index_type"]) == scalar.RTreeFileKey {
		return n.buildRTreeIndex(ctx, coord, task)
	}
	if kind, ok := n.scalarKind(coord, task, idx); ok {
		return n.buildScalarIndex(ctx, coord, task, kind)
	}
	indexType := strings.ToUpper(idx.Params["index_type"])
	switch indexType {
	case "HNSW", "AUTOINDEX", "IVF_FLAT", "IVF_SQ8", "IVF_PQ", "BIN_IVF_FLAT", "SPARSE_INVERTED_INDEX", "SPARSE_WAND":
	default:
		// Other index types are served by exact search for now: nothing to build.
		return nil, 0, nil
	}
	seg, field, err := n.taskField(coord, task)
	if err != nil {
		return nil, 0, err
	}
	if field.GetDataType() == schemapb.DataType_ArrayOfVector {
		// Embedding lists (the vector sub-fields of an Array of Structs) are
		// searched by exact MAX_SIM scan: nothing to build.
		return nil, 0, nil
	}
	if field.GetDataType() == schemapb.DataType_SparseFloatVector || sparse.IsIndexType(indexType) {
		return n.buildSparseIndex(ctx, task, idx, seg, field, indexType)
	}
	metric, err := index.ParseMetric(idx.Params["metric_type"])
	if err != nil {
		return nil, 0, err
	}
	col, err := n.loadField(ctx, seg, field)
	if err != nil {
		return nil, 0, err
	}
	x, fileKey, err := buildFieldIndex(ctx, indexType, idx.Params, col, metric)
	if err != nil {
		return nil, 0, err
	}
	return n.storeIndex(ctx, task, seg, fileKey, x)
}

// storeIndex writes an index's file under its file key in the build's
// directory and returns the files written and their size.
func (n *Node) storeIndex(ctx context.Context, task catalog.IndexTask, seg catalog.SegmentInfo, fileKey string,
	x interface{ Marshal(io.Writer) error },
) ([]string, int64, error) {
	var buf bytes.Buffer
	if err := x.Marshal(&buf); err != nil {
		return nil, 0, err
	}
	key := storage.IndexFileKey(n.cfg.RootPath, task.BuildID, task.Version, seg.PartitionID, seg.ID, fileKey)
	if err := n.objects.Put(ctx, key, buf.Bytes()); err != nil {
		return nil, 0, err
	}
	return []string{key}, int64(buf.Len()), nil
}

// buildVectorIndex builds an index of the given (upper-case) type from its
// Milvus index parameters and returns it with its file key, the name of the
// type built: AUTOINDEX builds HNSW. It returns ctx.Err() soon after ctx
// ends.
func buildVectorIndex(ctx context.Context, indexType string, params map[string]string, vecs *column.FloatVectors, metric index.Metric) (index.Index, string, error) {
	switch indexType {
	case "IVF_FLAT", "IVF_SQ8", "IVF_PQ":
		cfg, err := ivf.ParseParams(indexType, params, vecs.Dim)
		if err != nil {
			return nil, "", err
		}
		x, err := ivf.Build(ctx, vecs.Data, vecs.Dim, metric, cfg)
		if err != nil {
			return nil, "", err
		}
		return x, cfg.Kind.String(), nil
	}
	cfg := hnsw.Defaults()
	var err error
	if v, ok := params["M"]; ok {
		if cfg.M, err = strconv.Atoi(v); err != nil {
			return nil, "", fmt.Errorf("M %q is not an integer", v)
		}
	}
	if v, ok := params["efConstruction"]; ok {
		if cfg.EfConstruction, err = strconv.Atoi(v); err != nil {
			return nil, "", fmt.Errorf("efConstruction %q is not an integer", v)
		}
	}
	x, err := hnsw.Build(ctx, vecs.Data, vecs.Dim, metric, cfg)
	if err != nil {
		return nil, "", err
	}
	return x, IndexFileName, nil
}

// loadField reads the column of field from the binlogs of seg.
func (n *Node) loadField(ctx context.Context, seg catalog.SegmentInfo, field *schemapb.FieldSchema) (column.Column, error) {
	return storage.ReadField(ctx, n.objects, storage.FieldLogs{Root: n.cfg.RootPath,
		Collection: seg.CollectionID, Partition: seg.PartitionID, ID: seg.ID, LogIDs: seg.LogIDs(field.GetFieldID()), Rows: seg.FieldLogRows()}, field)
}
