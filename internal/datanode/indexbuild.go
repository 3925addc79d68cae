package datanode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/storage"
)

// IndexCoord hands out index build tasks and takes their results.
type IndexCoord interface {
	ClaimIndexTask(ctx context.Context, builder string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error)
	FinishIndexTask(ctx context.Context, buildID, version int64, files []string, size int64, buildErr error) error
	Segment(id int64) (catalog.SegmentInfo, bool)
}

// IndexFileName is the file key of an HNSW index inside its build directory.
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
	switch strings.ToUpper(idx.Params["index_type"]) {
	case "HNSW", "AUTOINDEX":
	default:
		// Other index types are served by exact search for now: nothing to build.
		return nil, 0, nil
	}
	seg, ok := coord.Segment(task.SegmentID)
	if !ok || seg.State != catalog.SegmentFlushed {
		return nil, 0, fmt.Errorf("segment %d is not flushed", task.SegmentID)
	}
	coll, err := n.colls.CollectionByID(task.CollectionID)
	if err != nil {
		return nil, 0, err
	}
	var field = coll.Schema.GetFields()[0]
	for _, f := range coll.Schema.GetFields() {
		if f.GetFieldID() == task.FieldID {
			field = f
		}
	}
	if field.GetFieldID() != task.FieldID {
		return nil, 0, fmt.Errorf("field %d not in collection %d", task.FieldID, task.CollectionID)
	}
	metric, err := index.ParseMetric(idx.Params["metric_type"])
	if err != nil {
		return nil, 0, err
	}
	cfg := hnsw.Defaults()
	if v, ok := idx.Params["M"]; ok {
		if cfg.M, err = strconv.Atoi(v); err != nil {
			return nil, 0, fmt.Errorf("M %q is not an integer", v)
		}
	}
	if v, ok := idx.Params["efConstruction"]; ok {
		if cfg.EfConstruction, err = strconv.Atoi(v); err != nil {
			return nil, 0, fmt.Errorf("efConstruction %q is not an integer", v)
		}
	}
	var vecs *column.FloatVectors
	for _, l := range seg.Binlogs[task.FieldID] {
		key := storage.InsertLogKey(n.cfg.RootPath, seg.CollectionID, seg.PartitionID, seg.ID, task.FieldID, l.LogID)
		data, err := n.objects.Get(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		bl, err := storage.DecodeBinlog(data)
		if err != nil {
			return nil, 0, fmt.Errorf("decode %s: %w", key, err)
		}
		c, ok := bl.Column().(*column.FloatVectors)
		if !ok {
			return nil, 0, errors.New("only float vector fields can have an HNSW index")
		}
		if vecs == nil {
			vecs = &column.FloatVectors{Dim: c.Dim}
		}
		vecs.Data = append(vecs.Data, c.Data...)
	}
	if vecs == nil {
		return nil, 0, fmt.Errorf("segment %d has no binlogs for field %d", seg.ID, task.FieldID)
	}
	x, err := hnsw.Build(vecs.Data, vecs.Dim, metric, cfg)
	if err != nil {
		return nil, 0, err
	}
	var buf bytes.Buffer
	if err := x.Marshal(&buf); err != nil {
		return nil, 0, err
	}
	key := storage.IndexFileKey(n.cfg.RootPath, task.BuildID, task.Version, seg.PartitionID, seg.ID, IndexFileName)
	if err := n.objects.Put(ctx, key, buf.Bytes()); err != nil {
		return nil, 0, err
	}
	return []string{key}, int64(buf.Len()), nil
}
