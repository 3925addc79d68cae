package datanode

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
)

// taskField returns the flushed segment and the schema field of a build task.
func (n *Node) taskField(ctx context.Context, coord IndexCoord, task catalog.IndexTask) (catalog.SegmentInfo, *schemapb.FieldSchema, error) {
	seg, ok, err := coord.Segment(ctx, task.SegmentID)
	if err != nil {
		return catalog.SegmentInfo{}, nil, err
	}
	if !ok || seg.State != catalog.SegmentFlushed {
		return catalog.SegmentInfo{}, nil, fmt.Errorf("segment %d is not flushed", task.SegmentID)
	}
	coll, err := n.colls.CollectionByID(task.CollectionID)
	if err != nil {
		return catalog.SegmentInfo{}, nil, err
	}
	for _, f := range coll.Schema.GetFields() {
		if f.GetFieldID() == task.FieldID {
			return seg, f, nil
		}
	}
	return catalog.SegmentInfo{}, nil, fmt.Errorf("field %d not in collection %d", task.FieldID, task.CollectionID)
}
