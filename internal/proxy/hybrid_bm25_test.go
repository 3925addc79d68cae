package proxy

import (
	"context"
	"math"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
)

// A Weighted fusion maps BM25 scores with 2·atan(s)/π (Milvus's
// normalization for BM25), so the best BM25 hit stays first.
func TestWeightedFusionNormalizesBM25(t *testing.T) {
	r := &ranker{weights: []float64{0, 1}, normScore: true, limit: 10}
	got := r.fuse([]subHits{
		{pks: []any{int64(4), int64(2)}, scores: []float32{0.2, 0.5}, metric: plan.MetricL2},
		{pks: []any{int64(2), int64(9), int64(3)}, scores: []float32{2.5, 1.7, 1.1}, metric: plan.MetricBM25},
	})
	var pks []any
	for _, h := range got {
		pks = append(pks, h.pk)
	}
	require.Equal(t, []any{int64(2), int64(9), int64(3), int64(4)}, pks)
	require.InDelta(t, 2*math.Atan(float64(float32(2.5)))/math.Pi, got[0].score, 1e-12)
	require.InDelta(t, 2*math.Atan(float64(float32(1.1)))/math.Pi, got[2].score, 1e-12)
	require.Zero(t, got[3].score)
}

// A sub-search on a BM25 function's output field ran with metric BM25
// whether or not the request named it.
func TestSubSearchMetricOfBM25Output(t *testing.T) {
	col := &catalog.Collection{Schema: &schemapb.CollectionSchema{
		Fields: []*schemapb.FieldSchema{
			{FieldID: 100, Name: "pk", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
			{FieldID: 101, Name: "text", DataType: schemapb.DataType_VarChar},
			{FieldID: 102, Name: "sparse", DataType: schemapb.DataType_SparseFloatVector, IsFunctionOutput: true},
		},
		Functions: []*schemapb.FunctionSchema{{
			Name: "bm25", Type: schemapb.FunctionType_BM25,
			InputFieldIds: []int64{101}, OutputFieldIds: []int64{102},
		}},
	}}
	p := &Proxy{}
	for _, mt := range []string{"BM25", ""} {
		req := &milvuspb.SearchRequest{SearchParams: []*commonpb.KeyValuePair{{Key: "anns_field", Value: "sparse"}, {Key: "metric_type", Value: mt}}}
		m, err := p.subSearchMetric(context.Background(), col, req)
		require.NoError(t, err)
		require.Equal(t, plan.MetricBM25, m, mt)
	}
}
