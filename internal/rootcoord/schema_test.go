package rootcoord

import (
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

func kv(pairs ...string) []*commonpb.KeyValuePair {
	var out []*commonpb.KeyValuePair
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, &commonpb.KeyValuePair{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

func pkField() *schemapb.FieldSchema {
	return &schemapb.FieldSchema{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true}
}

func vecField(dim string) *schemapb.FieldSchema {
	return &schemapb.FieldSchema{Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: kv("dim", dim)}
}

// with returns a valid schema (id, vec) plus extra fields.
func with(extra ...*schemapb.FieldSchema) *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Name: "c", Fields: append([]*schemapb.FieldSchema{pkField(), vecField("4")}, extra...)}
}

func TestPrepareSchemaRejects(t *testing.T) {
	f := func(name string, dt schemapb.DataType, params ...string) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{Name: name, DataType: dt, TypeParams: kv(params...)}
	}
	arr := func(elem schemapb.DataType, params ...string) *schemapb.FieldSchema {
		a := f("arr", schemapb.DataType_Array, params...)
		a.ElementType = elem
		return a
	}
	pkOf := func(dt schemapb.DataType, params ...string) *schemapb.CollectionSchema {
		p := f("pk", dt, params...)
		p.IsPrimaryKey = true
		return &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{p, vecField("4")}}
	}
	many := with()
	for i := 0; len(many.Fields) <= MaxFields; i++ {
		many.Fields = append(many.Fields, f("f"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26)), schemapb.DataType_Int64))
	}
	twoPK := with()
	twoPK.Fields = append(twoPK.Fields, &schemapb.FieldSchema{Name: "id2", DataType: schemapb.DataType_Int64, IsPrimaryKey: true})
	noPK := with()
	noPK.Fields[0].IsPrimaryKey = false
	defaultVec := vecField("4")
	defaultVec.DefaultValue = &schemapb.ValueField{Data: &schemapb.ValueField_LongData{LongData: 10}}
	pkDefault := with()
	pkDefault.Fields[0].DefaultValue = &schemapb.ValueField{Data: &schemapb.ValueField_LongData{LongData: 1}}
	pkNullable := with()
	pkNullable.Fields[0].Nullable = true
	autoNonPK := with(&schemapb.FieldSchema{Name: "n", DataType: schemapb.DataType_Int64, AutoID: true})

	for _, tc := range []struct {
		name   string
		schema *schemapb.CollectionSchema
		msg    string
	}{
		{"empty collection name", &schemapb.CollectionSchema{Fields: with().Fields}, "collection name should not be empty"},
		{"name starts with digit", &schemapb.CollectionSchema{Name: "1c", Fields: with().Fields}, "first character"},
		{"name with dash", &schemapb.CollectionSchema{Name: "a-b", Fields: with().Fields}, "numbers, letters and underscores"},
		{"name too long", &schemapb.CollectionSchema{Name: strings.Repeat("a", MaxNameLength+1), Fields: with().Fields}, "255"},
		{"no fields", &schemapb.CollectionSchema{Name: "c"}, "no fields"},
		{"too many fields", many, "64"},
		{"empty field name", with(f("", schemapb.DataType_Int64)), "field name should not be empty"},
		{"bad field name", with(f("a b", schemapb.DataType_Int64)), "Invalid field name: a b. Field name can only contain numbers, letters, and underscores."},
		{"duplicate field name", with(f("id", schemapb.DataType_Int32)), `duplicated field name "id"`},
		{"no primary key", noPK, "no primary key"},
		{"two primary keys", twoPK, "2 primary key fields"},
		{"no vector", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField()}}, "schema does not contain vector field"},
		{"pk bool", pkOf(schemapb.DataType_Bool), "Int64 or VarChar"},
		{"pk int32", pkOf(schemapb.DataType_Int32), "Int64 or VarChar"},
		{"pk float", pkOf(schemapb.DataType_Float), "Int64 or VarChar"},
		{"pk json", pkOf(schemapb.DataType_JSON), "Int64 or VarChar"},
		{"pk array", pkOf(schemapb.DataType_Array), "Int64 or VarChar"},
		{"pk vector", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
			{Name: "v", DataType: schemapb.DataType_FloatVector, IsPrimaryKey: true, TypeParams: kv("dim", "4")},
		}}, "Int64 or VarChar"},
		{"pk default value", pkDefault, "not support default_value"},
		{"pk nullable", pkNullable, "primary field not support null"},
		{"auto_id on a non-pk field", autoNonPK, `"n": only the primary key`},
		{"varchar without max_length", with(f("s", schemapb.DataType_VarChar)), "max_length should be specified"},
		{"varchar max_length 0", with(f("s", schemapb.DataType_VarChar, "max_length", "0")), "the maximum length specified for the field(s) should be in (0, 65535], but got 0 instead"},
		{"varchar max_length too big", with(f("s", schemapb.DataType_VarChar, "max_length", "65536")), "65535"},
		{"varchar max_length not a number", with(f("s", schemapb.DataType_VarChar, "max_length", "ten")), `"ten"`},
		{"array of json", with(arr(schemapb.DataType_JSON, "max_capacity", "4")), "element type JSON"},
		{"array of arrays", with(arr(schemapb.DataType_Array, "max_capacity", "4")), "element type Array"},
		{"array of varchar without max_length", with(arr(schemapb.DataType_VarChar, "max_capacity", "4")), "max_length should be specified"},
		{"array of varchar bad max_length", with(arr(schemapb.DataType_VarChar, "max_capacity", "4", "max_length", "-1")), "should be in (0, 65535], but got -1 instead"},
		{"array without max_capacity", with(arr(schemapb.DataType_Int64)), "max_capacity should be specified"},
		{"array max_capacity 0", with(arr(schemapb.DataType_Int64, "max_capacity", "0")), "the maximum capacity specified for a Array should be in (0, 4096]"},
		{"array max_capacity too big", with(arr(schemapb.DataType_Int64, "max_capacity", "4097")), "4096"},
		{"vector without dim", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
			pkField(),
			{Name: "vec", DataType: schemapb.DataType_FloatVector},
		}}, "dimension is not defined"},
		{"dim 0", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField("0")}}, "invalid dimension"},
		{"dim negative", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField("-8")}}, "invalid dimension"},
		{"dim too big", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField("32769")}}, "32768"},
		{"dim not a number", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField("x")}}, "invalid dimension"},
		{"vector with a default value", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), defaultVec}}, "type not support default_value"},
		{"binary vector dim not a multiple of 8", with(f("b", schemapb.DataType_BinaryVector, "dim", "12")), "multiple of 8"},
		{"binary vector dim too big", with(f("b", schemapb.DataType_BinaryVector, "dim", "262152")), "262144"},
		{"binary vector without dim", with(f("b", schemapb.DataType_BinaryVector)), "dimension is not defined"},
		{"float16 vector dim too big", with(f("b", schemapb.DataType_Float16Vector, "dim", "32769")), "32768"},
		{"bfloat16 vector dim 0", with(f("b", schemapb.DataType_BFloat16Vector, "dim", "0")), "invalid dimension"},
		{"int8 vector without dim", with(f("b", schemapb.DataType_Int8Vector)), "dimension is not defined"},
		{"binary vector pk", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
			{Name: "b", DataType: schemapb.DataType_BinaryVector, IsPrimaryKey: true, TypeParams: kv("dim", "8")},
		}}, "Int64 or VarChar"},
		{"sparse vector with dim", with(f("b", schemapb.DataType_SparseFloatVector, "dim", "8")), "dim should not be specified"},
		{"type none", with(f("x", schemapb.DataType_None)), "not supported"},
		{"type string", with(f("x", schemapb.DataType_String)), "not supported"},
		{"unknown type number", with(f("x", schemapb.DataType(999))), "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PrepareSchema(tc.schema)
			require.Error(t, err)
			code := errcode.IllegalArgument
			if tc.name == "empty field name" || tc.name == "bad field name" {
				code = errcode.FieldInvalidName // Milvus's code for a bad field name
			}
			require.Equal(t, code, errcode.CodeOf(err))
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestPrepareSchemaAccepts(t *testing.T) {
	str := func(name string) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{Name: name, DataType: schemapb.DataType_VarChar, TypeParams: kv("max_length", "65535")}
	}
	for _, tc := range []struct {
		name    string
		in      *schemapb.CollectionSchema
		ids     map[string]int64
		autoID  bool
		dynamic bool
	}{
		{"minimal", with(), map[string]int64{"id": 100, "vec": 101}, false, false},
		{
			"max dim", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField("32768")}},
			map[string]int64{"id": 100, "vec": 101},
			false, false,
		},
		{
			"dim with spaces", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField(" 8 ")}},
			map[string]int64{"id": 100, "vec": 101},
			false, false,
		},
		{
			"varchar pk and max length", &schemapb.CollectionSchema{Name: "_c1", Fields: []*schemapb.FieldSchema{
				{Name: "pk", DataType: schemapb.DataType_VarChar, IsPrimaryKey: true, TypeParams: kv("max_length", "8")}, vecField("2"), str("s"),
			}},
			map[string]int64{"pk": 100, "vec": 101, "s": 102},
			false, false,
		},
		{
			"schema auto_id marks the pk", &schemapb.CollectionSchema{Name: "c", AutoID: true, Fields: with().Fields},
			map[string]int64{"id": 100, "vec": 101},
			true, false,
		},
		{
			"pk auto_id marks the schema", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
				{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true, AutoID: true}, vecField("2"),
			}},
			map[string]int64{"id": 100, "vec": 101},
			true, false,
		},
		{
			"dynamic field gets the next ID", &schemapb.CollectionSchema{
				Name: "c", EnableDynamicField: true,
				Fields: append(with().Fields, str("s")),
			},
			map[string]int64{"id": 100, "vec": 101, "s": 102, DynamicField: 103},
			false, true,
		},
		{
			"a client $meta field is replaced", &schemapb.CollectionSchema{
				Name: "c", EnableDynamicField: true,
				Fields: []*schemapb.FieldSchema{pkField(), {Name: "$meta", DataType: schemapb.DataType_JSON, IsDynamic: true}, vecField("2")},
			},
			map[string]int64{"id": 100, "vec": 102, DynamicField: 103},
			false, true,
		},
		{
			"every dense vector type", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
				pkField(),
				{Name: "bin", DataType: schemapb.DataType_BinaryVector, TypeParams: kv("dim", "262144")},
				{Name: "f16", DataType: schemapb.DataType_Float16Vector, TypeParams: kv("dim", "32768")},
				{Name: "bf16", DataType: schemapb.DataType_BFloat16Vector, TypeParams: kv("dim", "2")},
				{Name: "i8", DataType: schemapb.DataType_Int8Vector, TypeParams: kv("dim", "2")},
			}},
			map[string]int64{"id": 100, "bin": 101, "f16": 102, "bf16": 103, "i8": 104},
			false, false,
		},
		{
			"every scalar type", with(
				&schemapb.FieldSchema{Name: "b", DataType: schemapb.DataType_Bool},
				&schemapb.FieldSchema{Name: "i8", DataType: schemapb.DataType_Int8},
				&schemapb.FieldSchema{Name: "i16", DataType: schemapb.DataType_Int16},
				&schemapb.FieldSchema{Name: "i32", DataType: schemapb.DataType_Int32, Nullable: true},
				&schemapb.FieldSchema{Name: "f", DataType: schemapb.DataType_Float},
				&schemapb.FieldSchema{Name: "d", DataType: schemapb.DataType_Double},
				&schemapb.FieldSchema{Name: "j", DataType: schemapb.DataType_JSON},
				&schemapb.FieldSchema{
					Name: "a", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_VarChar,
					TypeParams: kv("max_capacity", "4096", "max_length", "3"),
				}),
			map[string]int64{"id": 100, "vec": 101, "b": 102, "i8": 103, "i16": 104, "i32": 105, "f": 106, "d": 107, "j": 108, "a": 109},
			false, false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := PrepareSchema(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.autoID, out.GetAutoID())
			require.Equal(t, tc.dynamic, out.GetEnableDynamicField())
			got := map[string]int64{}
			var sys []string
			for _, f := range out.GetFields() {
				if f.GetFieldID() < 100 {
					sys = append(sys, f.GetName())
					require.Equal(t, schemapb.DataType_Int64, f.GetDataType())
					continue
				}
				got[f.GetName()] = f.GetFieldID()
				if f.GetIsPrimaryKey() {
					require.Equal(t, tc.autoID, f.GetAutoID())
				}
				if f.GetName() == DynamicField {
					require.True(t, f.GetIsDynamic())
					require.Equal(t, schemapb.DataType_JSON, f.GetDataType())
				}
			}
			require.Equal(t, tc.ids, got)
			require.Equal(t, []string{RowIDField, TimestampField}, sys, "system fields come last, in order")
			n := len(out.GetFields())
			require.EqualValues(t, 0, out.GetFields()[n-2].GetFieldID())
			require.EqualValues(t, 1, out.GetFields()[n-1].GetFieldID())
		})
	}
}

