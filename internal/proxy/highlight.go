package proxy

import (
	"slices"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/highlight"
)

// searchHighlight is the LexicalHighlighter of one search request: which
// text fields to highlight, with which terms. A nil *searchHighlight is a
// search without a highlighter.
type searchHighlight struct {
	cfg   *highlight.Config
	tasks []*highlightTask
	extra []int64 // fields fetched for highlighting only, not output
}

// highlightTask highlights one text field of the hits.
type highlightTask struct {
	field    *schemapb.FieldSchema
	analyzer *analyzer.Field
	lang     int64             // field choosing a row's analyzer, 0 for a single analyzer
	search   []highlight.Terms // the analyzed search text of each query; nil without one
	query    highlight.Terms   // the analyzed highlight query texts
}

// planHighlight reads the request's highlighter, as Milvus does once the
// search plan is made and before the query data are read: the BM25 search
// text needs metric BM25 and a BM25 output field as anns field, and each
// highlight query an analyzed VarChar field.
func planHighlight(col *catalog.Collection, req *milvuspb.SearchRequest, anns *schemapb.FieldSchema) (*searchHighlight, error) {
	hl := req.GetHighlighter()
	if hl == nil {
		return nil, nil
	}
	if hl.GetType() != commonpb.HighlightType_Lexical {
		return nil, errcode.InvalidParam("unsupported highlight type: %v", hl.GetType())
	}
	cfg, err := highlight.Parse(hl.GetParams())
	if err != nil {
		return nil, err
	}
	h := &searchHighlight{cfg: cfg}
	if cfg.SearchText {
		params := req.GetSearchParams()
		if !strings.EqualFold(kvValue(params, "metric_type"), "BM25") {
			// Milvus reports the metric before it has read it: always empty.
			return nil, errcode.InvalidParam(`Search highlight only support with metric type "BM25" but was: %s`, "")
		}
		b, ok := bm25Of(col, anns)
		if !ok {
			return nil, errcode.New(errcode.Unexpected, "service internal error: Search with highlight failed, input field of BM25 annsField not found")
		}
		texts, err := bm25SearchTexts(req.GetPlaceholderGroup())
		if err != nil {
			return nil, err
		}
		t, err := h.task(col, b.in)
		if err != nil {
			return nil, err
		}
		lang := kvValue(params, "analyzer_name")
		for _, s := range texts {
			t.search = append(t.search, highlight.TermsOf(t.analyzer.Analyze(s, lang)))
		}
	}
	for _, q := range cfg.Queries {
		f := col.Field(q.Field)
		if f == nil {
			return nil, errcode.InvalidParam("highlight field not found in schema: %s", q.Field)
		}
		t, err := h.task(col, f)
		if err != nil {
			return nil, err
		}
		t.query = t.query.Union(highlight.TermsOf(t.analyzer.Analyze(q.Text, "")))
	}
	return h, nil
}

// task returns the task of field f, adding it on first use.
func (h *searchHighlight) task(col *catalog.Collection, f *schemapb.FieldSchema) (*highlightTask, error) {
	for _, t := range h.tasks {
		if t.field.GetFieldID() == f.GetFieldID() {
			return t, nil
		}
	}
	if !analyzedText(f) {
		return nil, errcode.InvalidParam("get highlight failed, the highlight field not found, %s:%d", f.GetName(), f.GetFieldID())
	}
	an, err := analyzer.ForField(col.Schema, f)
	if err != nil {
		return nil, err
	}
	t := &highlightTask{field: f, analyzer: an}
	if by := an.ByField(); by != "" {
		lf := col.Field(by)
		if lf == nil {
			return nil, errcode.InvalidParam("get highlight failed, analyzer field %s not found", by)
		}
		t.lang = lf.GetFieldID()
	}
	h.tasks = append(h.tasks, t)
	return t, nil
}

// analyzedText reports whether f is a VarChar field with enable_analyzer.
func analyzedText(f *schemapb.FieldSchema) bool {
	if f.GetDataType() != schemapb.DataType_VarChar {
		return false
	}
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == "enable_analyzer" {
			return parseBool(kv.GetValue())
		}
	}
	return false
}

// bm25SearchTexts returns the query texts of a BM25 search.
func bm25SearchTexts(raw []byte) ([]string, error) {
	ph, err := onePlaceholder(raw)
	if err != nil {
		return nil, err
	}
	if len(ph.GetValues()) == 0 {
		return nil, errcode.InvalidParam("please provide varchar/text for BM25 Function based search")
	}
	if ph.GetType() != commonpb.PlaceholderType_VarChar {
		return nil, errcode.InvalidParam("please provide varchar/text for BM25 Function based search, got %s", placeholderKind(ph.GetType()))
	}
	texts := make([]string, len(ph.GetValues()))
	for i, v := range ph.GetValues() {
		texts[i] = string(v)
	}
	return texts, nil
}

// output returns out plus the fields highlighting reads (the text fields and
// the fields choosing their analyzers), remembering which it added.
func (h *searchHighlight) output(out *outputSpec) *outputSpec {
	if h == nil {
		return out
	}
	all := *out
	all.ids = slices.Clone(out.ids)
	for _, t := range h.tasks {
		for _, id := range []int64{t.field.GetFieldID(), t.lang} {
			if id != 0 && !slices.Contains(all.ids, id) {
				all.add(id)
				h.extra = append(h.extra, id)
			}
		}
	}
	return &all
}

// attach computes the highlights of the hits of resp, then drops the fields
// that output added, so the response has the requested fields only.
func (h *searchHighlight) attach(resp *milvuspb.SearchResults, user *outputSpec) {
	if h == nil {
		return
	}
	data := resp.GetResults()
	if rows := len(data.GetScores()); rows > 0 {
		for _, t := range h.tasks {
			data.HighlightResults = append(data.HighlightResults, h.highlightField(t, data, rows))
		}
	}
	data.FieldsData = slices.DeleteFunc(data.FieldsData, func(fd *schemapb.FieldData) bool {
		return slices.Contains(h.extra, fd.GetFieldId())
	})
	data.OutputFields = user.names
}

// highlightField returns the fragments of field t.field for each of the rows hits.
func (h *searchHighlight) highlightField(t *highlightTask, data *schemapb.SearchResultData, rows int) *commonpb.HighlightResult {
	texts := stringColumn(data, t.field.GetFieldID())
	var langs []string
	if t.lang != 0 {
		langs = stringColumn(data, t.lang)
	}
	res := &commonpb.HighlightResult{FieldName: t.field.GetName(), Datas: make([]*commonpb.HighlightData, 0, rows)}
	row := 0
	for q, k := range data.GetTopks() {
		terms := t.query
		if q < len(t.search) {
			terms = t.search[q].Union(t.query)
		}
		for range k {
			text, lang := at(texts, row), at(langs, row)
			frags := h.cfg.Fragments(text, t.analyzer.Analyze(text, lang), terms)
			res.Datas = append(res.Datas, &commonpb.HighlightData{Fragments: frags})
			row++
		}
	}
	return res
}

// stringColumn returns the values of VarChar field id in data ("" for null).
func stringColumn(data *schemapb.SearchResultData, id int64) []string {
	for _, fd := range data.GetFieldsData() {
		if fd.GetFieldId() != id {
			continue
		}
		vals := slices.Clone(fd.GetScalars().GetStringData().GetData())
		for i, ok := range fd.GetValidData() {
			if !ok && i < len(vals) {
				vals[i] = ""
			}
		}
		return vals
	}
	return nil
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}
