package datanode

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/index/scalar"
)

// taskField returns the flushed segment and the schema field of a build task.
func (n *Node) taskField(coord IndexCoord, task catalog.IndexTask) (catalog.SegmentInfo, *schemapb.FieldSchema, error) {
	seg, ok := coord.Segment(task.SegmentID)
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

// scalarKind returns the scalar index kind a task builds: the named kind,
// or INVERTED for AUTOINDEX on a scalar or JSON field.
func (n *Node) scalarKind(coord IndexCoord, task catalog.IndexTask, idx catalog.IndexInfo) (scalar.Kind, bool) {
	it := idx.Params["index_type"]
	if k, ok := scalar.ParseKind(it); ok {
		return k, true
	}
	if it != "AUTOINDEX" {
		return 0, false
	}
	_, f, err := n.taskField(coord, task)
	if err != nil {
		return 0, false
	}
	switch f.GetDataType() {
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_Float, schemapb.DataType_Double, schemapb.DataType_VarChar,
		schemapb.DataType_Array, schemapb.DataType_JSON:
		return scalar.Inverted, true
	case schemapb.DataType_Timestamptz:
		return scalar.Sort, true
	}
	return 0, false
}

// buildScalarIndex builds a scalar index (INVERTED, STL_SORT, BITMAP or
// Trie) over one segment's field and writes it under the file key named
// after the kind. A JSON field's index (json_path / json_cast_type) is
// recorded but not built: filters on it scan.
func (n *Node) buildScalarIndex(ctx context.Context, coord IndexCoord, task catalog.IndexTask, kind scalar.Kind) ([]string, int64, error) {
	seg, field, err := n.taskField(coord, task)
	if err != nil {
		return nil, 0, err
	}
	if field.GetDataType() == schemapb.DataType_JSON {
		return nil, 0, nil
	}
	col, err := n.loadField(ctx, seg, field)
	if err != nil {
		return nil, 0, err
	}
	x, err := scalar.Build(ctx, kind, col)
	if err != nil {
		return nil, 0, err
	}
	return n.storeIndex(ctx, task, seg, kind.String(), x)
}
