package datanode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/storage"
)

// IndexCoord hands out index build tasks and takes their results.
type IndexCoord interface {
	ClaimIndexTask(ctx context.Context, builder string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error)
	FinishIndexTask(ctx context.Context, buildID, version int64, files []string, size int64, buildErr error) error
	Segment(ctx context.Context, id int64) (catalog.SegmentInfo, bool, error)
}

// RunIndexBuilder claims build tasks from coord and builds them one at a
// time (each build uses every core) until ctx ends. name identifies the
// builder and must be unique among the builders of one coordinator: a claim
// under a name takes back a task still leased to it.
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
		n.logger.Info("index build started", "build", task.BuildID, "index", idx.Name, "collection", task.CollectionID,
			"segment", task.SegmentID, "rows", task.Rows, "attempt", task.Version, "builder", name)
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

// buildIndex builds one task and returns the files it wrote: the index
// type's build (registry.Type.Build, AUTOINDEX resolved by the field's data
// type) over the segment's column, written under the type's file key.
// Types served by exact search, embedding lists and JSON fields build
// nothing.
func (n *Node) buildIndex(ctx context.Context, coord IndexCoord, task catalog.IndexTask, idx catalog.IndexInfo) ([]string, int64, error) {
	name := idx.Params["index_type"]
	if !registry.Builds(name) {
		return nil, 0, nil
	}
	seg, field, err := n.taskField(ctx, coord, task)
	if err != nil {
		return nil, 0, err
	}
	dt := field.GetDataType()
	tp, ok := registry.Resolve(name, dt)
	if !ok {
		return nil, 0, nil
	}
	if !tp.Accepts(dt) {
		return nil, 0, fmt.Errorf("a %s field cannot have an %s index", dt, name)
	}
	if !tp.BuildsOn(dt) {
		return nil, 0, nil
	}
	col, err := n.loadField(ctx, seg, field)
	if err != nil {
		return nil, 0, err
	}
	x, err := tp.Build(ctx, col, idx.Params)
	if err != nil {
		return nil, 0, err
	}
	return n.storeIndex(ctx, task, seg, tp.FileKey, x)
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

// loadField reads the column of field from the binlogs of seg.
func (n *Node) loadField(ctx context.Context, seg catalog.SegmentInfo, field *schemapb.FieldSchema) (column.Column, error) {
	return storage.ReadField(ctx, n.objects, storage.FieldLogs{
		Root:       n.cfg.RootPath,
		Collection: seg.CollectionID, Partition: seg.PartitionID, ID: seg.ID, LogIDs: seg.LogIDs(field.GetFieldID()), Rows: seg.FieldLogRows(),
	}, field)
}
