package rootcoord

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

func TestPrepareSchemaSparse(t *testing.T) {
	sparse := func() *schemapb.FieldSchema {
		return &schemapb.FieldSchema{Name: "sv", DataType: schemapb.DataType_SparseFloatVector}
	}
	// A sparse vector alone is the collection's vector field; with a dense
	// one beside it, both are.
	for _, s := range []*schemapb.CollectionSchema{
		{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), sparse()}},
		with(sparse()),
	} {
		out, err := PrepareSchema(s)
		require.NoError(t, err)
		var found bool
		for _, f := range out.GetFields() {
			if f.GetName() == "sv" {
				found = true
				require.Equal(t, schemapb.DataType_SparseFloatVector, f.GetDataType())
				require.Empty(t, f.GetTypeParams())
			}
		}
		require.True(t, found)
	}
	pk := sparse()
	pk.IsPrimaryKey = true
	withDefault := sparse()
	withDefault.DefaultValue = &schemapb.ValueField{Data: &schemapb.ValueField_FloatData{FloatData: 10}}
	for name, tc := range map[string]struct {
		f   *schemapb.FieldSchema
		msg string
	}{
		"primary key":   {pk, "Int64 or VarChar"},
		"default value": {withDefault, "type not support default_value"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := PrepareSchema(with(tc.f))
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
