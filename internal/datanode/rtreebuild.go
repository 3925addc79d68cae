package datanode

import (
	"context"
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/scalar"
)

// buildRTreeIndex builds the RTREE index of one segment's Geometry field
// and writes it under the file key "RTREE".
func (n *Node) buildRTreeIndex(ctx context.Context, coord IndexCoord, task catalog.IndexTask) ([]string, int64, error) {
	seg, field, err := n.taskField(coord, task)
	if err != nil {
		return nil, 0, err
	}
	col, err := n.loadField(ctx, seg, field)
	if err != nil {
		return nil, 0, err
	}
	g, ok := col.(*column.Geometries)
	if !ok {
		return nil, 0, fmt.Errorf("RTREE index on field %s: column is %T, not Geometry", field.GetName(), col)
	}
	return n.storeIndex(ctx, task, seg, scalar.RTreeFileKey, scalar.BuildRTree(g))
}
