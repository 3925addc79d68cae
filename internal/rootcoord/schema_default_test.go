package rootcoord

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

func TestDefaultValueChecks(t *testing.T) {
	kv := func(k, v string) []*commonpb.KeyValuePair { return []*commonpb.KeyValuePair{{Key: k, Value: v}} }
	long := func(v int64) *schemapb.ValueField {
		return &schemapb.ValueField{Data: &schemapb.ValueField_LongData{LongData: v}}
	}
	str := func(v string) *schemapb.ValueField {
		return &schemapb.ValueField{Data: &schemapb.ValueField_StringData{StringData: v}}
	}
	schema := func(extra *schemapb.FieldSchema, pkDefault *schemapb.ValueField) *schemapb.CollectionSchema {
		s := &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{
			{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true, DefaultValue: pkDefault},
			{Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: kv("dim", "4")},
		}}
		if extra != nil {
			s.Fields = append(s.Fields, extra)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		s    *schemapb.CollectionSchema
		msg  string
	}{
		{"pk", schema(nil, long(10)), "primary field not support default_value, type:Int64, name:id: invalid parameter"},
		{"vector", schema(&schemapb.FieldSchema{
			Name: "v2", DataType: schemapb.DataType_BinaryVector, TypeParams: kv("dim", "8"),
			DefaultValue: long(10),
		}, nil), "type not support default_value, type:BinaryVector, name:v2"},
		{
			"json", schema(&schemapb.FieldSchema{Name: "j", DataType: schemapb.DataType_JSON, DefaultValue: long(10)}, nil),
			"type not support default_value, type:JSON",
		},
		{"array", schema(&schemapb.FieldSchema{
			Name: "a", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int64,
			TypeParams: kv("max_capacity", "4"), DefaultValue: long(10),
		}, nil), "type not support default_value, type:Array"},
		{
			"int8 string", schema(&schemapb.FieldSchema{Name: "i8", DataType: schemapb.DataType_Int8, DefaultValue: str("abc")}, nil),
			"type (Int8) of field (i8) is not equal to the type(DataType_VarChar) of default_value",
		},
		{
			"float bool", schema(&schemapb.FieldSchema{
				Name: "f", DataType: schemapb.DataType_Float,
				DefaultValue: &schemapb.ValueField{Data: &schemapb.ValueField_BoolData{BoolData: false}},
			}, nil),
			"type (Float) of field (f) is not equal to the type(DataType_Bool) of default_value",
		},
		{
			"int8 range", schema(&schemapb.FieldSchema{
				Name: "i8", DataType: schemapb.DataType_Int8,
				DefaultValue: &schemapb.ValueField{Data: &schemapb.ValueField_IntData{IntData: 200}},
			}, nil),
			"default value out of range",
		},
		{
			"varchar length", schema(&schemapb.FieldSchema{
				Name: "s", DataType: schemapb.DataType_VarChar, TypeParams: kv("max_length", "2"),
				DefaultValue: str("abc"),
			}, nil),
			"the length (3) of string exceeds max length (2): invalid parameter[expected=valid length string][actual=string length exceeds max length]",
		},
		{"partition key nullable", schema(&schemapb.FieldSchema{
			Name: "pkey", DataType: schemapb.DataType_Int64, IsPartitionKey: true,
			Nullable: true,
		}, nil), "partition key field not support nullable: invalid parameter"},
		{
			"timestamptz long", schema(&schemapb.FieldSchema{Name: "ts", DataType: schemapb.DataType_Timestamptz, DefaultValue: long(10)}, nil),
			"type (Timestamptz) of field (ts) is not equal to the type(DataType_Int64) of default_value: invalid parameter",
		},
	} {
		_, err := PrepareSchema(tc.s)
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.msg, tc.name)
		require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err), tc.name)
	}
	ok := schema(&schemapb.FieldSchema{Name: "ts", DataType: schemapb.DataType_Timestamptz, DefaultValue: str("2025-01-01T00:00:00")}, nil)
	out, err := PrepareSchema(ok)
	require.NoError(t, err)
	require.NoError(t, resolveTimestamptzDefaults(out, map[string]string{"timezone": "Asia/Shanghai"}))
	require.Equal(t, int64(1735660800000000), out.GetFields()[2].GetDefaultValue().GetTimestamptzData(), "2024-12-31T16:00:00Z")
	bad := schema(&schemapb.FieldSchema{Name: "ts", DataType: schemapb.DataType_Timestamptz, DefaultValue: str("timestamp")}, nil)
	out, err = PrepareSchema(bad)
	require.NoError(t, err)
	err = resolveTimestamptzDefaults(out, nil)
	require.EqualError(t, err, "invalid timestamp string: 'timestamp'. Does not match any known format")
	require.Error(t, checkTimezoneProps(map[string]string{"timezone": "Mars/Olympus"}))
	require.NoError(t, checkTimezoneProps(map[string]string{"timezone": "America/New_York"}))
	require.Equal(t, map[string]string{"timezone": "UTC"}, inheritTimezone(map[string]string{"timezone": "UTC"}, map[string]string{"timezone": "Asia/Shanghai"}))
	require.Equal(t, map[string]string{"timezone": "Asia/Shanghai"}, inheritTimezone(nil, map[string]string{"timezone": "Asia/Shanghai"}))
}