// TestValidateName: name limits (255 bytes, allowed characters) for every
// kind, with Milvus's codes and messages.
func TestValidateName(t *testing.T) {
	long := strings.Repeat("x", MaxNameLength)
	for _, tc := range []struct {
		kind, name string
		code       int32 // 0: accepted
		msg        string
	}{
		{"collection", long, 0, ""},
		{"collection", "A_1", 0, ""},
		{"collection", "_", 0, ""},
		{
			"collection", long + "x", errcode.IllegalArgument,
			"Invalid collection name: " + long + "x. the length of a collection name must be less than 255 characters: invalid parameter",
		},
		{"collection", "", errcode.IllegalArgument, "collection name should not be empty: invalid parameter"},
		{
			"collection", "1a", errcode.IllegalArgument,
			"Invalid collection name: 1a. the first character of a collection name must be an underscore or letter: invalid parameter",
		},
		{
			"collection", "a-b", errcode.IllegalArgument,
			"Invalid collection name: a-b. collection name can only contain numbers, letters and underscores: invalid parameter",
		},
		{"alias", long, 0, ""},
		{"alias", long + "x", errcode.IllegalArgument, "the length of a collection alias must be less than 255 characters"},
		{"alias", "é", errcode.IllegalArgument, "Invalid collection alias: é. the first character of a collection alias must be an underscore or letter"},
		{"partition", long, 0, ""},
		{"partition", "1a", 0, ""}, // Milvus accepts a digit first and '-' later in partition names
		{"partition", "p-2024", 0, ""},
		{
			"partition", long + "x", errcode.IllegalArgument,
			"Invalid partition name: " + long + "x. The length of a partition name must be less than 255 characters.",
		},
		{"partition", "", errcode.IllegalArgument, "Invalid partition name: . Partition name should not be empty."},
		{"partition", "-a", errcode.IllegalArgument, "The first character of a partition name must be an underscore or letter."},
		{"partition", "a.b", errcode.IllegalArgument, "Invalid partition name: a.b. Partition name can only contain numbers, letters and underscores."},
		{"field", long, 0, ""},
		{"field", long + "x", errcode.FieldInvalidName, "The length of a field name must be less than 255 characters.: field name invalid[field=" + long + "x]"},
		{"field", "", errcode.FieldInvalidName, "field name should not be empty: field name invalid[field=]"},
		{"field", "9", errcode.FieldInvalidName, "Invalid field name: 9. The first character of a field name must be an underscore or letter."},
		{"field", "like", errcode.FieldInvalidName, "Invalid field name: like. like is keyword in milvus.: field name invalid[field=like]"},
		{"field", "JSON_CONTAINS", errcode.FieldInvalidName, "Invalid field name: JSON_CONTAINS. JSON_CONTAINS is keyword in milvus."},
		{"field", "True", errcode.FieldInvalidName, "Invalid field name: True. True is keyword in milvus."},
		{"field", "random_sample", errcode.FieldInvalidName, "random_sample is keyword in milvus."},
		{"field", "$meta", errcode.FieldInvalidName, "Invalid field name: $meta."},
		{"field", "Like", 0, ""}, // only the casings Milvus lists are keywords
		{"field", "liked", 0, ""},
		{"partition", " ", errcode.IllegalArgument, "Invalid partition name: . Partition name should not be empty."},
		{"database", long, 0, ""},
		{
			"database", long + "x", errcode.DatabaseInvalidName,
			"the length of a database name must be less than 255 characters: invalid database name[database=" + long + "x]",
		},
		{"database", "", errcode.DatabaseInvalidName, "database name couldn't be empty: invalid database name[database=]"},
		{"database", "a b", errcode.DatabaseInvalidName, "database name can only contain numbers, letters and underscores: invalid database name[database=a b]"},
	} {
		t.Run(tc.kind+"/"+tc.name[:min(len(tc.name), 8)], func(t *testing.T) {
			err := catalog.ValidateName(tc.kind, tc.name)
			if tc.code == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, tc.code, errcode.CodeOf(err))
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}
