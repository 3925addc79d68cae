package e2e

import (
	bin "encoding/binary"
	"math"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestHighlighter searches with Milvus 2.6's LexicalHighlighter through the
// Go SDK's raw service (v2.6.2 has no highlighter option): a vector search
// highlights the terms of a TextMatch highlight query in an analyzed
// VarChar field that is not an output field, with cycling tags, fragment
// size, offset and count; bad parameters and highlight_search_text outside
// a BM25 search are refused with Milvus's codes and messages.
func TestHighlighter(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "highlight"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2)).
		WithField(entity.NewField().WithName("doc").WithDataType(entity.FieldTypeVarChar).WithMaxLength(200).
			WithEnableAnalyzer(true).WithNullable(true)).
		WithField(entity.NewField().WithName("tag").WithDataType(entity.FieldTypeVarChar).WithMaxLength(20))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	docs := []string{
		"I have the seat full of water! Like, full of water!",
		"Must be water.",
		"A leakage of what?",
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll,
		column.NewColumnInt64("id", []int64{1, 2, 3}),
		column.NewColumnFloatVector("v", 2, [][]float32{{1, 0}, {0.8, 0.6}, {0, 1}}),
		column.NewColumnVarChar("doc", docs),
		column.NewColumnVarChar("tag", []string{"a", "b", "c"})))
	require.NoError(t, err)
	idx, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", index.NewFlatIndex(entity.COSINE)))
	require.NoError(t, err)
	require.NoError(t, idx.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	query := func(field, text string) string {
		return `[{"type": "TextMatch", "field": "` + field + `", "text": "` + text + `"}]`
	}
	search := func(t *testing.T, metric string, params ...string) *milvuspb.SearchResults {
		t.Helper()
		vec := make([]byte, 8)
		bin.LittleEndian.PutUint32(vec, math.Float32bits(1))
		pg, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{
			{Tag: "$0", Type: commonpb.PlaceholderType_FloatVector, Values: [][]byte{vec}},
		}})
		require.NoError(t, err)
		h := &commonpb.Highlighter{Type: commonpb.HighlightType_Lexical}
		for i := 0; i+1 < len(params); i += 2 {
			h.Params = append(h.Params, &commonpb.KeyValuePair{Key: params[i], Value: params[i+1]})
		}
		resp, err := c.GetService().Search(ctx, &milvuspb.SearchRequest{
			CollectionName: coll, SearchInput: &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: pg},
			DslType: commonpb.DslType_BoolExprV1, OutputFields: []string{"tag"}, Nq: 1, Highlighter: h,
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
			SearchParams: []*commonpb.KeyValuePair{
				{Key: "anns_field", Value: "v"},
				{Key: "topk", Value: "3"},
				{Key: "metric_type", Value: metric},
				{Key: "params", Value: "{}"},
			},
		})
		require.NoError(t, err)
		return resp
	}
	fragments := func(t *testing.T, resp *milvuspb.SearchResults) [][]string {
		t.Helper()
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		res := resp.GetResults()
		require.Equal(t, []int64{1, 2, 3}, res.GetIds().GetIntId().GetData(), "hits by cosine to (1, 0)")
		require.Equal(t, []string{"tag"}, res.GetOutputFields())
		require.Len(t, res.GetFieldsData(), 1, "doc is read for highlighting, not returned")
		require.Len(t, res.GetHighlightResults(), 1)
		hr := res.GetHighlightResults()[0]
		require.Equal(t, "doc", hr.GetFieldName())
		var out [][]string
		for _, d := range hr.GetDatas() {
			out = append(out, append([]string{}, d.GetFragments()...))
		}
		return out
	}

	t.Run("text match terms with cycling tags", func(t *testing.T) {
		got := fragments(t, search(t, "COSINE", "pre_tags", `["{", "<"]`, "post_tags", `["}", ">"]`,
			"highlight_search_text", "False", "highlight_query", query("doc", "water")))
		require.Equal(t, [][]string{{"{water}! Like, full of <water>!"}, {"{water}."}, {}}, got)
	})
	t.Run("fragment size, offset and count", func(t *testing.T) {
		got := fragments(t, search(t, "COSINE", "pre_tags", `["="]`, "post_tags", `["="]`,
			"fragment_offset", "5", "fragment_size", "5", "num_of_fragments", "2", "highlight_query", query("doc", "water of")))
		// The second fragment reaches back over the first one's match, untagged.
		require.Equal(t, [][]string{{"full =of=", "l of =water="}, {"t be =water="}, {"kage =of="}}, got)
	})
	t.Run("default tags", func(t *testing.T) {
		got := fragments(t, search(t, "COSINE", "highlight_query", query("doc", "leakage")))
		require.Equal(t, [][]string{{}, {}, {"<em>leakage</em> of what?"}}, got)
	})
	for _, tc := range []struct {
		name   string
		metric string
		params []string
		code   int32
		msg    string
	}{
		{"fragment_size", "COSINE", []string{"fragment_size", "0"}, 1100, "invalid fragment_size: 0: invalid parameter"},
		{"num_of_fragments", "COSINE", []string{"num_of_fragments", "0.1"}, 1100, "invalid num_of_fragments: 0.1: invalid parameter"},
		{"empty tags", "COSINE", []string{"pre_tags", "[]"}, 1100, "pre_tags cannot be empty list: invalid parameter"},
		{
			"search text outside BM25", "COSINE",
			[]string{"highlight_search_text", "True"},
			1100,
			`Search highlight only support with metric type "BM25" but was: : invalid parameter`,
		},
		{
			"search text on a dense field", "BM25",
			[]string{"highlight_search_text", "True"},
			5,
			"service internal error: Search with highlight failed, input field of BM25 annsField not found",
		},
		{"unknown field", "COSINE", []string{"highlight_query", query("nope", "x")}, 1100, "highlight field not found in schema: nope"},
		{
			"field without analyzer", "COSINE",
			[]string{"highlight_query", query("tag", "x")},
			1100,
			"get highlight failed, the highlight field not found, tag:",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := search(t, tc.metric, tc.params...)
			require.Equal(t, tc.code, resp.GetStatus().GetCode())
			require.Contains(t, resp.GetStatus().GetReason(), tc.msg)
		})
	}
}

