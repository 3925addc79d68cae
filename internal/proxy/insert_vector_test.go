package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
)

// TestMissingVectorPayload: a non-nullable vector column without vectors
// (pymilvus's rows of None) gets Milvus's message; a nullable one does not.
func TestMissingVectorPayload(t *testing.T) {
	dim := []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}
	col := &catalog.Collection{Schema: &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "embeddings", DataType: schemapb.DataType_FloatVector, TypeParams: dim},
		{FieldID: 102, Name: "opt", DataType: schemapb.DataType_FloatVector, TypeParams: dim, Nullable: true},
	}}}
	ids := &schemapb.FieldData{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1}}}},
	}}
	empty := func(name string) *schemapb.FieldData {
		return &schemapb.FieldData{
			FieldName: name, Type: schemapb.DataType_FloatVector,
			Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{Dim: 2}},
		}
	}
	_, err := validateGiven(col, []*schemapb.FieldData{ids, empty("embeddings")}, 1, false)
	require.EqualError(t, err, "float vector field 'embeddings' is illegal, array type mismatch: invalid parameter[expected=need float vector][actual=got nil]")
	require.NoError(t, vectorPayloadMissing(col.Schema.GetFields()[2], empty("opt")))
}

// TestDimMaxScoreRatio: the knob is checked against Milvus's range.
func TestDimMaxScoreRatio(t *testing.T) {
	for _, tc := range []struct {
		v  float64
		ok bool
	}{{0.5, true}, {1, true}, {1.3, true}, {0.49, false}, {1.4, false}} {
		err := parseSparseSearchParams(map[string]any{"dim_max_score_ratio": tc.v}, &plan.Search{})
		if tc.ok {
			require.NoError(t, err, "%v", tc.v)
		} else {
			require.ErrorContains(t, err, "should be in range [0.500000, 1.300000]", "%v", tc.v)
		}
	}
}

// TestMetaKeyOutput: $meta["k"] names a dynamic key as an output field,
// unless a static field of that name hides it.
func TestMetaKeyOutput(t *testing.T) {
	for in, want := range map[string]string{`$meta["a"]`: "a", `$meta['b c']`: "b c"} {
		k, ok := metaKey(in)
		require.True(t, ok, in)
		require.Equal(t, want, k)
	}
	for _, in := range []string{`$meta`, `$meta[a]`, `$meta["a']`, `meta["a"]`, `$meta[""]`} {
		_, ok := metaKey(in)
		require.False(t, ok, in)
	}
	col := &catalog.Collection{Schema: &schemapb.CollectionSchema{EnableDynamicField: true, Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "x", DataType: schemapb.DataType_Int64},
		{FieldID: 102, Name: "$meta", DataType: schemapb.DataType_JSON, IsDynamic: true},
	}}}
	o, err := resolveOutput(col, []string{`$meta["k"]`}, false)
	require.NoError(t, err)
	require.Equal(t, []string{"k"}, o.dynKeys)
	o, err = resolveOutput(col, []string{"x", `$meta["x"]`}, false)
	require.NoError(t, err)
	require.Empty(t, o.dynKeys)
	require.Equal(t, []string{"x"}, o.names)
}
