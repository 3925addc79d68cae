package proxy

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
)

// decayRanker is a search's function-score decay reranker (Milvus 2.6's
// "decay" rerank function): each hit's score, normalized so that higher is
// better, is multiplied by a decay of the distance between a numeric field's
// value and origin.
//
// With d = max(0, |x − origin| − offset):
//
//	gauss:  exp(−d² / (2σ²)),  σ² = −scale² / (2 ln decay)
//	exp:    exp(λ d),          λ = ln decay / scale
//	linear: max(0, (s − d) / s), s = scale / (1 − decay)
//
// so a hit scale past the no-decay zone keeps the fraction decay of its
// score. L2 and JACCARD distances are normalized as 1 − 2·atan(distance)/π;
// other metrics' scores are used as they are.
type decayRanker struct {
	field                        *schemapb.FieldSchema
	fn                           string
	origin, scale, offset, decay float64
}

// functionRanker is a search's function-score reranker: it gives each hit a
// new score from the hit's score and its value of one field.
type functionRanker interface {
	// input is the field whose values the ranker reads.
	input() *schemapb.FieldSchema
	// rescore returns the new scores of query q's hits, given their
	// normalized scores (higher is better) and their values of the input
	// field (rows of values, in hit order).
	rescore(ctx context.Context, q int, scores []float64, values column.Column, rows []int) ([]float64, error)
	// check validates the ranker against a search of nq queries.
	check(nq int) error
}

// rerankParams returns a rerank function's params under lower-case keys,
// with the function score's own params filling in the keys it lacks.
func rerankParams(f *schemapb.FunctionSchema, fs *schemapb.FunctionScore) map[string]string {
	params := map[string]string{}
	for _, kv := range f.GetParams() {
		params[strings.ToLower(kv.GetKey())] = kv.GetValue()
	}
	for _, kv := range fs.GetParams() {
		if _, set := params[strings.ToLower(kv.GetKey())]; !set {
			params[strings.ToLower(kv.GetKey())] = kv.GetValue()
		}
	}
	return params
}

// parseFunctionScore reads a SearchRequest's function_score: a decay or a
// model reranker. It returns nil when the request has none.
func parseFunctionScore(col *catalog.Collection, fs *schemapb.FunctionScore) (functionRanker, error) {
	fns := fs.GetFunctions()
	if len(fns) == 0 {
		return nil, nil
	}
	if len(fns) > 1 {
		return nil, errcode.Invalid("currently only supports one rerank function, but got %d", len(fns))
	}
	f := fns[0]
	if f.GetType() != schemapb.FunctionType_Rerank {
		return nil, errcode.Invalid("the search ranker must be a rerank function, got a %s function", f.GetType())
	}
	params := rerankParams(f, fs)
	switch r := params["reranker"]; r {
	case "decay":
	case "model":
		return parseModelRanker(col, f, params)
	default:
		return nil, errcode.Invalid("unsupported rerank function: [%s]", r)
	}
	names := f.GetInputFieldNames()
	if len(names) != 1 {
		return nil, errcode.Invalid("decay function only supports single input, but gets [%v] input", names)
	}
	field := col.Field(names[0])
	if field == nil || field.GetIsDynamic() {
		return nil, errcode.Invalid("function input field not found: %s", names[0])
	}
	switch field.GetDataType() {
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64,
		schemapb.DataType_Float, schemapb.DataType_Double:
	default:
		return nil, errcode.Invalid("decay rerank: unsupported input field type:%s, only support numeric field", field.GetDataType())
	}
	if field.GetNullable() {
		return nil, errcode.Invalid("function input field cannot be nullable: field %s", field.GetName())
	}
	d := &decayRanker{field: field, fn: params["function"], decay: 0.5}
	switch d.fn {
	case "gauss", "exp", "linear":
	default:
		return nil, errcode.Invalid("invalid decay function: decay, only support [gauss,linear,exp] (got %q)", d.fn)
	}
	num := func(key string, dst *float64, required bool) (string, error) {
		v, found := params[key]
		if !found {
			if required {
				return "", errcode.Invalid("decay function lost param: %s", key)
			}
			return "", nil
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return "", errcode.Invalid("param %s:%s is not a number", key, v)
		}
		*dst = n
		return v, nil
	}
	if _, err := num("origin", &d.origin, true); err != nil {
		return nil, err
	}
	raw, err := num("scale", &d.scale, true)
	if err != nil {
		return nil, err
	}
	if d.scale <= 0 {
		return nil, errcode.Invalid("decay function param: scale must > 0, but got %s", raw)
	}
	if raw, err = num("offset", &d.offset, false); err != nil {
		return nil, err
	}
	if d.offset < 0 {
		return nil, errcode.Invalid("decay function param: offset must >= 0, but got %s", raw)
	}
	if raw, err = num("decay", &d.decay, false); err != nil {
		return nil, err
	}
	if d.decay <= 0 || d.decay >= 1 {
		return nil, errcode.Invalid("decay function param: decay must 0 < decay < 1, but got %s", raw)
	}
	return d, nil
}

// factor is the decay of value x.
func (d *decayRanker) factor(x float64) float64 {
	dist := math.Max(0, math.Abs(x-d.origin)-d.offset)
	switch d.fn {
	case "gauss":
		sigma2 := -d.scale * d.scale / (2 * math.Log(d.decay))
		return math.Exp(-dist * dist / (2 * sigma2))
	case "exp":
		return math.Exp(math.Log(d.decay) / d.scale * dist)
	default:
		s := d.scale / (1 - d.decay)
		return math.Max(0, (s-dist)/s)
	}
}

