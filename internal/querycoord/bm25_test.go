package querycoord_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querycoord"
	"github.com/strata-db/strata/internal/stacktest"
)

// words make the test documents: document k holds words chosen by k, so
// that terms are spread unevenly over the two shards.
var words = []string{"fox", "dog", "cat", "bird", "fish", "brown", "lazy", "quick", "red", "blue", "green", "jumps"}

// document is the text of document k.
func document(k int64) string {
	text := ""
	for i, w := range words {
		if (k+int64(i))%(int64(i)%4+2) == 0 || (k%11 == int64(i)) {
			text += w + " "
		}
	}
	for range k % 5 {
		text += words[k%int64(len(words))] + " "
	}
	return text + "end"
}

// TestFullTextScoresAcrossNodes: a full-text (BM25) search of a
// collection whose two shards are led by two nodes scores every hit as
// one node holding both shards does (to 1e-5), through the coordinator and
// through a router: the nodes weigh the terms by their summed statistics.
func TestFullTextScoresAcrossNodes(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	const docs = "docs"
	schema, err := proto.Marshal(&schemapb.CollectionSchema{
		Name: docs,
		Fields: []*schemapb.FieldSchema{
			{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
			{Name: "text", DataType: schemapb.DataType_VarChar, TypeParams: stacktest.KV("max_length", "500", "enable_analyzer", "true")},
			{Name: "sparse", DataType: schemapb.DataType_SparseFloatVector, IsFunctionOutput: true},
		},
		Functions: []*schemapb.FunctionSchema{{
			Name: "bm25", Type: schemapb.FunctionType_BM25, InputFieldNames: []string{"text"}, OutputFieldNames: []string{"sparse"},
		}},
	})
	require.NoError(t, err)
	st, err := c.s.Proxy.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: docs, Schema: schema, ShardsNum: 2})
	ok(t, st, err)
	insert := func(from, to int64) {
		var ids []int64
		var texts []string
		for k := from; k < to; k++ {
			ids, texts = append(ids, k), append(texts, document(k))
		}
		resp, err := c.s.Proxy.Insert(ctx, &milvuspb.InsertRequest{CollectionName: docs, NumRows: uint32(to - from), FieldsData: []*schemapb.FieldData{
			{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
				Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: ids}},
			}}},
			{FieldName: "text", Type: schemapb.DataType_VarChar, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
				Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: texts}},
			}}},
		}})
		ok(t, resp.GetStatus(), err)
	}
	insert(0, 150)
	col, err := c.s.Root.Collection("", docs)
	require.NoError(t, err)
	ids, ts, err := c.s.Data.Flush(ctx, col.ID, col.VChannels)
	require.NoError(t, err)
	c.s.RunDataNode(c.s.NewDataNode(), func() bool { return c.s.FlushState(ids, col.VChannels, ts) })
	insert(150, 230) // growing
	del, err := c.s.Proxy.Delete(ctx, &milvuspb.DeleteRequest{CollectionName: docs, Expr: "id in [3, 7, 160]"})
	ok(t, del.GetStatus(), err)
	st, err = c.s.Proxy.CreateIndex(ctx, &milvuspb.CreateIndexRequest{
		CollectionName: docs, FieldName: "sparse", IndexName: "sparse",
		ExtraParams: stacktest.KV("index_type", "SPARSE_INVERTED_INDEX", "metric_type", "BM25", "params", `{"bm25_k1": 1.2, "bm25_b": 0.75}`),
	})
	ok(t, st, err)
	st, err = c.s.Proxy.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{CollectionName: docs})
	ok(t, st, err)

	a, b := c.addLocal(), c.addRemote()
	st, err = c.px.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{CollectionName: docs})
	ok(t, st, err)
	leaders := c.placed(col.ID)[0].Leaders
	require.ElementsMatch(t, []int64{a, b}, []int64{leaders[col.VChannels[0]], leaders[col.VChannels[1]]}, "one shard per node")
	src, _ := c.serveLeaders()
	_, rpx := c.newRouter(src, querycoord.RouterDefaults())

	search := func(text string, topK int, filter string) *milvuspb.SearchRequest {
		pg, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{{
			Tag: "$0", Type: commonpb.PlaceholderType_VarChar, Values: [][]byte{[]byte(text)},
		}}})
		require.NoError(t, err)
		return &milvuspb.SearchRequest{
			CollectionName: docs, Dsl: filter, DslType: commonpb.DslType_BoolExprV1, ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
			SearchParams: stacktest.KV("anns_field", "sparse", "metric_type", "BM25", "topk", fmt.Sprint(topK), "params", `{}`),
			SearchInput:  &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: pg},
		}
	}
	for _, q := range []struct {
		text, filter string
		topK         int
	}{
		{"fox", "", 10},
		{"quick brown fox jumps", "", 20},
		{"lazy dog and blue bird", "id > 40", 15},
		{"green fish red cat", "", 100},
	} {
		want, err := c.s.Proxy.Search(ctx, search(q.text, q.topK, q.filter))
		require.NoError(t, err)
		require.Zero(t, want.GetStatus().GetCode(), want.GetStatus().GetReason())
		require.NotEmpty(t, want.GetResults().GetScores(), q.text)
		// Every document's score on one node (hits of equal score may be
		// cut at TopK in another order).
		all, err := c.s.Proxy.Search(ctx, search(q.text, 1000, q.filter))
		require.NoError(t, err)
		score := map[int64]float32{}
		for i, id := range all.GetResults().GetIds().GetIntId().GetData() {
			score[id] = all.GetResults().GetScores()[i]
		}
		for name, px := range map[string]*proxy.Proxy{"coordinator": c.px, "router": rpx} {
			got, err := px.Search(ctx, search(q.text, q.topK, q.filter))
			require.NoError(t, err)
			require.Zero(t, got.GetStatus().GetCode(), got.GetStatus().GetReason())
			require.InDeltaSlice(t, want.GetResults().GetScores(), got.GetResults().GetScores(), 1e-5, "%s %q", name, q.text)
			for i, id := range got.GetResults().GetIds().GetIntId().GetData() {
				want, ok := score[id]
				require.True(t, ok, "%s %q: hit %d is no hit on one node", name, q.text, id)
				require.InDelta(t, want, got.GetResults().GetScores()[i], 1e-5, "%s %q: hit %d", name, q.text, id)
			}
		}
	}
}
