package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// defaultSearchLimit is the limit of a search that names none, as in Milvus REST.
const defaultSearchLimit = 100

// annSearch is one ANN search: the top level of entities/search, or one
// element of `search` in entities/hybrid_search.
//
// The query is `data` (vectors) or `ids` (primary keys whose stored vectors
// are searched with). Search parameters come from `searchParams` (search) or
// `params` (a hybrid sub-search), the same way: `metricType`,
// `ignoreGrowing`, a nested `params` object, and any other key (nprobe, ef,
// radius, range_filter, …) go into the Milvus `params`.
type annSearch struct {
	Data            []json.RawMessage          `json:"data"`
	IDs             json.RawMessage            `json:"ids"`
	AnnsField       string                     `json:"annsField"`
	Filter          string                     `json:"filter"`
	ExprParams      map[string]json.RawMessage `json:"exprParams"`
	Limit           *int                       `json:"limit"`
	Offset          int                        `json:"offset"`
	GroupingField   string                     `json:"groupingField"`
	GroupSize       int                        `json:"groupSize"`
	StrictGroupSize bool                       `json:"strictGroupSize"`
	MetricType      string                     `json:"metricType"`
	IgnoreGrowing   bool                       `json:"ignoreGrowing"`
	SearchParams    map[string]any             `json:"searchParams"`
	Params          map[string]any             `json:"params"`
}

// searchReq is the body of entities/search.
type searchReq struct {
	collectionReq
	annSearch
	OutputFields     []string `json:"outputFields"`
	PartitionNames   []string `json:"partitionNames"`
	ConsistencyLevel string   `json:"consistencyLevel"`
}

// hybridReq is the body of entities/hybrid_search (and advanced_search).
type hybridReq struct {
	collectionReq
	Search           []annSearch `json:"search"`
	Rerank           *rerank     `json:"rerank"`
	Limit            *int        `json:"limit"`
	Offset           int         `json:"offset"`
	GroupingField    string      `json:"groupingField"`
	OutputFields     []string    `json:"outputFields"`
	PartitionNames   []string    `json:"partitionNames"`
	ConsistencyLevel string      `json:"consistencyLevel"`
}

// rerank is the ranker of a hybrid search: strategy "rrf" with params {k}
// or "weighted" with params {weights, norm_score}.
type rerank struct {
	Strategy string         `json:"strategy"`
	Params   map[string]any `json:"params"`
}

// subRequest builds the gRPC SearchRequest of one ANN search; where names it
// in errors ("" for entities/search, "search[i]." for a sub-search).
func subRequest(schema *schemapb.CollectionSchema, s *annSearch, where string, defaultLimit int) (*milvuspb.SearchRequest, error) {
	hasData, hasIDs := len(s.Data) > 0, hasID(s.IDs)
	switch {
	case hasData && hasIDs:
		return nil, errorf(errcode.IllegalArgument, "%sdata and %sids cannot both be set", where, where)
	case !hasData && !hasIDs:
		return nil, missing(where + "data")
	}
	field, err := vectorField(schema, s.AnnsField)
	if err != nil {
		return nil, err
	}
	req := &milvuspb.SearchRequest{Dsl: s.Filter, DslType: commonpb.DslType_BoolExprV1}
	if hasIDs {
		_, ints, strs, err := primaryKeys(schema, where+"ids", s.IDs)
		if err != nil {
			return nil, err
		}
		ids := &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: ints}}}
		if strs != nil {
			ids.IdField = &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: strs}}
		}
		req.SearchInput = &milvuspb.SearchRequest_Ids{Ids: ids}
		req.Nq = int64(len(ints) + len(strs))
	} else {
		pg, err := placeholders(field, s.Data)
		if err != nil {
			return nil, err
		}
		req.SearchInput = &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: pg}
		req.Nq = int64(len(s.Data))
	}
	limit := defaultLimit
	if s.Limit != nil {
		limit = *s.Limit
	}
	if limit <= 0 {
		return nil, errorf(errcode.IllegalArgument, "%slimit should be a positive integer, got %d", where, limit)
	}
	if s.Offset < 0 {
		return nil, errorf(errcode.IllegalArgument, "%soffset should not be negative, got %d", where, s.Offset)
	}
	req.SearchParams = []*commonpb.KeyValuePair{
		{Key: "topk", Value: strconv.Itoa(limit)},
		{Key: "anns_field", Value: field.GetName()},
		{Key: "round_decimal", Value: "-1"},
	}
	kv := func(k, v string) {
		req.SearchParams = append(req.SearchParams, &commonpb.KeyValuePair{Key: k, Value: v})
	}
	if s.Offset > 0 {
		kv("offset", strconv.Itoa(s.Offset))
	}
	metric, ignoreGrowing := s.MetricType, s.IgnoreGrowing
	inner := map[string]any{}
	for _, m := range []map[string]any{s.SearchParams, s.Params} {
		for k, v := range m {
			switch k {
			case "metricType", "metric_type":
				metric = paramString(v)
			case "params":
				sub, ok := v.(map[string]any)
				if str, isStr := v.(string); isStr { // a JSON object in a string, as the gRPC `params`
					ok = json.Unmarshal([]byte(str), &sub) == nil
				}
				if !ok {
					return nil, errorf(errcode.IncorrectParameterFormat, "%ssearch params: params should be an object, got %s", where, paramString(v))
				}
				for pk, pv := range sub {
					inner[pk] = pv
				}
			case "ignoreGrowing", "ignore_growing":
				b, err := strconv.ParseBool(paramString(v))
				if err != nil {
					return nil, errorf(errcode.IncorrectParameterFormat, "%signoreGrowing should be true or false, got %s", where, paramString(v))
				}
				ignoreGrowing = ignoreGrowing || b
			default:
				inner[k] = v
			}
		}
	}
	if metric != "" {
		kv("metric_type", metric)
	}
	if ignoreGrowing {
		kv("ignore_growing", "true")
	}
	b, err := json.Marshal(inner)
	if err != nil {
		return nil, errorf(errcode.IncorrectParameterFormat, "%ssearch params: %v", where, err)
	}
	kv("params", string(b))
	if s.GroupingField != "" {
		kv("group_by_field", s.GroupingField)
		if s.GroupSize > 0 {
			kv("group_size", strconv.Itoa(s.GroupSize))
		}
		if s.StrictGroupSize {
			kv("strict_group_size", "true")
		}
	}
	if req.ExprTemplateValues, err = templates(s.ExprParams); err != nil {
		return nil, err
	}
	return req, nil
}

