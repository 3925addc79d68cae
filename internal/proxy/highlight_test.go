package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// highlightCollection: id (pk), v (vector), doc (analyzed VarChar, input of
// the BM25 function doc_bm25 into sparse), note (analyzed VarChar) and
// plain (VarChar without analyzer).
func highlightCollection() *catalog.Collection {
	analyzed := []*commonpb.KeyValuePair{{Key: "max_length", Value: "200"}, {Key: "enable_analyzer", Value: "true"}}
	return &catalog.Collection{CollectionInfo: catalog.CollectionInfo{Name: "docs"}, Schema: &schemapb.CollectionSchema{
		Fields: []*schemapb.FieldSchema{
			{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
			{FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
			{FieldID: 102, Name: "doc", DataType: schemapb.DataType_VarChar, Nullable: true, TypeParams: analyzed},
			{FieldID: 103, Name: "sparse", DataType: schemapb.DataType_SparseFloatVector, IsFunctionOutput: true},
			{FieldID: 104, Name: "note", DataType: schemapb.DataType_VarChar, TypeParams: analyzed},
			{FieldID: 105, Name: "plain", DataType: schemapb.DataType_VarChar, TypeParams: analyzed[:1]},
		},
		Functions: []*schemapb.FunctionSchema{{
			Name: "doc_bm25", Type: schemapb.FunctionType_BM25,
			InputFieldNames: []string{"doc"}, OutputFieldNames: []string{"sparse"}, InputFieldIds: []int64{102}, OutputFieldIds: []int64{103},
		}},
	}}
}

func textPlaceholder(t *testing.T, texts ...string) []byte {
	t.Helper()
	ph := &commonpb.PlaceholderValue{Tag: "$0", Type: commonpb.PlaceholderType_VarChar}
	for _, s := range texts {
		ph.Values = append(ph.Values, []byte(s))
	}
	b, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{ph}})
	require.NoError(t, err)
	return b
}

func vectorPlaceholder(t *testing.T) []byte {
	t.Helper()
	b, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{
		{Tag: "$0", Type: commonpb.PlaceholderType_FloatVector, Values: [][]byte{make([]byte, 8)}},
	}})
	require.NoError(t, err)
	return b
}

func highlighterReq(metric string, placeholder []byte, params ...string) *milvuspb.SearchRequest {
	h := &commonpb.Highlighter{Type: commonpb.HighlightType_Lexical}
	for i := 0; i+1 < len(params); i += 2 {
		h.Params = append(h.Params, &commonpb.KeyValuePair{Key: params[i], Value: params[i+1]})
	}
	return &milvuspb.SearchRequest{
		SearchInput: &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: placeholder}, Highlighter: h,
		SearchParams: []*commonpb.KeyValuePair{{Key: "metric_type", Value: metric}},
	}
}

