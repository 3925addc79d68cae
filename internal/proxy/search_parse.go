package proxy

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
)

// readEnv is what parsing a read takes from outside its request: the clock
// and staleness that turn a consistency level into a guarantee timestamp,
// and the collection's indexes (a search's default metric and BM25 scoring
// come from them). Parsing reads nothing else, so it is a pure function of
// the collection, the request and a readEnv.
type readEnv struct {
	now       time.Time
	staleness time.Duration // what Bounded consistency accepts
	indexes   []catalog.IndexInfo
	// loaded: the collection searched is loaded (the query node answers
	// 101 for one that is not, before any field is looked at).
	loaded bool
}

// readEnv is the proxy's environment for parsing a query (no indexes).
func (p *Proxy) readEnv() readEnv {
	return readEnv{now: time.Now(), staleness: p.cfg.BoundedStaleness}
}

// searchEnv is the proxy's environment for parsing a search of col.
func (p *Proxy) searchEnv(ctx context.Context, col *catalog.Collection) (readEnv, error) {
	env := p.readEnv()
	idxs, err := p.data.Indexes(ctx, col.ID)
	if err != nil {
		return readEnv{}, err
	}
	env.indexes = idxs
	if env.loaded, _, err = p.query.Loaded(ctx, col.ID); err != nil {
		return readEnv{}, err
	}
	return env, nil
}

// indexParams returns the parameters of the index on a field (nil when it
// has none).
func (e readEnv) indexParams(fieldID int64) map[string]string {
	for _, idx := range e.indexes {
		if idx.FieldID == fieldID {
			return idx.Params
		}
	}
	return nil
}

// consistency turns a request's level and guarantee timestamp into the
// query node's guarantee and whether to force a tick (Strong).
func (e readEnv) consistency(col *catalog.Collection, level commonpb.ConsistencyLevel, useDefault bool, gts uint64) (uint64, bool) {
	if useDefault {
		level = commonpb.ConsistencyLevel(col.ConsistencyLevel)
	}
	switch level {
	case commonpb.ConsistencyLevel_Strong:
		return 0, true
	case commonpb.ConsistencyLevel_Session:
		if gts == 0 {
			return 0, true
		}
		return gts, false
	case commonpb.ConsistencyLevel_Eventually:
		return 1, false
	case commonpb.ConsistencyLevel_Customized:
		return gts, false
	default: // Bounded
		ms := e.now.Add(-e.staleness).UnixMilli()
		bound := uint64(ms) << 18
		if useDefault && gts > 1 {
			// pymilvus sends the client's last write timestamp with the
			// default level: honour it, so a client reads its own writes.
			bound = max(bound, gts)
		}
		return bound, false
	}
}

// searchPlan is a search request parsed and validated against its
// collection: the query node's request and what shaping the answer takes.
// Only the query vectors of a search by primary keys are missing (byPK):
// reading them is I/O, done when the search runs (bindPKVectors).
type searchPlan struct {
	sreq  *plan.Search
	field *schemapb.FieldSchema // the anns field
	byPK  *schemapb.IDs         // search by primary keys: whose stored vectors are the queries
	// topk and offset window each query's hits; round is round_decimal (-1: none).
	topk, offset, round int
	metric              string
	loc                 *time.Location // renders Timestamptz output
	out, userOut        *outputSpec    // out adds the highlighter's fields to the user's
	hl                  *searchHighlight
	iter                *schemapb.SearchIteratorV2Results // nil unless a search iterator v2 batch
	ranker              functionRanker                    // nil without a function_score
}