func (h *Handler) search(ctx context.Context, r *request) (any, error) {
	var req searchReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	if len(req.Data) == 0 && !hasID(req.IDs) {
		return nil, missing("data")
	}
	level, useDefault, err := consistency(req.ConsistencyLevel)
	if err != nil {
		return nil, err
	}
	coll, err := h.describe(ctx, r.db, name)
	if err != nil {
		return nil, err
	}
	s, err := subRequest(coll.GetSchema(), &req.annSearch, "", defaultSearchLimit)
	if err != nil {
		return nil, err
	}
	s.DbName, s.CollectionName, s.PartitionNames, s.OutputFields = r.db, name, req.PartitionNames, req.OutputFields
	s.ConsistencyLevel, s.UseDefaultConsistency = level, useDefault
	resp, err := h.svc.Search(ctx, s)
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return searchRows(resp.GetResults(), r.allowInt64)
}

// hybridSearch runs several ANN searches and fuses their hits with the
// request's ranker (RRF by default), through the gRPC HybridSearch.
func (h *Handler) hybridSearch(ctx context.Context, r *request) (any, error) {
	var req hybridReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	if len(req.Search) == 0 {
		return nil, missing("search")
	}
	level, useDefault, err := consistency(req.ConsistencyLevel)
	if err != nil {
		return nil, err
	}
	limit := defaultSearchLimit
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit <= 0 {
		return nil, errorf(errcode.IllegalArgument, "limit should be a positive integer, got %d", limit)
	}
	if req.Offset < 0 {
		return nil, errorf(errcode.IllegalArgument, "offset should not be negative, got %d", req.Offset)
	}
	rank, err := rankParams(req.Rerank)
	if err != nil {
		return nil, err
	}
	rank = append(rank,
		&commonpb.KeyValuePair{Key: "limit", Value: strconv.Itoa(limit)},
		&commonpb.KeyValuePair{Key: "offset", Value: strconv.Itoa(req.Offset)},
		&commonpb.KeyValuePair{Key: "round_decimal", Value: "-1"})
	if req.GroupingField != "" {
		rank = append(rank, &commonpb.KeyValuePair{Key: "group_by_field", Value: req.GroupingField})
	}
	coll, err := h.describe(ctx, r.db, name)
	if err != nil {
		return nil, err
	}
	hreq := &milvuspb.HybridSearchRequest{
		DbName: r.db, CollectionName: name, PartitionNames: req.PartitionNames,
		OutputFields: req.OutputFields, RankParams: rank, ConsistencyLevel: level, UseDefaultConsistency: useDefault,
	}
	for i := range req.Search {
		s, err := subRequest(coll.GetSchema(), &req.Search[i], fmt.Sprintf("search[%d].", i), limit)
		if err != nil {
			return nil, err
		}
		hreq.Requests = append(hreq.Requests, s)
	}
	resp, err := h.svc.HybridSearch(ctx, hreq)
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return searchRows(resp.GetResults(), r.allowInt64)
}

// rankParams turns rerank into the rank_params strategy and params (RRF
// with k = 60 when rerank is absent, as in Milvus).
func rankParams(rr *rerank) ([]*commonpb.KeyValuePair, error) {
	if rr == nil {
		return []*commonpb.KeyValuePair{{Key: "strategy", Value: "rrf"}, {Key: "params", Value: `{"k":60}`}}, nil
	}
	strategy := strings.ToLower(rr.Strategy)
	switch strategy {
	case "":
		strategy = "rrf"
	case "rrf", "weighted":
	default:
		return nil, errorf(errcode.IllegalArgument, "rerank.strategy %q is not supported, supported: rrf, weighted", rr.Strategy)
	}
	params := rr.Params
	if params == nil {
		params = map[string]any{}
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, errorf(errcode.IncorrectParameterFormat, "rerank.params: %v", err)
	}
	return []*commonpb.KeyValuePair{{Key: "strategy", Value: strategy}, {Key: "params", Value: string(b)}}, nil
}