func TestPlanHighlightErrors(t *testing.T) {
	col := highlightCollection()
	sparse, vec := col.Field("sparse"), col.Field("v")
	cases := []struct {
		name string
		req  *milvuspb.SearchRequest
		anns *schemapb.FieldSchema
		code int32
		msg  string
	}{
		{
			"search text needs metric BM25", highlighterReq("COSINE", vectorPlaceholder(t), "highlight_search_text", "True"), vec,
			errcode.IllegalArgument, `Search highlight only support with metric type "BM25" but was: : invalid parameter`,
		},
		{
			"search text needs a BM25 output anns field", highlighterReq("BM25", textPlaceholder(t, "water"), "highlight_search_text", "True"), vec,
			errcode.Unexpected, "service internal error: Search with highlight failed, input field of BM25 annsField not found",
		},
		{
			"search text needs text data", highlighterReq("BM25", vectorPlaceholder(t), "highlight_search_text", "True"), sparse,
			errcode.IllegalArgument, "please provide varchar/text for BM25 Function based search, got FloatVector: invalid parameter",
		},
		{
			"bad parameter", highlighterReq("BM25", textPlaceholder(t, "water"), "fragment_size", "0"), sparse,
			errcode.IllegalArgument, "invalid fragment_size: 0: invalid parameter",
		},
		{
			"query on an unknown field", highlighterReq("COSINE", vectorPlaceholder(t),
				"highlight_query", `[{"type": "TextMatch", "field": "nope", "text": "a"}]`), vec,
			errcode.IllegalArgument, "highlight field not found in schema: nope: invalid parameter",
		},
		{
			"query on a field without analyzer", highlighterReq("COSINE", vectorPlaceholder(t),
				"highlight_query", `[{"type": "TextMatch", "field": "plain", "text": "a"}]`), vec,
			errcode.IllegalArgument, "get highlight failed, the highlight field not found, plain:105: invalid parameter",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planHighlight(col, tc.req, tc.anns)
			require.Error(t, err)
			require.Equal(t, tc.code, errcode.CodeOf(err))
			require.Equal(t, tc.msg, err.Error())
		})
	}
	semantic := &milvuspb.SearchRequest{Highlighter: &commonpb.Highlighter{Type: commonpb.HighlightType_Semantic}}
	_, err := planHighlight(col, semantic, vec)
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	h, err := planHighlight(col, &milvuspb.SearchRequest{}, vec)
	require.NoError(t, err)
	require.Nil(t, h)
}

// hitsOf builds the response searchResults makes for hits of nq queries
// with the given doc and note values.
func hitsOf(topks []int64, docs []string, docValid []bool, notes []string) *milvuspb.SearchResults {
	data := &schemapb.SearchResultData{
		Topks: topks, OutputFields: []string{"doc", "note"},
		FieldsData: []*schemapb.FieldData{
			column.ToFieldData("doc", 102, &column.Strings{T: schemapb.DataType_VarChar, Data: docs, Nulls: column.Nulls{Valid: docValid}}),
			column.ToFieldData("note", 104, &column.Strings{T: schemapb.DataType_VarChar, Data: notes}),
		},
	}
	for range docs {
		data.Scores = append(data.Scores, 1)
	}
	return &milvuspb.SearchResults{Status: &commonpb.Status{}, Results: data}
}

func TestHighlightAttach(t *testing.T) {
	col := highlightCollection()
	req := highlighterReq("BM25", textPlaceholder(t, "water", "seat leak"),
		"pre_tags", `["{"]`, "post_tags", `["}"]`, "highlight_search_text", "true", "fragment_size", "12",
		"highlight_query", `[{"type": "TextMatch", "field": "note", "text": "red"}, {"type": "TextMatch", "field": "doc", "text": "full"}]`)
	h, err := planHighlight(col, req, col.Field("sparse"))
	require.NoError(t, err)

	// The user asked for id only: doc and note are fetched for highlighting
	// and dropped again.
	user, err := resolveOutput(col, []string{"id"}, false)
	require.NoError(t, err)
	all := h.output(user)
	require.Equal(t, []int64{100, 102, 104}, all.ids)
	require.Equal(t, []int64{100}, user.ids)

	resp := hitsOf([]int64{2, 1},
		[]string{"I have the seat full of water!", "", "a seat leak"}, []bool{true, false, true},
		[]string{"red water", "blue", "Red"})
	resp.Results.FieldsData = append([]*schemapb.FieldData{
		column.ToFieldData("id", 100, &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 3}}),
	}, resp.Results.FieldsData...)
	resp.Results.OutputFields = all.names
	h.attach(resp, user)

	require.Equal(t, []string{"id"}, resp.Results.OutputFields)
	require.Len(t, resp.Results.FieldsData, 1)
	require.Equal(t, "id", resp.Results.FieldsData[0].GetFieldName())
	hr := resp.Results.GetHighlightResults()
	require.Len(t, hr, 2)
	frags := func(r *commonpb.HighlightResult) [][]string {
		var out [][]string
		for _, d := range r.GetDatas() {
			out = append(out, d.GetFragments())
		}
		return out
	}
	// doc: query 0 highlights water (and the doc query's full), query 1 seat and leak.
	require.Equal(t, "doc", hr[0].GetFieldName())
	require.Equal(t, [][]string{{"{full} of {water}"}, {}, {"{seat} {leak}"}}, frags(hr[0]))
	// note: only the TextMatch query's red, for the hits of every query.
	require.Equal(t, "note", hr[1].GetFieldName())
	require.Equal(t, [][]string{{"{red} water"}, {}, {"{Red}"}}, frags(hr[1]))
}

