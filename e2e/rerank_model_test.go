package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// rerankService serves the rerank protocols of Text Embeddings Inference
// (POST /rerank {"query", "texts"} → [{"index", "score"}]) and vLLM (POST
// /rerank {"query", "documents"} → {"results": [{"index",
// "relevance_score"}]}) as their documentation describes them, scoring a
// document by how many of the query's words it contains: the rerank model
// services users run beside Milvus cannot run in this sandbox, so the test
// stands in for one at the HTTP protocol.
func rerankService(t *testing.T, calls *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/rerank" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Query     string   `json:"query"`
			Texts     []string `json:"texts"`
			Documents []string `json:"documents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		score := func(doc string) float64 {
			n := 0
			for _, w := range strings.Fields(req.Query) {
				if strings.Contains(doc, w) {
					n++
				}
			}
			return float64(n)
		}
		if req.Texts != nil { // TEI answers best first
			type item struct {
				Index int     `json:"index"`
				Score float64 `json:"score"`
			}
			out := make([]item, len(req.Texts))
			for i, d := range req.Texts {
				out[len(out)-1-i] = item{i, score(d)}
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		type item struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		var out struct {
			Results []item `json:"results"`
		}
		for i, d := range req.Documents {
			out.Results = append(out.Results, item{i, score(d)})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestModelRerank searches with Milvus 2.6's model reranker against TEI and
// vLLM rerank services, in a search and a hybrid search, and checks the
// refusals of bad params with Milvus's messages.
func TestModelRerank(t *testing.T) {
	var calls atomic.Int64
	svc := rerankService(t, &calls)
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "modelrr"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2)).
		WithField(entity.NewField().WithName("num").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("doc").WithDataType(entity.FieldTypeVarChar).WithMaxLength(100))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	docs := []string{"red apple", "green apple pie", "blue sky", "apple pie with red berries", "nothing here"}
	ids := []int64{0, 1, 2, 3, 4}
	vecs := [][]float32{{1, 0}, {1, 0.1}, {1, 0.2}, {1, 0.3}, {1, 0.4}}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", ids),
		column.NewColumnFloatVector("v", 2, vecs), column.NewColumnInt64("num", ids), column.NewColumnVarChar("doc", docs)))
	require.NoError(t, err)
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", index.NewFlatIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	model := func(field string, params map[string]any) *entity.Function {
		f := entity.NewFunction().WithName("m").WithType(entity.FunctionTypeRerank).WithInputFields(field).
			WithParam("reranker", "model")
		for k, v := range params {
			f = f.WithParam(k, v)
		}
		return f
	}
	search := func(fn *entity.Function) (milvusclient.ResultSet, error) {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector([]float32{1, 0})}).
			WithANNSField("v").WithConsistencyLevel(entity.ClStrong).WithOutputFields("doc").WithFunctionReranker(fn))
		if err != nil {
			return milvusclient.ResultSet{}, err
		}
		return rs[0], nil
	}
	for _, provider := range []string{"tei", "vllm"} {
		t.Run(provider, func(t *testing.T) {
			rs, err := search(model("doc", map[string]any{
				"provider": provider, "queries": []string{"red apple pie"},
				"endpoint": svc.URL, "max_client_batch_size": 2,
			}))
			require.NoError(t, err)
			require.Equal(t, 5, rs.ResultCount)
			var got []int64
			for i := 0; i < rs.ResultCount; i++ {
				id, _ := rs.IDs.GetAsInt64(i)
				got = append(got, id)
			}
			// 3 matches all three words, 0 and 1 two (tie kept in search order), 2 and 4 none.
			require.Equal(t, []int64{3, 0, 1, 2, 4}, got)
			require.Equal(t, []float32{3, 2, 2, 0, 0}, rs.Scores)
		})
	}

	// A hybrid search fuses the sub-searches and ranks the keys by the model.
	hs, err := c.HybridSearch(ctx, milvusclient.NewHybridSearchOption(coll, 3,
		milvusclient.NewAnnRequest("v", 2, entity.FloatVector([]float32{1, 0})),
		milvusclient.NewAnnRequest("v", 2, entity.FloatVector([]float32{1, 0.4}))).
		WithFunctionRerankers(model("doc", map[string]any{"provider": "tei", "queries": []string{"nothing here"}, "endpoint": svc.URL})).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	first, _ := hs[0].IDs.GetAsInt64(0)
	require.EqualValues(t, 4, first)

	// A closed port: the service cannot be called.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	before := calls.Load()
	for _, tc := range []struct {
		field  string
		params map[string]any
		msg    string
	}{
		{"doc", map[string]any{"provider": "openai", "queries": []string{"q"}, "endpoint": svc.URL}, "unknown rerank model provider"},
		{"doc", map[string]any{"provider": "tei", "queries": []string{"q"}, "endpoint": "ftp://x"}, "is not a valid http/https link"},
		{"doc", map[string]any{"provider": "tei", "queries": []string{"q"}}, "is not a valid http/https link"},
		{"doc", map[string]any{"provider": "tei", "endpoint": svc.URL}, "rerank function lost params queries"},
		{"doc", map[string]any{"provider": "tei", "queries": "q", "endpoint": svc.URL}, "parse rerank params [queries] failed"},
		{"doc", map[string]any{"provider": "tei", "queries": []string{"a", "b"}, "endpoint": svc.URL}, "nq must equal to queries size"},
		{"num", map[string]any{"provider": "tei", "queries": []string{"q"}, "endpoint": svc.URL}, "rerank model only support varchar"},
		{"nope", map[string]any{"provider": "tei", "queries": []string{"q"}, "endpoint": svc.URL}, "field not found"},
		{"doc", map[string]any{"provider": "tei", "queries": []string{"q"}, "endpoint": dead}, "call service failed"},
	} {
		_, err := search(model(tc.field, tc.params))
		require.ErrorContains(t, err, tc.msg, "%v", tc.params)
	}
	require.Equal(t, before, calls.Load(), "refused params never reach the service")
}

// TestFusionAsFunction: an RRF or Weighted fusion given as a function-score
// reranker (as langchain-milvus and pymilvus's Function(type=RERANK) send
// it) fuses exactly as the same ranker given in rank params.
func TestFusionAsFunction(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "fusionfn"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("a").WithDataType(entity.FieldTypeFloatVector).WithDim(2)).
		WithField(entity.NewField().WithName("b").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	var ids []int64
	var a, b [][]float32
	for i := range 30 {
		ids = append(ids, int64(i))
		a = append(a, []float32{float32(i), 1})
		b = append(b, []float32{float32(30 - i), 2})
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", ids),
		column.NewColumnFloatVector("a", 2, a), column.NewColumnFloatVector("b", 2, b)))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)
	search := func(r milvusclient.Reranker, f *entity.Function) ([]milvusclient.ResultSet, error) {
		o := milvusclient.NewHybridSearchOption(coll, 8,
			milvusclient.NewAnnRequest("a", 10, entity.FloatVector([]float32{3, 1})).WithSearchParam("metric_type", "L2"),
			milvusclient.NewAnnRequest("b", 10, entity.FloatVector([]float32{10, 2})).WithSearchParam("metric_type", "L2")).
			WithConsistencyLevel(entity.ClStrong)
		if f != nil {
			return c.HybridSearch(ctx, o.WithFunctionRerankers(f))
		}
		return c.HybridSearch(ctx, o.WithReranker(r))
	}
	fn := func(params map[string]any) *entity.Function {
		f := entity.NewFunction().WithName("fuse").WithType(entity.FunctionTypeRerank)
		for k, v := range params {
			f = f.WithParam(k, v)
		}
		return f
	}
	for name, tc := range map[string]struct {
		ranker milvusclient.Reranker
		fn     *entity.Function
	}{
		"rrf":      {milvusclient.NewRRFReranker().WithK(20), fn(map[string]any{"reranker": "rrf", "k": 20})},
		"weighted": {milvusclient.NewWeightedReranker([]float64{0.3, 0.7}), fn(map[string]any{"reranker": "weighted", "weights": []float64{0.3, 0.7}, "norm_score": false})},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := search(tc.ranker, nil)
			require.NoError(t, err)
			got, err := search(nil, tc.fn)
			require.NoError(t, err)
			require.Equal(t, want[0].ResultCount, got[0].ResultCount)
			for i := 0; i < want[0].ResultCount; i++ {
				w, _ := want[0].IDs.GetAsInt64(i)
				g, _ := got[0].IDs.GetAsInt64(i)
				require.Equal(t, w, g)
			}
			if name == "rrf" {
				require.Equal(t, want[0].Scores, got[0].Scores)
			}
		})
	}
}

// TestHybridGroupBy: a hybrid search grouped by a field (rank params
// group_by_field, group_size, strict_group_size, as pymilvus sends them)
// returns limit groups of up to group_size fused hits each, group by group,
// groups ordered by their best hit, with the group values.
func TestHybridGroupBy(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll, n = "hygroup", 40
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("tag").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	var ids, tags []int64
	var vecs [][]float32
	for i := range n {
		ids, tags = append(ids, int64(i)), append(tags, int64(i%4))
		vecs = append(vecs, []float32{float32(i), 1})
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", ids),
		column.NewColumnInt64("tag", tags), column.NewColumnFloatVector("v", 2, vecs)))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)

	vec := func(x float32) []byte {
		b, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{
			{Tag: "$0", Type: commonpb.PlaceholderType_FloatVector, Values: [][]byte{floatBytes([]float32{x, 1})}},
		}})
		require.NoError(t, err)
		return b
	}
	sub := func(x float32) *milvuspb.SearchRequest {
		return &milvuspb.SearchRequest{
			CollectionName: coll, SearchInput: &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: vec(x)},
			DslType: commonpb.DslType_BoolExprV1, Nq: 1, SearchParams: []*commonpb.KeyValuePair{
				{Key: "anns_field", Value: "v"},
				{Key: "topk", Value: "20"},
				{Key: "metric_type", Value: "L2"},
				{Key: "params", Value: "{}"},
			},
		}
	}
	raw := s.rawClient(t)
	hybrid := func(extra ...*commonpb.KeyValuePair) *schemapb.SearchResultData {
		res, err := raw.HybridSearch(ctx, &milvuspb.HybridSearchRequest{
			CollectionName:   coll,
			Requests:         []*milvuspb.SearchRequest{sub(10), sub(14)},
			RankParams:       append([]*commonpb.KeyValuePair{{Key: "strategy", Value: "rrf"}, {Key: "params", Value: `{"k": 60}`}, {Key: "limit", Value: "3"}}, extra...),
			OutputFields:     []string{"tag"},
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		})
		require.NoError(t, err)
		require.Zero(t, res.GetStatus().GetCode(), res.GetStatus().GetReason())
		return res.GetResults()
	}
	plain := hybrid()
	got := hybrid(&commonpb.KeyValuePair{Key: "group_by_field", Value: "tag"}, &commonpb.KeyValuePair{Key: "group_size", Value: "2"})
	hits := got.GetIds().GetIntId().GetData()
	require.Len(t, hits, 6, "3 groups of 2")
	require.Equal(t, plain.GetIds().GetIntId().GetData()[0], hits[0], "the best fused hit leads")
	values := got.GetGroupByFieldValue().GetScalars().GetLongData().GetData()
	require.Len(t, values, 6)
	seen := map[int64]bool{}
	for i, id := range hits {
		require.Equal(t, id%4, values[i], "group value of hit %d", id)
		if i%2 == 0 {
			require.False(t, seen[values[i]], "groups come whole, once")
			seen[values[i]] = true
		} else {
			require.Equal(t, values[i-1], values[i])
			require.GreaterOrEqual(t, got.GetScores()[i-1], got.GetScores()[i])
		}
	}
	for i := 2; i < 6; i += 2 {
		require.GreaterOrEqual(t, got.GetScores()[i-2], got.GetScores()[i], "groups by their best hit")
	}
	// Offset skips whole groups.
	paged := hybrid(&commonpb.KeyValuePair{Key: "group_by_field", Value: "tag"}, &commonpb.KeyValuePair{Key: "group_size", Value: "2"},
		&commonpb.KeyValuePair{Key: "offset", Value: "1"})
	require.Equal(t, hits[2:], paged.GetIds().GetIntId().GetData()[:4])
}