// normalize turns a hit's raw score into a similarity where higher is better.
func normalize(metric string, score float32) float64 {
	switch metric {
	case plan.MetricL2, plan.MetricJaccard:
		return 1 - 2*math.Atan(float64(score))/math.Pi
	}
	return float64(score)
}

func (d *decayRanker) input() *schemapb.FieldSchema { return d.field }

func (d *decayRanker) check(int) error { return nil }

func (d *decayRanker) rescore(_ context.Context, _ int, scores []float64, values column.Column, rows []int) ([]float64, error) {
	out := make([]float64, len(scores))
	for i, row := range rows {
		var x float64
		switch c := values.(type) {
		case *column.Ints:
			x = float64(c.Data[row])
		case *column.Floats:
			x = c.Data[row]
		default:
			return nil, fmt.Errorf("proxy: decay rerank: field %s has no numeric column", d.field.GetName())
		}
		out[i] = scores[i] * d.factor(x)
	}
	return out, nil
}

// rerankResult rescores every query's hits of res in place with r, best
// first, and reorders the output columns to match. The input field's column
// must be in res.Fields.
func rerankResult(ctx context.Context, r functionRanker, res *plan.SearchResult, metric string) error {
	if err := r.check(len(res.Hits)); err != nil {
		return err
	}
	c, found := res.Fields[r.input().GetFieldID()]
	if !found {
		return fmt.Errorf("proxy: rerank: field %s missing from the search result", r.input().GetName())
	}
	perm := make([]int, 0, c.Len())
	base := 0
	for q, hits := range res.Hits {
		norm := make([]float64, len(hits))
		rows := make([]int, len(hits))
		for i, h := range hits {
			norm[i], rows[i] = normalize(metric, h.Score), base+i
		}
		scores, err := r.rescore(ctx, q, norm, c, rows)
		if err != nil {
			return err
		}
		s := make([]scored, len(hits))
		for i, h := range hits {
			h.Score = float32(scores[i])
			s[i] = scored{h, base + i}
		}
		s = orderRescored(s, res.GroupValues)
		for i := range s {
			hits[i] = s[i].hit
			perm = append(perm, s[i].row)
		}
		res.Hits[q] = hits
		base += len(hits)
	}
	for id, col := range res.Fields {
		res.Fields[id] = col.Take(perm)
	}
	if res.GroupValues != nil {
		res.GroupValues = res.GroupValues.Take(perm)
	}
	return nil
}

// scored is a rescored hit and its row in the result's columns.
type scored struct {
	hit plan.Hit
	row int
}

// orderRescored sorts one query's rescored hits best first. A grouping
// search's hits stay together by group value: groups are ordered by their
// best hit, hits within a group best first.
func orderRescored(s []scored, groups column.Column) []scored {
	better := func(a, b scored) int { return cmp.Compare(b.hit.Score, a.hit.Score) }
	if groups == nil {
		slices.SortStableFunc(s, better)
		return s
	}
	var order []any
	byGroup := map[any][]scored{}
	for _, x := range s {
		k := column.KeyAt(groups, x.row)
		if _, seen := byGroup[k]; !seen {
			order = append(order, k)
		}
		byGroup[k] = append(byGroup[k], x)
	}
	for _, k := range order {
		slices.SortStableFunc(byGroup[k], better)
	}
	slices.SortStableFunc(order, func(a, b any) int { return better(byGroup[a][0], byGroup[b][0]) })
	out := s[:0:0]
	for _, k := range order {
		out = append(out, byGroup[k]...)
	}
	return out
}

// functionFuse fuses a hybrid search's sub-search hits with a function-score
// reranker, as Milvus does: a key's score is its best normalized score over
// the sub-searches, rescored by r with the key's value of r's input field;
// every query's keys come back best first.
func (p *Proxy) functionFuse(ctx context.Context, col *catalog.Collection, req *milvuspb.HybridSearchRequest,
	r functionRanker, perQuery [][]subHits,
) ([][]fusedHit, error) {
	if err := r.check(len(perQuery)); err != nil {
		return nil, err
	}
	best := make([]map[any]float64, len(perQuery))
	var keys []any
	at := map[any]int{}
	firsts := make([][]any, len(perQuery))
	for q, lists := range perQuery {
		best[q] = map[any]float64{}
		for _, l := range lists {
			for i, pk := range l.pks {
				s := normalize(l.metric, l.scores[i])
				if old, ok := best[q][pk]; !ok || s > old {
					if !ok {
						firsts[q] = append(firsts[q], pk)
					}
					best[q][pk] = s
				}
				if _, seen := at[pk]; !seen {
					at[pk] = len(keys)
					keys = append(keys, pk)
				}
			}
		}
	}
	spec := &outputSpec{}
	spec.add(r.input().GetFieldID())
	cols, err := p.requery(ctx, col, req, spec, keys)
	if err != nil {
		return nil, err
	}
	c := cols[r.input().GetFieldID()]
	out := make([][]fusedHit, len(perQuery))
	for q := range perQuery {
		norm := make([]float64, len(firsts[q]))
		rows := make([]int, len(firsts[q]))
		for i, pk := range firsts[q] {
			norm[i], rows[i] = best[q][pk], at[pk]
		}
		scores, err := r.rescore(ctx, q, norm, c, rows)
		if err != nil {
			return nil, err
		}
		for i, pk := range firsts[q] {
			out[q] = append(out[q], fusedHit{pk: pk, score: scores[i], first: i})
		}
		slices.SortStableFunc(out[q], func(a, b fusedHit) int { return cmp.Compare(b.score, a.score) })
	}
	return out, nil
}
