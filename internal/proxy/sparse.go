package proxy

import (
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/plan"
)

// checkSparseRows validates every row of a sparse vector column as Milvus
// does (sparse.Validate) and sets the column's dim to the largest index
// plus one, whatever dim the client sent.
func checkSparseRows(f *schemapb.FieldSchema, c *column.SparseVectors) error {
	c.Dim = 0
	for i, row := range c.Data {
		if c.IsNull(i) {
			continue
		}
		if err := sparse.Validate(row); err != nil {
			return errcode.Invalid("field %q: row %d: %v", f.GetName(), i, err)
		}
		c.Dim = max(c.Dim, sparse.Dim(row))
	}
	return nil
}

// parseSparsePlaceholder decodes the query vectors of a search on a sparse
// field, each validated like an inserted row.
func parseSparsePlaceholder(ph *commonpb.PlaceholderValue) ([][]byte, error) {
	if ph.GetType() != commonpb.PlaceholderType_SparseFloatVector {
		return nil, errcode.Invalid("query vectors of type %s do not match the sparse float vector field", ph.GetType())
	}
	if len(ph.GetValues()) == 0 {
		return nil, errcode.Invalid("no query vectors were sent")
	}
	for i, row := range ph.GetValues() {
		if err := sparse.Validate(row); err != nil {
			return nil, errcode.Invalid("query vector %d: %v", i, err)
		}
	}
	return ph.GetValues(), nil
}

// sparseQueries returns the query vectors of a search on a sparse field.
func sparseQueries(req *milvuspb.SearchRequest) ([][]byte, error) {
	ph, err := onePlaceholder(req.GetPlaceholderGroup())
	if err != nil {
		return nil, err
	}
	return parseSparsePlaceholder(ph)
}

// onePlaceholder decodes a placeholder group that must hold one placeholder.
func onePlaceholder(raw []byte) (*commonpb.PlaceholderValue, error) {
	pg := &commonpb.PlaceholderGroup{}
	if err := proto.Unmarshal(raw, pg); err != nil {
		return nil, errcode.Invalid("the placeholder group is malformed: %v", err)
	}
	if len(pg.GetPlaceholders()) != 1 {
		return nil, errcode.Invalid("expected one placeholder, got %d", len(pg.GetPlaceholders()))
	}
	return pg.GetPlaceholders()[0], nil
}

// parseSparseSearchParams reads the sparse index search parameters:
// drop_ratio_search, a number in [0, 1), and refine_factor, a positive
// integer.
func parseSparseSearchParams(m map[string]any, sreq *plan.Search) error {
	if v, found := m["drop_ratio_search"]; found {
		f, ok := toNumber(v)
		if !ok {
			return errcode.Invalid("invalid drop_ratio_search: %v, must be in range [0, 1)", v)
		}
		if err := sparse.CheckDropRatioSearch(f); err != nil {
			return errcode.Invalid("%v", err)
		}
		sreq.DropRatioSearch = f
	}
	if v, found := m["dim_max_score_ratio"]; found {
		// A pruning knob of Milvus's approximate sparse search; every path
		// here is exact, so it is checked and otherwise has no effect.
		f, ok := toNumber(v)
		if !ok || f < 0.5 || f > 1.3 {
			return errcode.Invalid("Out of range in json: param 'dim_max_score_ratio' (%v) should be in range [0.500000, 1.300000]", v)
		}
	}
	if v, found := m["refine_factor"]; found {
		f, ok := toNumber(v)
		if !ok || f < 1 || f != float64(int(f)) || f > 1<<16 {
			return errcode.Invalid("refine_factor %v should be a positive integer", v)
		}
		sreq.RefineFactor = int(f)
	}
	return nil
}

// checkSparseIndex validates CreateIndex parameters for a sparse field, or
// a sparse index type asked for on another field, and returns the index
// type to record. AUTOINDEX builds SPARSE_INVERTED_INDEX; the metric is IP
// (the default), or BM25 on a BM25 function's output field (the only metric
// there, and its default), with bm25_k1 and bm25_b; drop_ratio_build must
// be in [0, 1).
func checkSparseIndex(f *schemapb.FieldSchema, it string, params map[string]string, bm25Output bool) (string, error) {
	if f.GetDataType() == schemapb.DataType_Int8Vector {
		return "", int8IndexError(it)
	}
	if f.GetDataType() != schemapb.DataType_SparseFloatVector {
		return "", errcode.Invalid("index type %s is only supported for sparse float vector fields, field %q is %s",
			it, f.GetName(), f.GetDataType())
	}
	if it == "" {
		it = "AUTOINDEX"
	}
	tp, ok := registry.Resolve(it, schemapb.DataType_SparseFloatVector)
	if !ok || tp.Family != registry.Sparse {
		return "", errcode.Invalid("invalid index type: %s, sparse float vector fields support SPARSE_INVERTED_INDEX, SPARSE_WAND and AUTOINDEX", it)
	}
	mt := strings.ToUpper(params["metric_type"])
	switch {
	case bm25Output && mt == "":
		mt = plan.MetricBM25
	case bm25Output && mt != plan.MetricBM25:
		return "", errcode.Invalid("index metric type of BM25 function output field must be BM25, got %s", params["metric_type"])
	case bm25Output:
	case mt == "":
		mt = plan.MetricIP
	case mt == plan.MetricBM25:
		return "", errcode.Invalid("only BM25 Function output field support BM25 metric type")
	case mt != plan.MetricIP:
		return "", errcode.Invalid("metric type %s is not supported for sparse index, only IP is the supported metric type", params["metric_type"])
	}
	params["metric_type"] = mt
	if mt == plan.MetricBM25 {
		if _, err := bm25Params(params); err != nil {
			return "", err
		}
	}
	if err := tp.Check(f, params); err != nil {
		return "", errcode.Invalid("%v", err)
	}
	return it, nil
}

// isSparseIndexType reports whether it names a sparse index type (in any
// case; AUTOINDEX, which serves every field, does not count).
func isSparseIndexType(it string) bool {
	tp, ok := registry.Lookup(it)
	return ok && tp.Family == registry.Sparse
}

// sparseRows returns the given rows of a stored sparse vector column as
// query vectors (search by primary key).
func sparseRows(c column.Column, rows []int) ([][]byte, error) {
	sv, ok := c.(*column.SparseVectors)
	if !ok {
		if len(rows) == 0 {
			return nil, nil
		}
		return nil, errcode.Invalid("the vectors to search by could not be read")
	}
	out := make([][]byte, len(rows))
	for j, i := range rows {
		if sv.IsNull(i) {
			out[j] = []byte{} // an empty query; plan.Search.NullQueries gives it no hits
			continue
		}
		out[j] = sv.Data[i]
	}
	return out, nil
}
