package proxy

// BM25 functions: a collection's schema may hold functions of type BM25,
// each turning one VarChar input field (enable_analyzer) into one sparse
// output field. The proxy runs them: on insert and upsert it analyzes the
// input text and writes the output rows (token hash → how often the token
// occurs), so the WAL, the segments and every replay hold the same rows the
// client would never send; on search it analyzes the query texts the same
// way (bm25Search). The output field is not returned by "*" and cannot be
// asked for by name, as in Milvus.

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/sparse"
	"github.com/strata-db/strata/internal/plan"
)

// bm25Fn is a BM25 function of a collection with its fields resolved.
type bm25Fn struct {
	fn      *schemapb.FunctionSchema
	in, out *schemapb.FieldSchema
}

// bm25Functions returns the BM25 functions of col.
func bm25Functions(col *catalog.Collection) []bm25Fn {
	var out []bm25Fn
	for _, fn := range col.Schema.GetFunctions() {
		if fn.GetType() != schemapb.FunctionType_BM25 || len(fn.GetInputFieldIds()) != 1 || len(fn.GetOutputFieldIds()) != 1 {
			continue
		}
		b := bm25Fn{fn: fn, in: fieldByID(col, fn.GetInputFieldIds()[0]), out: fieldByID(col, fn.GetOutputFieldIds()[0])}
		if b.in != nil && b.out != nil {
			out = append(out, b)
		}
	}
	return out
}

// bm25Of returns the BM25 function whose output is field f, if any.
func bm25Of(col *catalog.Collection, f *schemapb.FieldSchema) (bm25Fn, bool) {
	for _, b := range bm25Functions(col) {
		if b.out.GetFieldID() == f.GetFieldID() {
			return b, true
		}
	}
	return bm25Fn{}, false
}

func fieldByID(col *catalog.Collection, id int64) *schemapb.FieldSchema {
	for _, f := range col.Schema.GetFields() {
		if f.GetFieldID() == id {
			return f
		}
	}
	return nil
}

// functionOutputs returns the IDs of the fields BM25 functions write.
func functionOutputs(col *catalog.Collection) map[int64]bool {
	out := map[int64]bool{}
	for _, b := range bm25Functions(col) {
		out[b.out.GetFieldID()] = true
	}
	return out
}

// retrievable reports whether a field's stored values can be returned:
// not a BM25 function's output, as in Milvus.
func retrievable(col *catalog.Collection, f *schemapb.FieldSchema) bool {
	_, isBM25 := bm25Of(col, f)
	return !isBM25
}

// functionOutputSent is Milvus's error for a batch that carries a
// function's output field.
func functionOutputSent(f *schemapb.FieldSchema) error {
	return errcode.Invalid("Attempt to insert an unexpected function output field `%s` to collection", f.GetName())
}

// runFunctions computes the output column of every BM25 function of col
// from the batch's input column, replacing any output column r holds.
func runFunctions(col *catalog.Collection, r *rows) error {
	for _, b := range bm25Functions(col) {
		a, err := analyzer.ForField(col.Schema, b.in)
		if err != nil {
			return errcode.Invalid("function %s: %v", b.fn.GetName(), err)
		}
		texts, ok := r.cols[b.in.GetFieldID()].(*column.Strings)
		if !ok {
			return errcode.Invalid("function %s: input field %q is not a VarChar column", b.fn.GetName(), b.in.GetName())
		}
		var langs *column.Strings
		if by := a.ByField(); by != "" {
			lf := col.Field(by)
			if lf == nil {
				return errcode.Invalid("function %s: the analyzer's by_field %q does not exist", b.fn.GetName(), by)
			}
			langs, _ = r.cols[lf.GetFieldID()].(*column.Strings)
		}
		outCol := &column.SparseVectors{Data: make([][]byte, texts.Len())}
		for i, text := range texts.Data {
			if texts.IsNull(i) {
				outCol.Data[i] = []byte{}
				continue
			}
			if !utf8.ValidString(text) {
				return errcode.Invalid("input with analyzer should be utf-8 format, but row: %d not utf-8 format. data: %s", i, text)
			}
			lang := ""
			if langs != nil && !langs.IsNull(i) {
				lang = langs.Data[i]
			}
			row := termFrequencies(a.Analyze(text, lang))
			outCol.Data[i] = row
			outCol.Dim = max(outCol.Dim, sparse.Dim(row))
		}
		r.cols[b.out.GetFieldID()] = outCol
	}
	return nil
}

