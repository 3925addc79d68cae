package rootcoord

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

// clipsStruct is a struct array field as pymilvus sends it: scalar
// sub-fields as Arrays, vector ones as ArrayOfVector, each with the
// struct's max_capacity.
func clipsStruct(subs ...*schemapb.FieldSchema) *schemapb.StructArrayFieldSchema {
	if subs == nil {
		subs = []*schemapb.FieldSchema{
			{
				Name: "label", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_VarChar,
				TypeParams: kv("max_length", "64", "max_capacity", "10"),
			},
			{
				Name: "emb", DataType: schemapb.DataType_ArrayOfVector, ElementType: schemapb.DataType_FloatVector,
				TypeParams: kv("dim", "4", "max_capacity", "10"),
			},
		}
	}
	return &schemapb.StructArrayFieldSchema{Name: "clips", Fields: subs}
}

func TestPrepareSchemaStructArray(t *testing.T) {
	in := with()
	in.EnableDynamicField = true
	in.StructArrayFields = []*schemapb.StructArrayFieldSchema{clipsStruct()}
	out, err := PrepareSchema(in)
	require.NoError(t, err)

	// id 100, vec 101, $meta 102, then the struct 103 and its sub-fields 104, 105.
	require.Len(t, out.GetStructArrayFields(), 1)
	sa := out.GetStructArrayFields()[0]
	require.Equal(t, int64(103), sa.GetFieldID())
	require.Equal(t, "clips", sa.GetName())
	require.Equal(t, []string{"label", "emb"}, []string{sa.GetFields()[0].GetName(), sa.GetFields()[1].GetName()})
	require.Equal(t, []int64{104, 105}, []int64{sa.GetFields()[0].GetFieldID(), sa.GetFields()[1].GetFieldID()})

	byName := map[string]*schemapb.FieldSchema{}
	for _, f := range out.GetFields() {
		byName[f.GetName()] = f
	}
	require.Equal(t, int64(102), byName[DynamicField].GetFieldID())
	require.Equal(t, int64(104), byName["clips[label]"].GetFieldID())
	require.Equal(t, schemapb.DataType_Array, byName["clips[label]"].GetDataType())
	require.Equal(t, int64(105), byName["clips[emb]"].GetFieldID())
	require.Equal(t, schemapb.DataType_ArrayOfVector, byName["clips[emb]"].GetDataType())
}

func TestPrepareSchemaStructArrayRejects(t *testing.T) {
	vec := func(et schemapb.DataType) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{
			Name: "v", DataType: schemapb.DataType_ArrayOfVector, ElementType: et,
			TypeParams: kv("dim", "8", "max_capacity", "10"),
		}
	}
	for _, tc := range []struct {
		name string
		sa   *schemapb.StructArrayFieldSchema
		code int32
		msg  string
	}{
		{"binary vector", clipsStruct(vec(schemapb.DataType_BinaryVector)), codeStructError, "now only float vector is supported"},
		{"json", clipsStruct(&schemapb.FieldSchema{
			Name: "j", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_JSON,
			TypeParams: kv("max_capacity", "10"),
		}), codeStructError, "element type JSON is not supported"},
		{"no capacity", clipsStruct(&schemapb.FieldSchema{
			Name: "i", DataType: schemapb.DataType_Array,
			ElementType: schemapb.DataType_Int64,
		}), errcode.IllegalArgument, "max_capacity"},
		{"capacity too large", clipsStruct(&schemapb.FieldSchema{
			Name: "i", DataType: schemapb.DataType_Array,
			ElementType: schemapb.DataType_Int64, TypeParams: kv("max_capacity", "5000"),
		}), errcode.IllegalArgument, "(0, 4096]"},
		{"nullable", clipsStruct(&schemapb.FieldSchema{
			Name: "i", DataType: schemapb.DataType_Array, Nullable: true,
			ElementType: schemapb.DataType_Int64, TypeParams: kv("max_capacity", "5"),
		}), codeStructError, "nullable"},
		{
			"duplicate sub-field", clipsStruct(vec(schemapb.DataType_FloatVector), vec(schemapb.DataType_FloatVector)),
			errcode.IllegalArgument, "duplicated",
		},
		{"no sub-fields", &schemapb.StructArrayFieldSchema{Name: "clips"}, codeStructError, "no sub-fields"},
		{
			"name clash", &schemapb.StructArrayFieldSchema{Name: "vec", Fields: []*schemapb.FieldSchema{vec(schemapb.DataType_FloatVector)}},
			errcode.IllegalArgument, "duplicated field name",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := with()
			in.StructArrayFields = []*schemapb.StructArrayFieldSchema{tc.sa}
			_, err := PrepareSchema(in)
			require.Error(t, err)
			require.Equal(t, tc.code, errcode.CodeOf(err))
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}
