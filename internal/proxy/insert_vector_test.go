package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
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
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1}}}}}}
	empty := func(name string) *schemapb.FieldData {
		return &schemapb.FieldData{FieldName: name, Type: schemapb.DataType_FloatVector,
			Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{Dim: 2}}}
	}
	_, err := validateGiven(col, []*schemapb.FieldData{ids, empty("embeddings")}, 1, false)
	require.EqualError(t, err, "float vector field 'embeddings' is illegal, array type mismatch: invalid parameter[expected=need float vector][actual=got nil]")
	require.NoError(t, vectorPayloadMissing(col.Schema.GetFields()[2], empty("opt")))
}
