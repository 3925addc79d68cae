package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
)

// maxSubSearches bounds the sub-searches of one hybrid search, as in Milvus.
const maxSubSearches = 1024

// ranker fuses the hit lists of the sub-searches of a hybrid search, with
// Milvus's rules: RRF scores a hit Σ 1/(k + rank) over the lists it is in
// (rank from 1); Weighted scores it Σ weight × score, each list's scores
// first mapped so that larger is better when norm_score is set (COSINE
// (1+s)/2, IP 0.5+atan(s)/π, distances 1−2·atan(d)/π) or, without
// norm_score, when the lists mix similarity and distance metrics
// (distances only). Fused hits are best first: descending, except a
// Weighted fusion of distance metrics only without norm_score, ascending.
type ranker struct {
	rrf       bool
	k         float64
	weights   []float64
	normScore bool
	limit     int
	offset    int
	round     int
}

// parseRanker reads the rank_params of a HybridSearchRequest: strategy
// (rrf, the default, or weighted), params (JSON: k, or weights and
// norm_score), limit, offset and round_decimal.
func parseRanker(kvs []*commonpb.KeyValuePair, subs int) (*ranker, error) {
	r := &ranker{rrf: true, k: 60, limit: -1, round: -1}
	intParam := func(key string, min, max int) (int, bool, error) {
		v, found := kvGet(kvs, key)
		if !found || v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(strings.Trim(v, `"`))
		if err != nil || n < min || n > max {
			return 0, false, errcode.Invalid("%s %q should be an integer in [%d, %d]", key, v, min, max)
		}
		return n, true, nil
	}
	var err error
	var found bool
	if r.limit, found, err = intParam("limit", 1, math.MaxInt32); err != nil {
		return nil, err
	} else if !found {
		return nil, errcode.Invalid("limit not found in rank_params")
	}
	if r.offset, _, err = intParam("offset", 0, math.MaxInt32); err != nil {
		return nil, err
	}
	if n := r.limit + r.offset; n > MaxTopK {
		return nil, errcode.InvalidParam("invalid max query result window, (offset+limit) should be in range [1, %d], but got %d", MaxTopK, n)
	}
	if r.round, found, err = intParam("round_decimal", -1, 6); err != nil {
		return nil, err
	} else if !found {
		r.round = -1
	}
	strategy := "rrf"
	if v, found := kvGet(kvs, "strategy"); found {
		strategy = strings.ToLower(strings.Trim(v, `"`))
	}
	var params map[string]json.RawMessage
	if v, found := kvGet(kvs, "params"); found && v != "" {
		if err := json.Unmarshal([]byte(v), &params); err != nil {
			return nil, errcode.Invalid("rank params %q are not a JSON object", v)
		}
	}
	switch strategy {
	case "rrf":
		if raw, ok := params["k"]; ok {
			if err := json.Unmarshal(raw, &r.k); err != nil || r.k <= 0 || r.k >= 16384 {
				return nil, errcode.Invalid("The rank params k should be in range (0, 16384), got %s", raw)
			}
		}
	case "weighted":
		r.rrf = false
		raw, ok := params["weights"]
		if !ok {
			return nil, errcode.Invalid("weights not found in rank_params of the weighted ranker")
		}
		if err := json.Unmarshal(raw, &r.weights); err != nil {
			return nil, errcode.Invalid("weights %s should be a list of numbers", raw)
		}
		if len(r.weights) != subs {
			return nil, errcode.Invalid("the length of weights param mismatch with ann search requests: invalid parameter[expected=%d][actual=%d]",
				subs, len(r.weights))
		}
		for _, w := range r.weights {
			if w < 0 || w > 1 {
				return nil, errcode.Invalid("rank param weight should be in range [0, 1], got %v", w)
			}
		}
		if raw, ok := params["norm_score"]; ok {
			if err := json.Unmarshal(raw, &r.normScore); err != nil {
				return nil, errcode.Invalid("norm_score %s should be true or false", raw)
			}
		}
	default:
		return nil, errcode.Invalid("unsupported rank type %s, supported: rrf, weighted", strategy)
	}
	return r, nil
}

// subHits is one sub-search's hits of one query.
type subHits struct {
	pks    []any
	scores []float32
	metric string
}

// fusedHit is a hit after fusion.
type fusedHit struct {
	pk    any
	score float64
	first int // order of first appearance, to break ties deterministically
}

// fuse merges the sub-searches' hits of one query and returns them best first.
func (r *ranker) fuse(lists []subHits) []fusedHit {
	larger, smaller := false, false
	for _, l := range lists {
		if plan.HigherIsBetter(l.metric) {
			larger = true
		} else {
			smaller = true
		}
	}
	mixed := larger && smaller
	byPK := map[any]int{}
	var out []fusedHit
	for i, l := range lists {
		for rank, pk := range l.pks {
			var s float64
			if r.rrf {
				s = 1 / (r.k + float64(rank+1))
			} else {
				s = r.weights[i] * r.normalise(l.metric, float64(l.scores[rank]), mixed)
			}
			if j, ok := byPK[pk]; ok {
				out[j].score += s
				continue
			}
			byPK[pk] = len(out)
			out = append(out, fusedHit{pk: pk, score: s, first: len(out)})
		}
	}
	ascending := !r.rrf && !r.normScore && !larger
	slices.SortStableFunc(out, func(a, b fusedHit) int {
		if c := cmp.Compare(a.score, b.score); c != 0 {
			if ascending {
				return c
			}
			return -c
		}
		return cmp.Compare(a.first, b.first)
	})
	return out
}