// parseSearch parses and validates a search of col, in the order Milvus
// reports a request's first problem: the filter, topk and offset, hints,
// time zone and round_decimal, the anns field, the highlighter, the query
// vectors and nq, the metric, iterator, group-by and index parameters, the
// output fields, partitions and consistency, ignore_growing and the
// function score. It does no I/O and touches no proxy state.
func parseSearch(col *catalog.Collection, req *milvuspb.SearchRequest, env readEnv) (*searchPlan, error) {
	params := req.GetSearchParams()
	if err := checkCollectionID(col, params); err != nil {
		return nil, err
	}
	if f := req.GetDsl(); f != "" {
		// Milvus plans the filter before it reads the query vectors.
		if _, err := expr.Compile(f, col.Schema, req.GetExprTemplateValues()); err != nil {
			return nil, filterError(err)
		}
	}
	sp := &searchPlan{}
	var err error
	if sp.topk, sp.offset, err = searchWindow(params); err != nil {
		return nil, err
	}
	if h, found := kvGet(params, "hints"); found && h != "" && h != "iterative_filter" {
		// Milvus 2.6 knows one search hint; the filter is applied the same
		// way with or without it here (the exact filter runs on every row).
		return nil, errcode.Invalid("Create Plan by expr failed:  => hints: %s not supported", h)
	}
	tz, loc, err := readTimezone(col, params)
	if err != nil {
		return nil, err
	}
	sp.loc = loc
	if sp.round, err = roundDecimal(params); err != nil {
		return nil, err
	}
	if sp.field, err = searchField(col, req); err != nil {
		return nil, err
	}
	if sp.hl, err = planHighlight(col, req, sp.field); err != nil {
		return nil, err
	}
	q, err := parseSearchQueries(col, req, sp.field)
	if err != nil {
		return nil, err
	}
	sp.byPK = q.byPK
	nq := q.nq()
	if req.GetNq() != 0 && int(req.GetNq()) != nq {
		return nil, errcode.Invalid("nq (%d) does not match the number of query vectors (%d)", req.GetNq(), nq)
	}
	if err := checkNQ(nq); err != nil {
		return nil, err
	}
	var bm25Plan *plan.BM25
	sp.metric, bm25Plan, err = searchFieldMetric(col, sp.field, kvValue(params, "metric_type"), env, len(q.vectors) > 0)
	if err != nil {
		return nil, err
	}
	isList := sp.field.GetDataType() == schemapb.DataType_ArrayOfVector
	sreq := &plan.Search{
		FieldID: sp.field.GetFieldID(), Metric: sp.metric, Vectors: q.vectors, Binary: q.binary,
		Sparse: q.sparse, BM25: bm25Plan, EmbLists: q.lists, ElementLevel: isList && len(q.vectors) > 0,
		TopK: sp.topk + sp.offset,
	}
	sp.sreq = sreq
	if sp.iter, err = parseIterator(params, sreq, &sp.topk, env.now); err != nil {
		return nil, err
	}
	if sp.iter != nil {
		sp.offset = 0
		sreq.TopK = sp.topk
	}
	if err := parseGroupBy(col, params, sp.iter != nil, sreq); err != nil {
		return nil, err
	}
	if raw := kvValue(params, "params"); raw != "" {
		m, err := decodeSearchParams(raw)
		if err != nil {
			return nil, err
		}
		if h, found := m["hints"]; found && h != "iterative_filter" {
			// pymilvus may carry the hint inside params rather than beside it.
			return nil, errcode.Invalid("Create Plan by expr failed:  => hints: %v not supported", h)
		}
		// A grouped search is not one top-k walk of the index (Milvus runs
		// it over an iterator; here it is exact), so ef and search_list are
		// not held to its k.
		k := sp.topk + sp.offset
		if sreq.GroupByField != 0 {
			k = 0
		}
		if err := parseIndexSearchParams(m, sp.field, env.indexParams(sp.field.GetFieldID())["index_type"], k, sreq); err != nil {
			return nil, err
		}
	}
	out, err := resolveOutput(col, req.GetOutputFields(), false)
	if err != nil {
		return nil, err
	}
	if out.countAll {
		return nil, errcode.Invalid("count(*) is not an output field of search")
	}
	sp.out, sp.userOut = sp.hl.output(out), out
	sreq.Timezone = tz
	if err := fillRead(col, &sreq.Read, req.GetDsl(), req.GetExprTemplateValues(), req.GetPartitionNames(), sp.out,
		req.GetConsistencyLevel(), req.GetUseDefaultConsistency(), req.GetGuaranteeTimestamp(), env); err != nil {
		return nil, err
	}
	if sreq.IgnoreGrowing, err = ignoreGrowing(params); err != nil {
		return nil, err
	}
	if sp.ranker, err = parseFunctionScore(col, req.GetFunctionScore()); err != nil {
		return nil, err
	}
	if sp.ranker != nil {
		if sp.iter != nil {
			return nil, errcode.Invalid("a function score reranker cannot be combined with a search iterator")
		}
		if id := sp.ranker.input().GetFieldID(); !slices.Contains(sreq.OutputFields, id) {
			sreq.OutputFields = append(slices.Clone(sreq.OutputFields), id)
		}
	}
	return sp, nil
}