// termFrequencies is the sparse row of a token list: each token's hash
// (analyzer.Hash) with how often it occurs, ascending by hash.
func termFrequencies(tokens []analyzer.Token) []byte {
	counts := make(map[uint32]float32, len(tokens))
	for _, t := range tokens {
		counts[analyzer.Hash(t.Text)]++
	}
	v := sparse.Vector{Indices: make([]uint32, 0, len(counts))}
	for h := range counts {
		v.Indices = append(v.Indices, h)
	}
	slices.Sort(v.Indices)
	v.Values = make([]float32, len(v.Indices))
	for i, h := range v.Indices {
		v.Values[i] = counts[h]
	}
	return v.Encode()
}

// bm25Search turns the query texts of a full-text search on b's output
// field into term-frequency queries: the placeholder must hold VarChar
// values, analyzed by the input field's analyzer (for a multi-language
// field, the one analyzer_name names, else the default).
func bm25Search(col *catalog.Collection, b bm25Fn, ph *commonpb.PlaceholderValue, analyzerName string) ([][]byte, error) {
	if ph.GetType() != commonpb.PlaceholderType_VarChar {
		return nil, errcode.InvalidParam("please provide varchar/text for BM25 Function based search, got %s", placeholderKind(ph.GetType()))
	}
	if len(ph.GetValues()) == 0 {
		return nil, errcode.Invalid("no query texts were sent")
	}
	a, err := analyzer.ForField(col.Schema, b.in)
	if err != nil {
		return nil, errcode.Invalid("function %s: %v", b.fn.GetName(), err)
	}
	out := make([][]byte, len(ph.GetValues()))
	for i, raw := range ph.GetValues() {
		text := string(raw)
		if !utf8.ValidString(text) {
			return nil, errcode.Invalid("query text %d is not valid utf-8", i)
		}
		out[i] = termFrequencies(a.Analyze(text, analyzerName))
	}
	return out, nil
}

// placeholderKind names a placeholder type as Milvus does in its errors
// (FloatVector, SparseFloatVector, ...).
func placeholderKind(t commonpb.PlaceholderType) string {
	switch t {
	case commonpb.PlaceholderType_FloatVector:
		return "FloatVector"
	case commonpb.PlaceholderType_BinaryVector:
		return "BinaryVector"
	case commonpb.PlaceholderType_Float16Vector:
		return "Float16Vector"
	case commonpb.PlaceholderType_BFloat16Vector:
		return "BFloat16Vector"
	case commonpb.PlaceholderType_SparseFloatVector:
		return "SparseFloatVector"
	case commonpb.PlaceholderType_Int8Vector:
		return "Int8Vector"
	}
	return t.String()
}

// BM25 index parameters and their defaults (Milvus/knowhere).
const (
	defaultBM25K1 = 1.2
	defaultBM25B  = 0.75
)

// bm25Params reads bm25_k1 (in [0, 3]) and bm25_b (in [0, 1]) from index
// parameters, with knowhere's range errors.
func bm25Params(params map[string]string) (*plan.BM25, error) {
	out := &plan.BM25{K1: defaultBM25K1, B: defaultBM25B}
	for _, p := range []struct {
		key    string
		lo, hi float64
		dst    *float64
	}{{"bm25_k1", 0, 3, &out.K1}, {"bm25_b", 0, 1, &out.B}} {
		v, ok := params[p.key]
		if !ok {
			continue
		}
		f, ok := toFloat(strings.TrimSpace(v))
		if !ok {
			return nil, errcode.Invalid("param '%s' (%s) should be a number", p.key, v)
		}
		if f < p.lo || f > p.hi {
			return nil, errcode.Invalid("Out of range in json: param '%s' (%v) should be in range [%f, %f]", p.key, f, p.lo, p.hi)
		}
		*p.dst = f
	}
	return out, nil
}

// bm25Metric resolves the metric of a full-text search on a BM25 output
// field (BM25, the only one) and its scoring parameters, from the
// parameters of the field's index (the defaults when it has none).
func bm25Metric(requested string, indexParams map[string]string) (string, *plan.BM25, error) {
	if mt := strings.ToUpper(requested); mt != "" && mt != plan.MetricBM25 {
		return "", nil, errcode.Invalid("metric type not match: invalid parameter[expected=%s][actual=%s]", plan.MetricBM25, mt)
	}
	b, err := bm25Params(indexParams)
	if err != nil {
		return "", nil, err
	}
	return plan.MetricBM25, b, nil
}