func TestHighlightAttachNoHits(t *testing.T) {
	col := highlightCollection()
	h, err := planHighlight(col, highlighterReq("BM25", textPlaceholder(t, "water"), "highlight_search_text", "true"), col.Field("sparse"))
	require.NoError(t, err)
	user, err := resolveOutput(col, []string{"doc"}, false)
	require.NoError(t, err)
	all := h.output(user)
	require.Equal(t, user.ids, all.ids, "an output field is not fetched twice")
	resp := hitsOf([]int64{0}, nil, nil, nil)
	h.attach(resp, user)
	require.Empty(t, resp.Results.GetHighlightResults())

	// Without a highlighter nothing changes.
	var none *searchHighlight
	require.Same(t, user, none.output(user))
	resp = hitsOf([]int64{1}, []string{"water"}, nil, []string{"x"})
	none.attach(resp, user)
	require.Empty(t, resp.Results.GetHighlightResults())
	require.Len(t, resp.Results.FieldsData, 2)
}

// TestHighlightMultiAnalyzer highlights a multi-language field: each row is
// analyzed by the analyzer its lang value names, which is fetched for
// highlighting and not output.
func TestHighlightMultiAnalyzer(t *testing.T) {
	multi := `{"by_field": "lang", "analyzers": {"en": {"type": "english"}, "default": {"tokenizer": "whitespace"}}}`
	col := &catalog.Collection{CollectionInfo: catalog.CollectionInfo{Name: "multi"}, Schema: &schemapb.CollectionSchema{
		Fields: []*schemapb.FieldSchema{
			{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
			{FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
			{FieldID: 102, Name: "lang", DataType: schemapb.DataType_VarChar, TypeParams: []*commonpb.KeyValuePair{{Key: "max_length", Value: "8"}}},
			{FieldID: 103, Name: "doc", DataType: schemapb.DataType_VarChar, TypeParams: []*commonpb.KeyValuePair{
				{Key: "max_length", Value: "200"}, {Key: "enable_analyzer", Value: "true"}, {Key: "multi_analyzer_params", Value: multi},
			}},
		},
	}}
	req := highlighterReq("COSINE", vectorPlaceholder(t), "pre_tags", `["["]`, "post_tags", `["]"]`,
		"highlight_query", `[{"type": "TextMatch", "field": "doc", "text": "Running"}]`)
	h, err := planHighlight(col, req, col.Field("v"))
	require.NoError(t, err)
	user, err := resolveOutput(col, []string{"doc"}, false)
	require.NoError(t, err)
	all := h.output(user)
	require.Equal(t, []int64{103, 102}, all.ids)

	// The query text is analyzed by the default analyzer: the token Running.
	// An English row stems runs and Running to run, and does not match; a
	// row of another language keeps Running whole.
	resp := &milvuspb.SearchResults{Status: &commonpb.Status{}, Results: &schemapb.SearchResultData{
		Topks: []int64{2}, Scores: []float32{1, 1}, OutputFields: all.names,
		FieldsData: []*schemapb.FieldData{
			column.ToFieldData("doc", 103, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"Running runs", "Running fast"}}),
			column.ToFieldData("lang", 102, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"en", "xx"}}),
		},
	}}
	h.attach(resp, user)
	require.Equal(t, []string{"doc"}, resp.Results.GetOutputFields())
	require.Len(t, resp.Results.GetFieldsData(), 1)
	datas := resp.Results.GetHighlightResults()[0].GetDatas()
	require.Empty(t, datas[0].GetFragments())
	require.Equal(t, []string{"[Running] fast"}, datas[1].GetFragments())
}