// TestHighlighterBM25 highlights the search texts of a full-text search:
// each query's hits get the terms of that query's text (nq 2), together with
// a TextMatch highlight query's terms, in the BM25 input field.
func TestHighlighterBM25(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "highlight_bm25"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, bm25Schema(coll))))
	docs := []string{
		"my first test doc",
		"my second test doc",
		"my first test doc. Milvus is an open-source vector database built for GenAI applications.",
		"my second test doc. Milvus is an open-source vector database that suits AI applications " +
			"of every size from running a demo chatbot to building web-scale search.",
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll,
		column.NewColumnInt64("id", []int64{1, 2, 3, 4}), column.NewColumnVarChar("text", docs)))
	require.NoError(t, err)
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "sparse", index.NewSparseInvertedIndex(entity.BM25, 0)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	pg, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{
		{Tag: "$0", Type: commonpb.PlaceholderType_VarChar, Values: [][]byte{[]byte("test"), []byte("Milvus")}},
	}})
	require.NoError(t, err)
	search := func(t *testing.T, params ...string) *milvuspb.SearchResults {
		t.Helper()
		h := &commonpb.Highlighter{Type: commonpb.HighlightType_Lexical}
		for i := 0; i+1 < len(params); i += 2 {
			h.Params = append(h.Params, &commonpb.KeyValuePair{Key: params[i], Value: params[i+1]})
		}
		resp, err := c.GetService().Search(ctx, &milvuspb.SearchRequest{
			CollectionName: coll, SearchInput: &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: pg},
			DslType: commonpb.DslType_BoolExprV1, Nq: 2, Highlighter: h, ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
			SearchParams: []*commonpb.KeyValuePair{
				{Key: "anns_field", Value: "sparse"},
				{Key: "topk", Value: "10"},
				{Key: "metric_type", Value: "BM25"},
				{Key: "params", Value: "{}"},
			},
		})
		require.NoError(t, err)
		return resp
	}
	// byQuery maps each query's hit ids to their fragments of text.
	byQuery := func(t *testing.T, resp *milvuspb.SearchResults) []map[int64][]string {
		t.Helper()
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		res := resp.GetResults()
		require.Empty(t, res.GetFieldsData(), "text is read for highlighting, not returned")
		require.Len(t, res.GetHighlightResults(), 1)
		require.Equal(t, "text", res.GetHighlightResults()[0].GetFieldName())
		datas := res.GetHighlightResults()[0].GetDatas()
		ids := res.GetIds().GetIntId().GetData()
		require.Len(t, datas, len(ids))
		var out []map[int64][]string
		row := 0
		for _, k := range res.GetTopks() {
			m := map[int64][]string{}
			for range k {
				m[ids[row]] = datas[row].GetFragments()
				row++
			}
			out = append(out, m)
		}
		return out
	}

	got := byQuery(t, search(t, "pre_tags", `["{"]`, "post_tags", `["}"]`, "highlight_search_text", "True"))
	require.Equal(t, []map[int64][]string{
		{
			1: {"{test} doc"}, 2: {"{test} doc"},
			3: {"{test} doc. Milvus is an open-source vector database built for GenAI applications."},
			4: {"{test} doc. Milvus is an open-source vector database that suits AI applications of every size from run"},
		},
		{
			3: {"{Milvus} is an open-source vector database built for GenAI applications."},
			4: {"{Milvus} is an open-source vector database that suits AI applications of every size from running a dem"},
		},
	}, got)

	got = byQuery(t, search(t, "pre_tags", `["{"]`, "post_tags", `["}"]`, "highlight_search_text", "True",
		"fragment_offset", "20", "fragment_size", "60",
		"highlight_query", `[{"type": "TextMatch", "field": "text", "text": "my doc"}]`))
	require.Equal(t, []string{"{my} first {test} {doc}"}, got[0][1])
	require.Equal(t, []string{"{my} first test {doc}. {Milvus} is an open-source vector database "}, got[1][3])
	require.Equal(t, []string{"{my} second test {doc}. {Milvus} is an open-source vector database"}, got[1][4])
}
