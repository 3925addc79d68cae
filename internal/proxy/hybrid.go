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
// (1+s)/2, IP 0.5+atan(s)/π, BM25 2·atan(s)/π, distances 1−2·atan(d)/π) or, without
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

// fusionFunction reads an RRF or Weighted fusion given as a function-score
// reranker (pymilvus Function(type=RERANK, params={"reranker": "rrf", "k": …}
// or {"reranker": "weighted", "weights": […], "norm_score": …}), which
// Milvus 2.6 takes in place of a ranker: it returns the rank params with
// that strategy and no function score left. Any other function score is
// returned as it is.
func fusionFunction(rank []*commonpb.KeyValuePair, fs *schemapb.FunctionScore) ([]*commonpb.KeyValuePair, *schemapb.FunctionScore, error) {
	if len(fs.GetFunctions()) != 1 || fs.GetFunctions()[0].GetType() != schemapb.FunctionType_Rerank {
		return rank, fs, nil
	}
	params := rerankParams(fs.GetFunctions()[0], fs)
	strategy := strings.ToLower(params["reranker"])
	if strategy != "rrf" && strategy != "weighted" {
		return rank, fs, nil
	}
	p := map[string]any{}
	if v, ok := params["k"]; ok {
		k, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, nil, errcode.Invalid("The rank params k should be in range (0, 16384), got %s", v)
		}
		p["k"] = k
	}
	if v, ok := params["weights"]; ok {
		var w []float64
		if err := json.Unmarshal([]byte(v), &w); err != nil {
			return nil, nil, errcode.Invalid("weights %s should be a list of numbers", v)
		}
		p["weights"] = w
	}
	if v, ok := params["norm_score"]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, nil, errcode.Invalid("norm_score %s should be true or false", v)
		}
		p["norm_score"] = b
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	out := slices.DeleteFunc(slices.Clone(rank), func(kv *commonpb.KeyValuePair) bool {
		return kv.GetKey() == "strategy" || kv.GetKey() == "params"
	})
	out = append(out, &commonpb.KeyValuePair{Key: "strategy", Value: strategy}, &commonpb.KeyValuePair{Key: "params", Value: string(raw)})
	return out, nil, nil
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
	case r.normScore && metric == plan.MetricBM25:
		return 2 * math.Atan(s) / math.Pi // BM25 scores are >= 0: Milvus maps them onto [0, 1)
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
	vectors := 0
	for _, s := range subs {
		vectors += int(s.GetNq())
	}
	if err := p.admitSearch(col, vectors); err != nil {
		return searchError(err), nil
	}
	if len(subs) == 0 {
		return searchError(errcode.Invalid("a hybrid search needs at least one sub search request")), nil
	}
	if len(subs) > maxSubSearches {
		return searchError(errcode.InvalidParam("maximum of ann search requests is %d", maxSubSearches)), nil
	}
	rankParams, fs, err := fusionFunction(req.GetRankParams(), req.GetFunctionScore())
	if err != nil {
		return searchError(err), nil
	}
	decay, err := parseFunctionScore(col, fs)
	if err != nil {
		return searchError(err), nil
	}
	rk, err := parseRanker(rankParams, len(subs))
	if err != nil {
		return searchError(err), nil
	}
	grp, err := parseHybridGroup(col, rankParams)
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
		// A sub-search without a limit (pymilvus sends "None") takes the
		// hybrid search's.
		for _, kv := range s.SearchParams {
			if kv.GetKey() == "topk" && (kv.GetValue() == "None" || kv.GetValue() == "") {
				kv.Value = strconv.Itoa(rk.limit)
			}
		}
		if grp != nil {
			// Each sub-search groups too, so the candidates span groups.
			s.SearchParams = slices.DeleteFunc(s.SearchParams, func(kv *commonpb.KeyValuePair) bool {
				return kv.GetKey() == "group_by_field" || kv.GetKey() == "group_size" || kv.GetKey() == "strict_group_size"
			})
			s.SearchParams = append(s.SearchParams, &commonpb.KeyValuePair{Key: "group_by_field", Value: grp.field.GetName()},
				&commonpb.KeyValuePair{Key: "group_size", Value: strconv.Itoa(grp.size)})
		}
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
		metric, err := p.subSearchMetric(ctx, col, s)
		if err != nil {
			return searchError(err), nil
		}
		pks := pkValues(d.GetIds())
		at := 0
		for q := 0; q < nq; q++ {
			n := int(d.GetTopks()[q])
			perQuery[q] = append(perQuery[q], firstPerPK(subHits{pks: pks[at : at+n], scores: d.GetScores()[at : at+n], metric: metric}))
			at += n
		}
	}
	data := &schemapb.SearchResultData{
		NumQueries: int64(nq), TopK: int64(rk.limit), OutputFields: out.names,
		PrimaryFieldName: col.PKField().GetName(),
	}
	var fused [][]fusedHit
	if decay != nil {
		if fused, err = p.functionFuse(ctx, col, req, decay, perQuery); err != nil {
			return searchError(err), nil
		}
	}
	all := make([][]fusedHit, nq)
	for q := 0; q < nq; q++ {
		if decay != nil {
			all[q] = fused[q]
		} else {
			all[q] = rk.fuse(perQuery[q])
		}
	}
	var order []any
	var groupOrder []int // rows of the group column, in result order
	var groupCol column.Column
	if grp != nil {
		if groupCol, err = p.groupValues(ctx, col, req, grp, all); err != nil {
			return searchError(err), nil
		}
	}
	for q := 0; q < nq; q++ {
		hits := all[q]
		if grp != nil {
			var rows []int
			hits, rows = grp.pick(hits, groupCol, rk.offset, rk.limit)
			groupOrder = append(groupOrder, rows...)
		} else {
			start := min(rk.offset, len(hits))
			end := min(start+rk.limit, len(hits))
			hits = hits[start:end]
		}
		for _, h := range hits {
			order = append(order, h.pk)
			data.Scores = append(data.Scores, roundScore(float32(h.score), rk.round))
		}
		data.Topks = append(data.Topks, int64(len(hits)))
	}
	if grp != nil {
		data.GroupByFieldValue = column.ToFieldData(grp.field.GetName(), grp.field.GetFieldID(), groupCol.Take(groupOrder))
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

// hybridGroup is the group-by of a hybrid search (rank params
// group_by_field, group_size, strict_group_size, rank_group_scorer): the
// fused hits are grouped by the field's value, limit groups of up to size
// hits each, groups ordered by their score as in Milvus: their best hit
// ("max", the default), the mean of their hits ("avg") or the sum ("sum").
type hybridGroup struct {
	field  *schemapb.FieldSchema
	size   int
	strict bool
	scorer string // max, avg or sum
	// at maps a candidate key to its row of the group column.
	at map[any]int
}

// parseHybridGroup reads the group-by of a hybrid search's rank params
// (nil when it has none), with the checks of a search's group-by.
func parseHybridGroup(col *catalog.Collection, kvs []*commonpb.KeyValuePair) (*hybridGroup, error) {
	g, _ := kvGet(kvs, "group_by_field")
	if g = strings.Trim(g, `"`); g == "" {
		return nil, nil
	}
	f := col.Field(g)
	if f == nil || f.GetFieldID() < 100 {
		return nil, errcode.Invalid("group_by_field %q does not exist", g)
	}
	switch f.GetDataType() {
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_VarChar, schemapb.DataType_Timestamptz:
	default:
		return nil, errcode.Invalid("unsupported data type %s for group by operator", segcoreTypeName(f.GetDataType()))
	}
	h := &hybridGroup{field: f, size: 1}
	if v, _ := kvGet(kvs, "group_size"); strings.Trim(v, `"`) != "" {
		n, err := strconv.Atoi(strings.Trim(v, `"`))
		if err != nil {
			return nil, errcode.Invalid("group_size %q should be an integer", v)
		}
		if err := checkGroupSize(n); err != nil {
			return nil, err
		}
		h.size = n
	}
	v, _ := kvGet(kvs, "strict_group_size")
	h.strict = parseBool(strings.Trim(v, `"`))
	v, _ = kvGet(kvs, "rank_group_scorer")
	switch h.scorer = strings.ToLower(strings.Trim(v, `"`)); h.scorer {
	case "":
		h.scorer = "max"
	case "max", "avg", "sum":
	default:
		return nil, errcode.Invalid("unsupported rank_group_scorer %q: use max, avg or sum", v)
	}
	return h, nil
}

// groupValues reads the group-by value of every fused candidate.
func (p *Proxy) groupValues(ctx context.Context, col *catalog.Collection, req *milvuspb.HybridSearchRequest,
	g *hybridGroup, all [][]fusedHit,
) (column.Column, error) {
	g.at = map[any]int{}
	var keys []any
	for _, hits := range all {
		for _, h := range hits {
			if _, seen := g.at[h.pk]; !seen {
				g.at[h.pk] = len(keys)
				keys = append(keys, h.pk)
			}
		}
	}
	spec := &outputSpec{}
	spec.add(g.field.GetFieldID())
	cols, err := p.requery(ctx, col, req, spec, keys)
	if err != nil {
		return nil, err
	}
	c, ok := cols[g.field.GetFieldID()]
	if !ok || c.Len() != len(keys) {
		if len(keys) == 0 {
			return column.New(g.field)
		}
		return nil, errcode.New(errcode.Unexpected, "the group-by values of the hybrid search's hits could not be read")
	}
	return c, nil
}

// pick groups one query's fused hits (best first): groups in order of their
// score (rank_group_scorer), up to size hits each, strict groups only when asked; it skips
// offset groups, keeps limit, and returns the hits and their rows of the
// group column.
func (g *hybridGroup) pick(hits []fusedHit, values column.Column, offset, limit int) ([]fusedHit, []int) {
	type group struct {
		hits  []fusedHit
		rows  []int
		score float64 // by rank_group_scorer avg or sum
	}
	var groups []*group
	byKey := map[any]*group{}
	for _, h := range hits {
		row := g.at[h.pk]
		k := column.GroupKey(values, row)
		gr, ok := byKey[k]
		if !ok {
			gr = &group{}
			byKey[k] = gr
			groups = append(groups, gr)
		}
		if len(gr.hits) < g.size {
			gr.hits = append(gr.hits, h)
			gr.rows = append(gr.rows, row)
		}
	}
	if g.strict {
		groups = slices.DeleteFunc(groups, func(gr *group) bool { return len(gr.hits) < g.size })
	}
	if g.scorer != "max" && len(hits) > 1 {
		// The hits are best first; a group's score orders the groups the
		// same way (a tie keeps the order of their best hits).
		ascending := hits[0].score < hits[len(hits)-1].score
		for _, gr := range groups {
			for _, h := range gr.hits {
				gr.score += h.score
			}
			if g.scorer == "avg" {
				gr.score /= float64(len(gr.hits))
			}
		}
		slices.SortStableFunc(groups, func(a, b *group) int {
			c := cmp.Compare(a.score, b.score)
			if ascending {
				return c
			}
			return -c
		})
	}
	start := min(offset, len(groups))
	end := min(start+limit, len(groups))
	var out []fusedHit
	var rows []int
	for _, gr := range groups[start:end] {
		out = append(out, gr.hits...)
		rows = append(rows, gr.rows...)
	}
	return out, rows
}

// subSearchMetric is the metric a validated sub-search ran with: the one it
// asked for, else its field's index metric, else the field type's default.
func (p *Proxy) subSearchMetric(ctx context.Context, col *catalog.Collection, s *milvuspb.SearchRequest) (string, error) {
	requested := kvValue(s.GetSearchParams(), "metric_type")
	f, err := annsField(col, kvValue(s.GetSearchParams(), "anns_field"))
	if err != nil {
		return strings.ToUpper(requested), nil // validated by the sub-search
	}
	if _, ok := bm25Of(col, f); ok {
		return plan.MetricBM25, nil // a full-text sub-search: validated as such by the sub-search
	}
	indexed, err := p.metricOf(ctx, col.ID, f.GetFieldID())
	if err != nil {
		return "", err
	}
	if f.GetDataType() == schemapb.DataType_ArrayOfVector {
		return listSearchMetric(f, requested, indexed), nil
	}
	m, _ := searchMetric(f, requested, indexed) // validated by the sub-search
	return m, nil
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
	if err := fillRead(col, &q.Read, pk.GetName()+" in {hybrid_pks}", templates, req.GetPartitionNames(), &spec,
		req.GetConsistencyLevel(), req.GetUseDefaultConsistency(), req.GetGuaranteeTimestamp(), p.readEnv()); err != nil {
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
