package datanode

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/sparse"
)

// buildSparseIndex builds a SPARSE_INVERTED_INDEX or SPARSE_WAND index
// (AUTOINDEX builds the former) over a sparse field's binlogs; its file key
// is the type built.
func (n *Node) buildSparseIndex(ctx context.Context, task catalog.IndexTask, idx catalog.IndexInfo,
	seg catalog.SegmentInfo, field *schemapb.FieldSchema, indexType string,
) ([]string, int64, error) {
	if field.GetDataType() != schemapb.DataType_SparseFloatVector {
		return nil, 0, fmt.Errorf("only sparse float vector fields can have an %s index", indexType)
	}
	// BM25 indexes hold the same posting lists (of term frequencies);
	// the metric only changes how the query node scores them.
	if mt := idx.Params["metric_type"]; mt != "IP" && mt != "BM25" {
		return nil, 0, fmt.Errorf("metric type %s is not supported for sparse index, only IP and BM25 are", mt)
	}
	p, err := sparse.ParseBuildParams(indexType, idx.Params)
	if err != nil {
		return nil, 0, err
	}
	c, err := n.loadField(ctx, seg, field)
	if err != nil {
		return nil, 0, err
	}
	rows, ok := c.(*column.SparseVectors)
	if !ok {
		return nil, 0, fmt.Errorf("field %q did not read as sparse vectors", field.GetName())
	}
	x, err := sparse.Build(ctx, emptyNullRows(rows), p)
	if err != nil {
		return nil, 0, err
	}
	return n.storeIndex(ctx, task, seg, p.Kind.String(), x)
}

// emptyNullRows returns the rows of c with every null row (a nullable sparse
// field) as an empty vector, which the index holds but never matches; the
// query node also masks null rows out of every search.
func emptyNullRows(c *column.SparseVectors) [][]byte {
	if c.Validity() == nil {
		return c.Data
	}
	out := make([][]byte, len(c.Data))
	for i, r := range c.Data {
		if c.IsNull(i) || r == nil {
			r = []byte{}
		}
		out[i] = r
	}
	return out
}
