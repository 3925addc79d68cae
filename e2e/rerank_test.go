package e2e

import (
	"math"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestDecayRerank searches with Milvus 2.6's decay function-score reranker
// through the Go SDK: every row has the query's vector (IP score 1), so the
// final score is the decay of the row's "ts" alone and the order follows
// |ts − origin| (as in Milvus, the reranker reorders the limit hits the
// search found, so the test asks for all rows); the scores are checked against the documented formulas, the
// input field is fetched without being an output field, and bad parameters
// are refused with Milvus's messages; in a hybrid search the reranker fuses
// the sub-searches (best normalized score × decay).
func TestDecayRerank(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll, n = "decay", 40
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4)).
		WithField(entity.NewField().WithName("ts").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("opt").WithDataType(entity.FieldTypeInt64).WithNullable(true)).
		WithField(entity.NewField().WithName("name").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	ids, ts, names := make([]int64, n), make([]int64, n), make([]string, n)
	vecs := make([][]float32, n)
	for i := range n {
		ids[i], ts[i], names[i] = int64(i), int64(3*i), string(rune('a'+i%4))
		vecs[i] = []float32{1, 0, 0, 0}
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", ids),
		column.NewColumnFloatVector("v", 4, vecs), column.NewColumnInt64("ts", ts), column.NewColumnVarChar("name", names)))
	require.NoError(t, err)
	idx, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", index.NewFlatIndex(entity.IP)))
	require.NoError(t, err)
	require.NoError(t, idx.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	decay := func(field string, params map[string]any) *entity.Function {
		f := entity.NewFunction().WithName("d").WithType(entity.FunctionTypeRerank).WithInputFields(field).
			WithParam("reranker", "decay")
		for k, v := range params {
			f = f.WithParam(k, v)
		}
		return f
	}
	search := func(fn *entity.Function, limit int) (milvusclient.ResultSet, error) {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, limit, []entity.Vector{entity.FloatVector([]float32{1, 0, 0, 0})}).
			WithANNSField("v").WithConsistencyLevel(entity.ClStrong).WithOutputFields("name").WithFunctionReranker(fn))
		if err != nil {
			return milvusclient.ResultSet{}, err
		}
		return rs[0], nil
	}
	const origin, scale, offset, dec = 60.0, 15.0, 3.0, 0.5
	for _, tc := range []struct {
		fn string
		f  func(d float64) float64
	}{
		{"gauss", func(d float64) float64 { return math.Exp(-d * d / (2 * (-scale * scale / (2 * math.Log(dec))))) }},
		{"exp", func(d float64) float64 { return math.Exp(math.Log(dec) / scale * d) }},
		{"linear", func(d float64) float64 { s := scale / (1 - dec); return math.Max(0, (s-d)/s) }},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			rs, err := search(decay("ts", map[string]any{"function": tc.fn, "origin": origin, "scale": scale, "offset": offset, "decay": dec}), n)
			require.NoError(t, err)
			require.Equal(t, n, rs.ResultCount)
			require.Len(t, rs.Fields, 1, "only the asked output field")
			require.Equal(t, "name", rs.Fields[0].Name())
			prev := math.Inf(1)
			for i := range rs.ResultCount {
				id, err := rs.IDs.GetAsInt64(i)
				require.NoError(t, err)
				d := math.Max(0, math.Abs(float64(3*id)-origin)-offset)
				require.InDelta(t, tc.f(d), rs.Scores[i], 1e-5, "id %d", id)
				require.LessOrEqual(t, float64(rs.Scores[i]), prev+1e-6, "scores best first")
				prev = float64(rs.Scores[i])
				if i < 10 {
					require.LessOrEqual(t, math.Abs(float64(3*id)-origin), 15.0, "the ten nearest ts values lead")
				}
			}
			// A scale away from the no-decay zone keeps the fraction decay.
			require.InDelta(t, dec, tc.f(scale), 1e-9)
		})
	}

	t.Run("hybrid", func(t *testing.T) {
		// Two sub-searches that both score every row 1: a key's fused score
		// is its best normalized score (1) times the decay of its ts.
		q := entity.FloatVector([]float32{1, 0, 0, 0})
		fn := decay("ts", map[string]any{"function": "exp", "origin": origin, "scale": scale, "offset": offset})
		rs, err := c.HybridSearch(ctx, milvusclient.NewHybridSearchOption(coll, 5,
			milvusclient.NewAnnRequest("v", n, q), milvusclient.NewAnnRequest("v", n, q)).
			WithConsistencyLevel(entity.ClStrong).WithFunctionRerankers(fn))
		require.NoError(t, err)
		require.Equal(t, 5, rs[0].ResultCount)
		want := func(d float64) float64 { return math.Exp(math.Log(dec) / scale * d) }
		for i := range rs[0].ResultCount {
			id, err := rs[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
			require.InDelta(t, want(math.Max(0, math.Abs(float64(3*id)-origin)-offset)), rs[0].Scores[i], 1e-5, "id %d", id)
		}
		first, err := rs[0].IDs.GetAsInt64(0)
		require.NoError(t, err)
		require.InDelta(t, origin, float64(3*first), offset, "the nearest ts leads")
	})

	t.Run("group_by", func(t *testing.T) {
		// Each name holds 10 rows; a group of 10 holds all of them, so the
		// group of the row nearest the origin (id 20, name "a") leads and
		// each group's rows stay together, best first.
		fn := decay("ts", map[string]any{"function": "gauss", "origin": origin, "scale": scale})
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 4, []entity.Vector{entity.FloatVector([]float32{1, 0, 0, 0})}).
			WithANNSField("v").WithConsistencyLevel(entity.ClStrong).WithGroupByField("name").WithGroupSize(10).
			WithFunctionReranker(fn))
		require.NoError(t, err)
		require.Equal(t, n, rs[0].ResultCount)
		best, err := rs[0].IDs.GetAsInt64(0)
		require.NoError(t, err)
		require.Equal(t, int64(20), best, "ts 60 is the origin")
		for i := 1; i < n; i++ {
			id, err := rs[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
			prev, err := rs[0].IDs.GetAsInt64(i - 1)
			require.NoError(t, err)
			if id%4 == prev%4 {
				require.LessOrEqual(t, rs[0].Scores[i], rs[0].Scores[i-1], "within a group, best first")
			} else {
				require.Zero(t, i%10, "a group's rows are contiguous")
			}
		}
	})

	for _, tc := range []struct {
		name   string
		fn     *entity.Function
		errMsg string
	}{
		{"unknown reranker", decay("ts", map[string]any{"function": "gauss", "origin": 0, "scale": 1}).WithParam("reranker", "nope"), "unsupported rerank function: [nope]"},
		{"unknown function", decay("ts", map[string]any{"function": "cubic", "origin": 0, "scale": 1}), "invalid decay function"},
		{"missing origin", decay("ts", map[string]any{"function": "gauss", "scale": 1}), "decay function lost param: origin"},
		{"bad scale", decay("ts", map[string]any{"function": "gauss", "origin": 0, "scale": "x"}), "param scale:x is not a number"},
		{"zero scale", decay("ts", map[string]any{"function": "gauss", "origin": 0, "scale": 0}), "scale must > 0"},
		{"negative offset", decay("ts", map[string]any{"function": "gauss", "origin": 0, "scale": 1, "offset": -1}), "offset must >= 0"},
		{"decay of 1", decay("ts", map[string]any{"function": "gauss", "origin": 0, "scale": 1, "decay": 1}), "decay must 0 < decay < 1"},
		{"no such field", decay("nope", map[string]any{"function": "gauss", "origin": 0, "scale": 1}), "function input field not found: nope"},
		{"varchar field", decay("name", map[string]any{"function": "gauss", "origin": 0, "scale": 1}), "unsupported input field type:VarChar"},
		{"nullable field", decay("opt", map[string]any{"function": "gauss", "origin": 0, "scale": 1}), "function input field cannot be nullable: field opt"},
		{"two fields", decay("ts", map[string]any{"function": "gauss", "origin": 0, "scale": 1}).WithInputFields("ts", "id"), "only supports single input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := search(tc.fn, 5)
			require.ErrorContains(t, err, tc.errMsg)
		})
	}
}