// searchWindow reads a search's topk (required) and offset (0 when absent)
// and checks their bounds.
func searchWindow(params []*commonpb.KeyValuePair) (topk, offset int, err error) {
	v, found := kvGet(params, "topk")
	if !found {
		return 0, 0, errcode.Invalid("topk not found in search_params")
	}
	if topk, err = strconv.Atoi(v); err != nil {
		return 0, 0, errcode.Invalid("topk %q is not an integer", v)
	}
	if v, found := kvGet(params, "offset"); found && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, errcode.InvalidParam("offset [%s] is invalid, it should be in range [1, %d], but got %s", v, MaxTopK, v)
		}
		offset = n
	}
	if err := checkTopK(topk, offset); err != nil {
		return 0, 0, err
	}
	return topk, offset, nil
}

// roundDecimal reads round_decimal: an integer in [-1, 6], -1 (no rounding)
// when absent.
func roundDecimal(params []*commonpb.KeyValuePair) (int, error) {
	v, found := kvGet(params, "round_decimal")
	if !found || v == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < -1 || n > 6 {
		return 0, errcode.Invalid("round_decimal %q should be an integer in [-1, 6]", v)
	}
	return n, nil
}

// searchField resolves the anns field of a search and checks it can be
// searched.
func searchField(col *catalog.Collection, req *milvuspb.SearchRequest) (*schemapb.FieldSchema, error) {
	field, err := annsField(col, kvValue(req.GetSearchParams(), "anns_field"))
	if err != nil {
		if ids := req.GetIds(); errors.Is(err, errMultipleAnns) && ids != nil {
			// Milvus words it differently when searching by primary keys.
			err = errcode.Invalid("multiple vector fields exist, please specify anns_field in search_params")
		}
		return nil, err
	}
	t := field.GetDataType()
	if !denseVectorType(t) && t != schemapb.DataType_SparseFloatVector && t != schemapb.DataType_ArrayOfVector {
		return nil, errcode.Invalid("searching %s fields is not supported yet", t)
	}
	return field, nil
}

// searchQueries are the query vectors a search request carries, one kind
// set; byPK instead when the queries are stored vectors to be read.
type searchQueries struct {
	vectors [][]float32
	binary  [][]byte
	sparse  [][]byte
	lists   [][]float32
	byPK    *schemapb.IDs
}

// nq is the number of queries: a search by primary keys has one per key.
func (q searchQueries) nq() int {
	if q.byPK != nil {
		return len(pkValues(q.byPK))
	}
	return len(q.vectors) + len(q.binary) + len(q.sparse) + len(q.lists)
}

// hasIDs reports whether a request searches by primary keys.
func hasIDs(ids *schemapb.IDs) bool {
	return len(ids.GetIntId().GetData()) > 0 || len(ids.GetStrId().GetData()) > 0
}

