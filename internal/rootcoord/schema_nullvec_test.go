package rootcoord

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestPrepareSchema_NullableVectors(t *testing.T) {
	for _, dt := range []schemapb.DataType{
		schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector, schemapb.DataType_SparseFloatVector,
	} {
		t.Run(dt.String(), func(t *testing.T) {
			f := &schemapb.FieldSchema{Name: "v", DataType: dt, Nullable: true}
			if dt != schemapb.DataType_SparseFloatVector {
				f.TypeParams = kv("dim", "16")
			}
			s, err := PrepareSchema(&schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), f}})
			require.NoError(t, err)
			require.True(t, s.GetFields()[1].GetNullable())
		})
	}
}
