package e2e

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// bm25Corpus is a small corpus with repeated words, so IDF and length
// normalisation both matter.
var bm25Corpus = []string{
	"The quick brown fox jumps over the lazy dog",
	"A fast brown fox leaps over a sleeping dog in the sun",
	"Vector databases store embeddings for similarity search",
	"Full text search ranks documents by BM25 relevance",
	"The dog barks at the fox and the fox runs away",
	"Milvus supports hybrid search over dense and sparse vectors",
	"BM25 uses term frequency, inverse document frequency and document length",
	"Search engines such as Lucene and Tantivy implement BM25",
	"Brown bears and brown foxes live in the forest",
	"Sparse vectors hold term weights; dense vectors hold embeddings",
	"",
	"dog dog dog dog dog",
}

// words is the standard analyzer as the test knows it: runs of letters and
// digits, lower-cased.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// bm25Ref scores every live document of docs for query q as Milvus defines
// BM25 (k1 1.2, b 0.75, IDF ln(1+(N−df+0.5)/(df+0.5))), independently of
// the server's code: top k ids and their scores.
func bm25Ref(docs map[int64]string, q string, k int) ([]int64, map[int64]float64) {
	const k1, b = 1.2, 0.75
	tf := map[int64]map[string]int{}
	df := map[string]int{}
	total := 0
	for id, d := range docs {
		m := map[string]int{}
		for _, w := range words(d) {
			m[w]++
			total++
		}
		for w := range m {
			df[w]++
		}
		tf[id] = m
	}
	n := float64(len(docs))
	avgdl := float64(total) / n
	qtf := map[string]int{}
	for _, w := range words(q) {
		qtf[w]++
	}
	scores := map[int64]float64{}
	for id, m := range tf {
		dl := 0
		for _, c := range m {
			dl += c
		}
		s := 0.0
		for w, qc := range qtf {
			c := m[w]
			if c == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			s += float64(qc) * idf * float64(c) * (k1 + 1) / (float64(c) + k1*(1-b+b*float64(dl)/avgdl))
		}
		if s > 0 {
			scores[id] = s
		}
	}
	var ids []int64
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if scores[ids[i]] != scores[ids[j]] {
			return scores[ids[i]] > scores[ids[j]]
		}
		return ids[i] < ids[j]
	})
	if len(ids) > k {
		ids = ids[:k]
	}
	return ids, scores
}

func bm25Schema(name string) *entity.Schema {
	return entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(1000).WithEnableAnalyzer(true)).
		WithField(entity.NewField().WithName("sparse").WithDataType(entity.FieldTypeSparseVector)).
		WithFunction(entity.NewFunction().WithName("text_bm25").WithType(entity.FunctionTypeBM25).
			WithInputFields("text").WithOutputFields("sparse"))
}

// TestBM25FullText runs a full-text search through the Go SDK against an
// independent BM25 over the same live documents: growing rows, then
// flushed and indexed, after deletes and after a restart; the scores of a
// document do not change when its segment is flushed or reloaded.
func TestBM25FullText(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "bm25"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, bm25Schema(coll))))

	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.Len(t, desc.Schema.Functions, 1)
	require.Equal(t, entity.FunctionTypeBM25, desc.Schema.Functions[0].Type)
	require.Equal(t, []string{"text"}, desc.Schema.Functions[0].InputFieldNames)
	require.Equal(t, []string{"sparse"}, desc.Schema.Functions[0].OutputFieldNames)

	docs := map[int64]string{}
	insert := func(from int, texts []string) {
		ids := make([]int64, len(texts))
		for i, tx := range texts {
			ids[i] = int64(from + i)
			docs[ids[i]] = tx
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll,
			column.NewColumnInt64("id", ids), column.NewColumnVarChar("text", texts)))
		require.NoError(t, err)
	}
	insert(0, bm25Corpus[:8])

	// The client never sends the output field.
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll,
		column.NewColumnInt64("id", []int64{99}), column.NewColumnVarChar("text", []string{"x"}),
		column.NewColumnSparseVectors("sparse", []entity.SparseEmbedding{embedding(t, map[uint32]float32{1: 1})})))
	require.ErrorContains(t, err, "unexpected function output field `sparse`")

	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "sparse", index.NewSparseInvertedIndex(entity.BM25, 0)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	queries := []string{"brown fox", "dog", "BM25 search", "sparse dense vectors embeddings", "nothing matches zzz"}
	check := func(stage string) {
		t.Helper()
		for _, q := range queries {
			want, scores := bm25Ref(docs, q, 5)
			rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.Text(q)}).
				WithANNSField("sparse").WithOutputFields("text").WithConsistencyLevel(entity.ClStrong))
			require.NoError(t, err, "%s: %q", stage, q)
			var got []int64
			for i := 0; i < rs[0].ResultCount; i++ {
				id, _ := rs[0].IDs.GetAsInt64(i)
				got = append(got, id)
				require.InEpsilon(t, scores[id], float64(rs[0].Scores[i]), 1e-4, "%s: %q id %d", stage, q, id)
				text, _ := rs[0].GetColumn("text").GetAsString(i)
				require.Equal(t, docs[id], text)
			}
			require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s: %q", stage, q)
		}
	}
	check("growing")

	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	waitIndexed(ctx, t, c, coll, "sparse", 8)
	insert(8, bm25Corpus[8:])
	check("flushed and indexed + growing")

	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id in [0, 9]"))
	require.NoError(t, err)
	delete(docs, 0)
	delete(docs, 9)
	check("after deletes")

	// "*" leaves the output field out; asking for it is refused.
	qr, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 1").WithOutputFields("*").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Nil(t, qr.GetColumn("sparse"))
	require.NotNil(t, qr.GetColumn("text"))
	_, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 1").WithOutputFields("sparse"))
	require.ErrorContains(t, err, "not allowed to retrieve raw data of field sparse")

	ft, err = c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	ctx = ctxT(t)
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	check("after restart")
}