// parseSearchQueries decodes the query vectors of a search on field: the
// texts of a full-text search, embedding lists, dense, binary or sparse
// vectors, or the primary keys whose vectors to search by.
func parseSearchQueries(col *catalog.Collection, req *milvuspb.SearchRequest, field *schemapb.FieldSchema) (searchQueries, error) {
	var q searchQueries
	var err error
	ids := req.GetIds()
	bm25, isBM25 := bm25Of(col, field)
	switch {
	case isBM25 && hasIDs(ids):
		err = errcode.Invalid("search by primary keys is not supported on the BM25 function output field %q", field.GetName())
	case isBM25:
		var ph *commonpb.PlaceholderValue
		if ph, err = onePlaceholder(req.GetPlaceholderGroup()); err == nil {
			q.sparse, err = bm25Search(col, bm25, ph, kvValue(req.GetSearchParams(), "analyzer_name"))
		}
	case field.GetDataType() == schemapb.DataType_ArrayOfVector && hasIDs(ids):
		err = errcode.New(codeSearchByIDs, "array of vector is not supported for search by IDs")
	case field.GetDataType() == schemapb.DataType_ArrayOfVector:
		q.lists, q.vectors, err = listQueries(req.GetPlaceholderGroup(), field)
	case hasIDs(ids):
		q.byPK = ids
	case field.GetDataType() == schemapb.DataType_SparseFloatVector:
		q.sparse, err = sparseQueries(req)
	default:
		q.vectors, q.binary, err = queryVectors(req.GetPlaceholderGroup(), field)
	}
	return q, err
}

// searchFieldMetric resolves the metric of a search on field, which must
// have an index: BM25 (with
// its scoring parameters) on a BM25 output field, the embedding-list
// metric on a vector array field (element: an element-level search), else
// the requested one checked against the field's index.
func searchFieldMetric(col *catalog.Collection, field *schemapb.FieldSchema, requested string, env readEnv, element bool,
) (string, *plan.BM25, error) {
	params := env.indexParams(field.GetFieldID())
	if params == nil && env.loaded {
		// A collection loads only when its vector fields have indexes, so a
		// field without one was added after the load (Milvus's segcore
		// FieldNotLoaded).
		return "", nil, errcode.New(errcode.Segcore, "field %s is not loaded, please reload the collection", field.GetName())
	}
	if _, isBM25 := bm25Of(col, field); isBM25 {
		return bm25Metric(requested, params)
	}
	if field.GetDataType() == schemapb.DataType_ArrayOfVector {
		m, err := embListMetric(field, requested, params["metric_type"], element)
		return m, nil, err
	}
	m, err := searchMetric(field, requested, params["metric_type"])
	return m, nil, err
}

// parseGroupBy reads group_by_field, group_size and strict_group_size into
// sreq; iterating: the request is a search iterator batch (iterators cannot
// group).
func parseGroupBy(col *catalog.Collection, params []*commonpb.KeyValuePair, iterating bool, sreq *plan.Search) error {
	g := kvValue(params, "group_by_field")
	if g == "" {
		return nil
	}
	if iterating || parseBool(kvValue(params, "iterator")) {
		return errcode.Invalid("Not allowed to do groupBy when doing iteration")
	}
	gf := col.Field(g)
	if gf == nil || gf.GetFieldID() < 100 {
		return errcode.Invalid("group_by_field %q does not exist", g)
	}
	switch gf.GetDataType() {
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_VarChar, schemapb.DataType_Timestamptz:
	default:
		return errcode.Invalid("unsupported data type %s for group by operator", segcoreTypeName(gf.GetDataType()))
	}
	sreq.GroupByField = gf.GetFieldID()
	sreq.GroupSize = 1
	if v := kvValue(params, "group_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errcode.Invalid("group_size %q should be an integer", v)
		}
		if err := checkGroupSize(n); err != nil {
			return err
		}
		sreq.GroupSize = n
	}
	sreq.StrictGroupSize = parseBool(kvValue(params, "strict_group_size"))
	return nil
}
