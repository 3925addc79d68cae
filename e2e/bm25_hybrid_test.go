package e2e

import (
	"math"
	"sort"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestBM25HybridWeighted fuses a dense (L2) and a full-text (BM25)
// sub-search with Weighted rerankers, as LangChain and LlamaIndex hybrid
// stores do, and checks the fused scores against Milvus's rule applied
// here to each sub-search's own results. The Go SDK sends no norm_score,
// so with mixed metrics only the distance is mapped (1−2·atan(d)/π) and
// BM25 counts as the similarity it is: Σ weight × score, and BM25's weight
// alone keeps BM25's order. (pymilvus's norm_score=True path, BM25 mapped
// 2·atan(s)/π, is TestWeightedFusionNormalizesBM25 and the framework suites.)
func TestBM25HybridWeighted(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "bm25hybrid"
	schema := bm25Schema(coll).WithField(entity.NewField().WithName("dense").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithIndexOptions(
		milvusclient.NewCreateIndexOption(coll, "sparse", index.NewSparseInvertedIndex(entity.BM25, 0)),
		milvusclient.NewCreateIndexOption(coll, "dense", index.NewFlatIndex(entity.L2)))))
	n := len(bm25Corpus)
	ids := make([]int64, n)
	dense := make([][]float32, n)
	docs := map[int64]string{}
	for i := range ids {
		ids[i] = int64(i)
		dense[i] = []float32{float32(i), float32(n - i)}
		docs[int64(i)] = bm25Corpus[i]
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", ids),
		column.NewColumnVarChar("text", bm25Corpus), column.NewColumnFloatVector("dense", 2, dense)))
	require.NoError(t, err)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	const q = "brown fox dog"
	qd := []float32{float32(n - 2), 2} // nearest: the empty text, which no query matches
	bmIDs, bmScores := bm25Ref(docs, q, n)
	require.Greater(t, len(bmIDs), 3)
	require.NotEqual(t, int64(n-2), bmIDs[0]) // the two sides disagree on the best doc

	fused := func(wd, ws float64) map[int64]float64 {
		out := map[int64]float64{}
		for id := range docs {
			d := 0.0
			for j := range qd {
				d += float64((dense[id][j] - qd[j]) * (dense[id][j] - qd[j]))
			}
			out[id] = wd * (1 - 2*math.Atan(d)/math.Pi)
		}
		for id, s := range bmScores {
			out[id] += ws * s
		}
		return out
	}
	for _, w := range [][2]float64{{0, 1}, {0.3, 0.7}, {1, 0}} {
		reqD := milvusclient.NewAnnRequest("dense", n, entity.FloatVector(qd))
		// metric_type named as the frameworks name it (the index's metric otherwise).
		reqS := milvusclient.NewAnnRequest("sparse", n, entity.Text(q)).WithSearchParam("metric_type", "BM25")
		rs, err := c.HybridSearch(ctx, milvusclient.NewHybridSearchOption(coll, n, reqD, reqS).
			WithReranker(milvusclient.NewWeightedReranker([]float64{w[0], w[1]})).WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, "weights %v", w)
		want := fused(w[0], w[1])
		var scores []float64
		for _, v := range want {
			scores = append(scores, v)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(scores)))
		require.Equal(t, n, rs[0].ResultCount, "weights %v", w)
		var got []int64
		for i := 0; i < rs[0].ResultCount; i++ {
			id, err := rs[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
			got = append(got, id)
			require.InDelta(t, want[id], float64(rs[0].Scores[i]), 1e-5, "weights %v: id %d", w, id)
			require.InDelta(t, scores[i], float64(rs[0].Scores[i]), 1e-5, "weights %v: rank %d", w, i)
		}
		if w[0] == 0 {
			require.Equal(t, bmIDs, got[:len(bmIDs)], "BM25's weight alone keeps BM25's order")
		}
	}
}
