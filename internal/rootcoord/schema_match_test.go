package rootcoord

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

func TestPrepareSchemaMatch(t *testing.T) {
	field := func(dt schemapb.DataType, kv ...string) *schemapb.FieldSchema {
		f := &schemapb.FieldSchema{Name: "text", DataType: dt}
		if dt == schemapb.DataType_VarChar {
			f.TypeParams = append(f.TypeParams, &commonpb.KeyValuePair{Key: "max_length", Value: "256"})
		}
		for i := 0; i < len(kv); i += 2 {
			f.TypeParams = append(f.TypeParams, &commonpb.KeyValuePair{Key: kv[i], Value: kv[i+1]})
		}
		return f
	}
	for name, f := range map[string]*schemapb.FieldSchema{
		"match":          field(schemapb.DataType_VarChar, "enable_analyzer", "true", "enable_match", "true"),
		"pymilvus bools": field(schemapb.DataType_VarChar, "enable_analyzer", "True", "enable_match", "True"),
		"match off":      field(schemapb.DataType_VarChar, "enable_match", "false"),
		"analyzer only":  field(schemapb.DataType_VarChar, "enable_analyzer", "true"),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := PrepareSchema(with(f))
			require.NoError(t, err)
			for _, g := range out.GetFields() {
				if g.GetName() == "text" {
					require.Equal(t, f.GetTypeParams(), g.GetTypeParams(), "the type params are kept for the filter")
				}
			}
		})
	}
	for name, tc := range map[string]struct {
		f   *schemapb.FieldSchema
		msg string
	}{
		"no analyzer":    {field(schemapb.DataType_VarChar, "enable_match", "true"), "field text is set to enable match or bm25 function but not enable analyzer"},
		"analyzer false": {field(schemapb.DataType_VarChar, "enable_analyzer", "false", "enable_match", "true"), "not enable analyzer"},
		"not varchar":    {field(schemapb.DataType_Int64, "enable_analyzer", "true", "enable_match", "true"), "enable_match is only supported on VarChar fields"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := PrepareSchema(with(tc.f))
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