// normalise maps one score of a Weighted fusion (see ranker).
func (r *ranker) normalise(metric string, s float64, mixed bool) float64 {
	higher := plan.HigherIsBetter(metric)
	switch {
	case r.normScore && metric == plan.MetricCosine:
		return (1 + s) / 2
	case r.normScore && higher:
		return 0.5 + math.Atan(s)/math.Pi
	case r.normScore || (mixed && !higher):
		return 1 - 2*math.Atan(s)/math.Pi
	}
	return s
}

// HybridSearch runs each sub-search of req (its own vector field, data,
// filter and limit, no offset; the request's partitions and consistency), fuses the
// hits of every query with the request's ranker (RRF or Weighted), and
// fetches the output fields of the fused hits by primary key, as Milvus's
// requery does.
func (p *Proxy) HybridSearch(ctx context.Context, req *milvuspb.HybridSearchRequest) (*milvuspb.SearchResults, error) {
	col, err := p.lookup(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return searchError(err), nil
	}
	subs := req.GetRequests()
	if len(subs) == 0 {
		return searchError(errcode.Invalid("a hybrid search needs at least one sub search request")), nil
	}
	if len(subs) > maxSubSearches {
		return searchError(errcode.InvalidParam("maximum of ann search requests is %d", maxSubSearches)), nil
	}
	decay, err := parseFunctionScore(col, req.GetFunctionScore())
	if err != nil {
		return searchError(err), nil
	}
	if v, _ := kvGet(req.GetRankParams(), "group_by_field"); v != "" {
		return searchError(errcode.Invalid("group_by_field is not supported in hybrid search")), nil
	}
	rk, err := parseRanker(req.GetRankParams(), len(subs))
	if err != nil {
		return searchError(err), nil
	}
	if _, err := readPartitionIDs(col, req.GetPartitionNames()); err != nil {
		return searchError(err), nil
	}
	out, err := resolveOutput(col, req.GetOutputFields(), false)
	if err != nil {
		return searchError(err), nil
	}
	if out.countAll {
		return searchError(errcode.Invalid("count(*) is not an output field of search")), nil
	}
	nq := -1
	perQuery := [][]subHits{}
	for i, sub := range subs {
		s := proto.Clone(sub).(*milvuspb.SearchRequest)
		s.DbName, s.CollectionName = req.GetDbName(), req.GetCollectionName()
		s.PartitionNames = req.GetPartitionNames()
		s.OutputFields = nil
		s.ConsistencyLevel = req.GetConsistencyLevel()
		s.UseDefaultConsistency = req.GetUseDefaultConsistency()
		s.GuaranteeTimestamp = req.GetGuaranteeTimestamp()
		// As in Milvus, a sub-search's offset is ignored (pymilvus sends the
		// hybrid search's offset in every sub-search too): it applies to the
		// fused list only.
		s.SearchParams = slices.DeleteFunc(s.SearchParams, func(kv *commonpb.KeyValuePair) bool { return kv.GetKey() == "offset" })
		res, err := p.search(ctx, col, s)
		if err != nil {
			return searchError(err), nil
		}
		if res.GetStatus().GetCode() != 0 {
			return res, nil
		}
		d := res.GetResults()
		if nq < 0 {
			nq = int(d.GetNumQueries())
			perQuery = make([][]subHits, nq)
		} else if int(d.GetNumQueries()) != nq {
			return searchError(errcode.Invalid("sub search request %d has %d query vectors, the first has %d: every sub search needs the same nq",
				i, d.GetNumQueries(), nq)), nil
		}
		metric := p.subSearchMetric(col, s)
		pks := pkValues(d.GetIds())
		at := 0
		for q := 0; q < nq; q++ {
			n := int(d.GetTopks()[q])
			perQuery[q] = append(perQuery[q], firstPerPK(subHits{pks: pks[at : at+n], scores: d.GetScores()[at : at+n], metric: metric}))
			at += n
		}
	}
	data := &schemapb.SearchResultData{NumQueries: int64(nq), TopK: int64(rk.limit), OutputFields: out.names,
		PrimaryFieldName: col.PKField().GetName()}
	var fused [][]fusedHit
	if decay != nil {
		if fused, err = p.decayFuse(ctx, col, req, decay, perQuery); err != nil {
			return searchError(err), nil
		}
	}
	var order []any
	for q := 0; q < nq; q++ {
		var hits []fusedHit
		if decay != nil {
			hits = fused[q]
		} else {
			hits = rk.fuse(perQuery[q])
		}
		start := min(rk.offset, len(hits))
		end := min(start+rk.limit, len(hits))
		for _, h := range hits[start:end] {
			order = append(order, h.pk)
			data.Scores = append(data.Scores, roundScore(float32(h.score), rk.round))
		}
		data.Topks = append(data.Topks, int64(end-start))
	}
	data.Ids = pkIDs(col, order)
	cols, err := p.requery(ctx, col, req, out, order)
	if err != nil {
		return searchError(err), nil
	}
	fds, err := fieldsData(col, out, cols)
	if err != nil {
		return searchError(err), nil
	}
	if _, loc, err := readTimezone(col, nil); err == nil {
		timestamptzOut(loc, fds...)
	}
	data.FieldsData = fds
	return &milvuspb.SearchResults{Status: ok(), Results: data, CollectionName: col.Name}, nil
}

