package e2e

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestHybridSearch fuses a dense (L2) and a sparse (IP) sub-search with the
// RRF and Weighted rankers through the Go SDK and checks every fused score
// against a fusion of brute-force sub-search results, plus output fields,
// filters, and bad rank parameters.
func TestHybridSearch(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll, n, dim, sub = "hybrid", 300, 4, 20
	schema := sparseSchema(coll).WithField(entity.NewField().WithName("dv").WithDataType(entity.FieldTypeFloatVector).WithDim(dim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	rng := rand.New(rand.NewPCG(5, 5))
	docs := genSparse(0, n, 6, rng)
	dense := make([][]float32, n)
	ids := make([]int64, n)
	tags := make([]int64, n)
	svs := make([]entity.SparseEmbedding, n)
	for i, d := range docs {
		dense[i] = []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
		ids[i], tags[i], svs[i] = d.id, d.tag, embedding(t, d.vec)
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", ids),
		column.NewColumnInt64("tag", tags), column.NewColumnSparseVectors("sv", svs), column.NewColumnFloatVector("dv", dim, dense)))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)

	qd := []float32{0.3, -0.2, 0.1, 0.5}
	qs := docs[11].vec
	byTag := func(i int) bool { return docs[i].tag == 2 }
	// Brute-force sub-search lists: rows best first.
	topRows := func(score func(i int) float64, larger bool, keep func(int) bool) []int {
		var rows []int
		for i := 0; i < n; i++ {
			if (keep == nil || keep(i)) && (!larger || score(i) > 0) {
				rows = append(rows, i)
			}
		}
		sort.SliceStable(rows, func(a, b int) bool {
			if larger {
				return score(rows[a]) > score(rows[b])
			}
			return score(rows[a]) < score(rows[b])
		})
		return rows[:min(sub, len(rows))]
	}
	l2 := func(i int) float64 {
		var s float64
		for j := range qd {
			d := float64(dense[i][j] - qd[j])
			s += d * d
		}
		return s
	}
	dot := func(i int) float64 {
		var s float64
		for k, v := range docs[i].vec {
			s += float64(v) * float64(qs[k])
		}
		return s
	}
	for _, tc := range []struct {
		name     string
		reranker milvusclient.Reranker
		filter   string
		fused    func(dl, sl []int) map[int]float64
	}{
		{"rrf", milvusclient.NewRRFReranker().WithK(30), "", func(dl, sl []int) map[int]float64 {
			out := map[int]float64{}
			for _, l := range [][]int{dl, sl} {
				for r, row := range l {
					out[row] += 1 / (30 + float64(r+1))
				}
			}
			return out
		}},
		{
			"weighted, mixed metrics without norm_score", milvusclient.NewWeightedReranker([]float64{0.4, 0.6}), "tag == 2",
			func(dl, sl []int) map[int]float64 {
				out := map[int]float64{}
				for _, row := range dl {
					out[row] += 0.4 * (1 - 2*math.Atan(l2(row))/math.Pi) // L2 turned larger-is-better
				}
				for _, row := range sl {
					out[row] += 0.6 * dot(row)
				}
				return out
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var keep func(int) bool
			if tc.filter != "" {
				keep = byTag
			}
			reqD := milvusclient.NewAnnRequest("dv", sub, entity.FloatVector(qd)).WithSearchParam("metric_type", "L2")
			reqS := milvusclient.NewAnnRequest("sv", sub, embedding(t, qs))
			if tc.filter != "" {
				reqD, reqS = reqD.WithFilter(tc.filter), reqS.WithFilter(tc.filter)
			}
			rs, err := c.HybridSearch(ctx, milvusclient.NewHybridSearchOption(coll, 10, reqD, reqS).
				WithReranker(tc.reranker).WithOutputFields("tag").WithConsistencyLevel(entity.ClStrong))
			require.NoError(t, err)
			require.Len(t, rs, 1)
			want := tc.fused(topRows(l2, false, keep), topRows(dot, true, keep))
			var scores []float64
			for _, v := range want {
				scores = append(scores, v)
			}
			sort.Sort(sort.Reverse(sort.Float64Slice(scores)))
			require.Equal(t, min(10, len(scores)), rs[0].ResultCount)
			for i := 0; i < rs[0].ResultCount; i++ {
				id, err := rs[0].IDs.GetAsInt64(i)
				require.NoError(t, err)
				require.InDelta(t, want[int(id)], float64(rs[0].Scores[i]), 1e-5, "fused score of id %d", id)
				require.InDelta(t, scores[i], float64(rs[0].Scores[i]), 1e-5, "rank %d", i)
				tag, err := rs[0].GetColumn("tag").GetAsInt64(i)
				require.NoError(t, err)
				require.Equal(t, docs[id].tag, tag)
			}
		})
	}

	reqD := milvusclient.NewAnnRequest("dv", sub, entity.FloatVector(qd))
	reqS := milvusclient.NewAnnRequest("sv", sub, embedding(t, qs))
	_, err = c.HybridSearch(ctx, milvusclient.NewHybridSearchOption(coll, 10, reqD, reqS).
		WithReranker(milvusclient.NewWeightedReranker([]float64{0.5})))
	require.ErrorContains(t, err, "the length of weights param mismatch with ann search requests")
	_, err = c.HybridSearch(ctx, milvusclient.NewHybridSearchOption(coll, 10, reqD, reqS).
		WithReranker(milvusclient.NewRRFReranker().WithK(20000)))
	require.ErrorContains(t, err, "k should be in range (0, 16384)")
	_, err = c.HybridSearch(ctx, milvusclient.NewHybridSearchOption(coll, 10, reqD,
		milvusclient.NewAnnRequest("sv", sub, embedding(t, qs)).WithSearchParam("metric_type", "L2")))
	require.ErrorContains(t, err, "not supported for sparse float vectors")
}