// TestBM25SchemaErrors checks Milvus's refusals of bad BM25 functions.
func TestBM25SchemaErrors(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	base := func() *entity.Schema {
		return entity.NewSchema().WithName("bad").
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(100).WithEnableAnalyzer(true)).
			WithField(entity.NewField().WithName("plain").WithDataType(entity.FieldTypeVarChar).WithMaxLength(100)).
			WithField(entity.NewField().WithName("sparse").WithDataType(entity.FieldTypeSparseVector)).
			WithField(entity.NewField().WithName("dense").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	}
	fn := func(in, out string) *entity.Function {
		return entity.NewFunction().WithName("f").WithType(entity.FunctionTypeBM25).WithInputFields(in).WithOutputFields(out)
	}
	for _, tc := range []struct {
		schema *entity.Schema
		msg    string
	}{
		{base().WithFunction(fn("plain", "sparse")), "BM25 function input field must set enable_analyzer to true"},
		{base().WithFunction(fn("id", "sparse")), "BM25 function input field must be a VARCHAR/TEXT field"},
		{base().WithFunction(fn("text", "dense")), "BM25 function output field must be a SparseFloatVector field"},
		{base().WithFunction(fn("text", "nope")), "function output field not found: nope"},
		{base().WithFunction(fn("text", "sparse")).WithFunction(fn("text", "sparse")), "duplicate function name: f"},
		{base().WithFunction(fn("text", "sparse")).WithFunction(fn("text", "sparse").WithName("g")), "duplicate function output field: function g, field sparse"},
	} {
		err := c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("bad", tc.schema))
		require.ErrorContains(t, err, tc.msg)
	}
	has, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption("bad"))
	require.NoError(t, err)
	require.False(t, has, "nothing half-created")
}

// TestBM25HybridRaw sends, through raw gRPC as pymilvus does, a hybrid
// search of a full-text sub-search (a query text) and a sub-search whose
// limit is "None" (pymilvus's AnnSearchRequest without a limit), which
// takes the hybrid search's limit, as in Milvus.
func TestBM25HybridRaw(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "bm25hy"
	schema := bm25Schema(coll)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	ids := make([]int64, len(bm25Corpus))
	for i := range ids {
		ids[i] = int64(i)
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", ids), column.NewColumnVarChar("text", bm25Corpus)))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)

	text := func(q string) []byte {
		b, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{
			{Tag: "$0", Type: commonpb.PlaceholderType_VarChar, Values: [][]byte{[]byte(q)}},
		}})
		require.NoError(t, err)
		return b
	}
	sub := func(q, limit string) *milvuspb.SearchRequest {
		return &milvuspb.SearchRequest{
			CollectionName: coll, SearchInput: &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: text(q)}, DslType: commonpb.DslType_BoolExprV1, Nq: 1,
			SearchParams: []*commonpb.KeyValuePair{
				{Key: "anns_field", Value: "sparse"},
				{Key: "topk", Value: limit},
				{Key: "metric_type", Value: "BM25"},
				{Key: "params", Value: "{}"},
			},
		}
	}
	raw := s.rawClient(t)
	res, err := raw.HybridSearch(ctx, &milvuspb.HybridSearchRequest{
		CollectionName:   coll,
		Requests:         []*milvuspb.SearchRequest{sub("dog", "None"), sub("brown fox", "3")},
		RankParams:       []*commonpb.KeyValuePair{{Key: "strategy", Value: "rrf"}, {Key: "params", Value: `{"k": 60}`}, {Key: "limit", Value: "4"}},
		ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
	})
	require.NoError(t, err)
	require.Zero(t, res.GetStatus().GetCode(), res.GetStatus().GetReason())
	got := res.GetResults().GetIds().GetIntId().GetData()
	require.Len(t, got, 4)
	want, _ := bm25Ref(map[int64]string{0: bm25Corpus[0], 1: bm25Corpus[1], 4: bm25Corpus[4], 8: bm25Corpus[8], 11: bm25Corpus[11]}, "dog", 1)
	require.Contains(t, got, want[0])
}