// subSearchMetric is the metric a validated sub-search ran with: the one it
// asked for, else its field's index metric, else the field type's default.
func (p *Proxy) subSearchMetric(col *catalog.Collection, s *milvuspb.SearchRequest) string {
	requested := kvValue(s.GetSearchParams(), "metric_type")
	f, err := annsField(col, kvValue(s.GetSearchParams(), "anns_field"))
	if err != nil {
		return strings.ToUpper(requested)
	}
	if f.GetDataType() == schemapb.DataType_ArrayOfVector {
		return listSearchMetric(f, requested, p.metricOf(col.ID, f.GetFieldID()))
	}
	m, _ := searchMetric(f, requested, p.metricOf(col.ID, f.GetFieldID())) // validated by the sub-search
	return m
}

// pkValues lists the primary keys of ids as int64 or string values.
func pkValues(ids *schemapb.IDs) []any {
	var out []any
	for _, v := range ids.GetIntId().GetData() {
		out = append(out, v)
	}
	for _, v := range ids.GetStrId().GetData() {
		out = append(out, v)
	}
	return out
}

// pkIDs builds the IDs message of pks for col's primary key type.
func pkIDs(col *catalog.Collection, pks []any) *schemapb.IDs {
	if col.PKField().GetDataType() == schemapb.DataType_VarChar {
		s := make([]string, len(pks))
		for i, pk := range pks {
			s[i], _ = pk.(string)
		}
		return &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: s}}}
	}
	n := make([]int64, len(pks))
	for i, pk := range pks {
		n[i], _ = pk.(int64)
	}
	return &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: n}}}
}

// requery reads the output fields of the rows with the primary keys order
// and returns them aligned with order (a key may repeat across queries).
func (p *Proxy) requery(ctx context.Context, col *catalog.Collection, req *milvuspb.HybridSearchRequest,
	out *outputSpec, order []any,
) (map[int64]column.Column, error) {
	if len(out.ids) == 0 || len(order) == 0 {
		return map[int64]column.Column{}, nil
	}
	pk := col.PKField()
	arr := &schemapb.TemplateArrayValue{}
	if pk.GetDataType() == schemapb.DataType_VarChar {
		s := make([]string, len(order))
		for i, v := range order {
			s[i], _ = v.(string)
		}
		arr.Data = &schemapb.TemplateArrayValue_StringData{StringData: &schemapb.StringArray{Data: s}}
	} else {
		n := make([]int64, len(order))
		for i, v := range order {
			n[i], _ = v.(int64)
		}
		arr.Data = &schemapb.TemplateArrayValue_LongData{LongData: &schemapb.LongArray{Data: n}}
	}
	templates := map[string]*schemapb.TemplateValue{"hybrid_pks": {Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: arr}}}
	spec := *out
	spec.ids = nil
	spec.add(pk.GetFieldID())
	for _, id := range out.ids {
		spec.add(id)
	}
	q := &plan.Query{}
	if err := p.fillRead(col, &q.Read, pk.GetName()+" in {hybrid_pks}", templates, req.GetPartitionNames(), &spec,
		req.GetConsistencyLevel(), req.GetUseDefaultConsistency(), req.GetGuaranteeTimestamp()); err != nil {
		return nil, err
	}
	res, err := p.query.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	keys := res.Fields[pk.GetFieldID()]
	rowOf := map[any]int{}
	switch c := keys.(type) {
	case *column.Ints:
		for i, v := range c.Data {
			rowOf[v] = i
		}
	case *column.Strings:
		for i, v := range c.Data {
			rowOf[v] = i
		}
	default:
		return nil, errcode.Invalid("hybrid search: primary key column of type %T", keys)
	}
	take := make([]int, len(order))
	for i, v := range order {
		r, found := rowOf[v]
		if !found {
			return nil, errcode.Invalid("hybrid search: the row with primary key %v was deleted while searching", v)
		}
		take[i] = r
	}
	cols := map[int64]column.Column{}
	for id, c := range res.Fields {
		cols[id] = c.Take(take)
	}
	return cols, nil
}
