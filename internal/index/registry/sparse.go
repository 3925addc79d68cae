package registry

import (
	"context"
	"fmt"
	"io"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/sparse"
)

// sparseTypes are the index types of sparse float vectors. Their names
// match in any case, as Milvus matches them. BM25 indexes hold the same
// posting lists (of term frequencies); the metric only changes how the
// query node scores them.
func sparseTypes() []*Type {
	sparseType := func(k sparse.Kind) *Type {
		name := k.String()
		return &Type{
			Name: name, Family: Sparse, FoldCase: true, Fields: []schemapb.DataType{schemapb.DataType_SparseFloatVector},
			Metrics: []string{"IP", "BM25"}, SearchParams: []string{"drop_ratio_search"},
			ParseParams: func(_ *schemapb.FieldSchema, params map[string]string) error {
				_, err := sparse.ParseBuildParams(name, params)
				return err
			},
			Build: func(ctx context.Context, c column.Column, params map[string]string) (Built, error) {
				return buildSparse(ctx, name, c, params)
			},
			FileKey: name,
			Load:    func(r io.Reader) (Built, error) { return unwrap(sparse.Unmarshal(r)) },
		}
	}
	return []*Type{sparseType(sparse.Inverted), sparseType(sparse.WAND)}
}

// buildSparse builds a sparse index of the named type over a sparse column.
func buildSparse(ctx context.Context, name string, c column.Column, params map[string]string) (Built, error) {
	if mt := params["metric_type"]; mt != "IP" && mt != "BM25" {
		return nil, fmt.Errorf("metric type %s is not supported for sparse index, only IP and BM25 are", mt)
	}
	p, err := sparse.ParseBuildParams(name, params)
	if err != nil {
		return nil, err
	}
	rows, ok := c.(*column.SparseVectors)
	if !ok {
		return nil, fmt.Errorf("a %s column cannot have an %s index", c.Type(), name)
	}
	return sparse.Build(ctx, emptyNullRows(rows), p)
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
