package e2e

import (
	"fmt"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// quantIndex is a quantized HNSW index definition through the Go SDK's
// generic index (the SDK has no HNSW_SQ or HNSW_PQ constructor).
func quantIndex(it string, kv ...string) index.Index {
	params := map[string]string{"index_type": it, "metric_type": "L2", "M": "16", "efConstruction": "100"}
	for i := 0; i < len(kv); i += 2 {
		params[kv[i]] = kv[i+1]
	}
	return index.NewGenericIndex("", params)
}

// TestQuantizedIndexPipeline builds HNSW_SQ, HNSW_PQ and IVF_RABITQ, with
// and without a refine store, over a flushed segment through the Go SDK: the file is
// written under the type's file key, the collection loads, and recall@10
// against brute force (3,000 uniform random 8-d rows, 20 queries, ef 64,
// nprobe 16 = every list) clears the encoding's floor. With a refine store, refine_k 4 re-ranks
// with the refine vectors, which must lift PQ's recall; the index still
// answers the same after a restart (the file loads back).
func TestQuantizedIndexPipeline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		idx     index.Index
		floor   float64 // at ef 64, refine_k 1
		refined float64 // at ef 64, refine_k 4 (0: no refine store)
		restart bool
	}{
		{"HNSW_SQ", quantIndex("HNSW_SQ", "sq_type", "SQ8"), 0.9, 0, true},
		{"HNSW_SQ", quantIndex("HNSW_SQ", "sq_type", "BF16", "refine", "true", "refine_type", "FP32"), 0.9, 0.98, false},
		{"HNSW_PQ", quantIndex("HNSW_PQ", "m", "4", "nbits", "8"), 0.5, 0, false},
		{"HNSW_PQ", quantIndex("HNSW_PQ", "m", "4", "nbits", "8", "refine", "true", "refine_type", "SQ8"), 0.5, 0.9, true},
		// 8-d uniform rows keep 8 bits each, one byte of 32: RaBitQ's worst
		// case (measured 0.265, 0.71 re-ranking 40 candidates).
		{"IVF_RABITQ", index.NewIvfRabitQIndex(entity.L2, 16), 0.2, 0, false},
		{"IVF_RABITQ", quantIndex("IVF_RABITQ", "nlist", "16", "refine", "true", "refine_type", "FP32"), 0.2, 0.65, true},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.name, tc.idx.Params()["refine_type"]), func(t *testing.T) {
			ctx := ctxT(t)
			m := buildIndexedMovies(ctx, t, tc.name, tc.idx)
			c, coll, queries := m.c, m.coll, m.queries
			var err error
			recall := func(params string) float64 { return m.recall(ctx, t, params) }
			plain, refined := recall(`{"ef": 64, "nprobe": 16}`), recall(`{"ef": 64, "nprobe": 16, "refine_k": 4}`)
			t.Logf("%s %v recall@10 ef=64: %.3f, refine_k=4: %.3f", tc.name, tc.idx.Params(), plain, refined)
			require.GreaterOrEqual(t, plain, tc.floor)
			if tc.refined > 0 {
				require.GreaterOrEqual(t, refined, tc.refined)
				require.GreaterOrEqual(t, refined, plain)
			} else {
				require.InDelta(t, plain, refined, 1e-9, "refine_k does nothing without a refine store")
			}

			q := entity.FloatVector(queries[0])
			for p, want := range map[string]string{
				`{"refine_k": 0}`:       "Out of range in json",
				`{"refine_k": true}`:    "Type conflict in json",
				`{"refine_k": ""}`:      "invalid float value",
				`{"ef": 5}`:             "ef(5) should be larger than k(10)",
				`{"rbq_bits_query": 9}`: "Out of range in json: param 'rbq_bits_query' (9) should be in range [0, 8]",
			} {
				_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{q}).WithSearchParam("params", p))
				require.ErrorContains(t, err, want, p)
			}
			// A range search runs over the index too.
			rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{q}).
				WithConsistencyLevel(entity.ClStrong).WithSearchParam("params", `{"ef": 64, "radius": 0.5, "range_filter": 0}`))
			require.NoError(t, err)
			for i := range rs[0].ResultCount {
				require.LessOrEqual(t, rs[0].Scores[i], float32(0.5))
			}

			if tc.restart {
				m.restart(t)
				require.InDelta(t, refined, recall(`{"ef": 64, "nprobe": 16, "refine_k": 4}`), 1e-9)
			}
		})
	}
}

// TestQuantizedIndexParams: CreateIndex rejects HNSW_SQ, HNSW_PQ and
// IVF_RABITQ parameters as Milvus does, before anything is built.
func TestQuantizedIndexParams(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "quantparams"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	for _, tc := range []struct {
		idx index.Index
		err string
	}{
		{quantIndex("HNSW_SQ", "sq_type", "FP32"), "invalid scalar quantizer type"},
		{quantIndex("HNSW_SQ", "refine", "test"), "should be a boolean"},
		{quantIndex("HNSW_SQ", "refine_type", "INT8"), "invalid refine type : INT8, optional types are [sq4u, sq6, sq8, fp16, bf16, fp32, flat]"},
		{quantIndex("HNSW_SQ", "M", "2049"), "param 'M' (2049) should be in range [2, 2048]"},
		{quantIndex("HNSW_PQ", "m", "3"), "not a multiple of m(3)"},
		{quantIndex("HNSW_PQ", "m", "4", "nbits", "17"), "param 'nbits' (17) should be in range [1, 16]"},
		{quantIndex("IVF_RABITQ", "nlist", "65537"), "param 'nlist' (65537) should be in range [1, 65536]"},
		{quantIndex("IVF_RABITQ", "refine_type", "PQ"), "invalid refine type : PQ, optional types are [sq6, sq8, fp16, bf16, fp32, flat]"},
	} {
		_, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", tc.idx))
		require.ErrorContains(t, err, tc.err)
	}
}
