package rootcoord

import (
	"context"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/wal"
)

func varcharField(name string, maxLen string) *schemapb.FieldSchema {
	f := &schemapb.FieldSchema{Name: name, DataType: schemapb.DataType_VarChar, Nullable: true}
	if maxLen != "" {
		f.TypeParams = []*commonpb.KeyValuePair{{Key: "max_length", Value: maxLen}}
	}
	return f
}

func TestAddField(t *testing.T) {
	e, c := onPChannels(t, 2)
	ctx := context.Background()
	s := schemaNamed("a", "4")
	s.EnableDynamicField = true
	require.NoError(t, c.CreateCollection(ctx, "", s, 1, commonpb.ConsistencyLevel_Bounded, nil))
	before, err := c.Collection("", "a")
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		f    *schemapb.FieldSchema
		code int32
		msg  string
	}{
		{
			"not nullable", &schemapb.FieldSchema{Name: "n", DataType: schemapb.DataType_Int64}, errcode.IllegalArgument,
			"added field must be nullable, please check it, field name = n: invalid parameter",
		},
		{
			"partition key", &schemapb.FieldSchema{Name: "p", DataType: schemapb.DataType_Int64, Nullable: true, IsPartitionKey: true},
			errcode.IllegalArgument, "not support to add partition key field, field name  = p",
		},
		{
			"primary key", &schemapb.FieldSchema{Name: "k", DataType: schemapb.DataType_Int64, Nullable: true, IsPrimaryKey: true},
			errcode.IllegalArgument, "not support to add primary key field",
		},
		{
			"duplicate", &schemapb.FieldSchema{Name: "id", DataType: schemapb.DataType_Int64, Nullable: true},
			errcode.IllegalArgument, "duplicate field name: id: invalid parameter",
		},
		{
			"no max_length", varcharField("s", ""), errcode.IllegalArgument,
			"type param(max_length) should be specified for the field(s) of collection a",
		},
		{
			"max_length too big", varcharField("s", "65536"), errcode.IllegalArgument,
			"the maximum length specified for the field(s) should be in (0, 65535], but got 65536 instead: invalid parameter",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.AddField(ctx, "", "a", tc.f)
			require.Equal(t, tc.code, errcode.CodeOf(err), err)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	same, err := c.Collection("", "a")
	require.NoError(t, err)
	require.True(t, proto.Equal(before.Schema, same.Schema), "a refused field changes nothing")

	col, err := c.AddField(ctx, "", "a", varcharField("s", "8"))
	require.NoError(t, err)
	require.Greater(t, col.SchemaVersionTS, before.SchemaVersionTS)
	var names []string
	var maxID int64
	for _, f := range before.Schema.GetFields() {
		maxID = max(maxID, f.GetFieldID())
	}
	for _, f := range col.Schema.GetFields() {
		names = append(names, f.GetName())
		if f.GetName() == "s" {
			require.Equal(t, maxID+1, f.GetFieldID(), "the next ID after $meta")
			require.True(t, f.GetNullable())
		}
	}
	require.Equal(t, []string{"id", "vec", "s", DynamicField, RowIDField, TimestampField}, names)
	msgs := e.messages(t, col.PChannels[0])
	last := msgs[len(msgs)-1].Message
	require.Equal(t, wal.TypeSchemaChange, last.Type)
	announced := &schemapb.CollectionSchema{}
	require.NoError(t, proto.Unmarshal(last.Payload, announced))
	require.True(t, proto.Equal(col.Schema, announced))

	// The change is durable: a new coordinator over the same store has it.
	c2 := e.core(t, c.cfg)
	got, err := c2.Collection("", "a")
	require.NoError(t, err)
	require.True(t, proto.Equal(col.Schema, got.Schema))
	require.Equal(t, col.SchemaVersionTS, got.SchemaVersionTS)
}

// TestAddNullableVectorField: a vector field may be added when it is
// nullable (rows written before it read as null vectors), as in Milvus 2.6.
func TestAddNullableVectorField(t *testing.T) {
	e := newEnv(t, t.TempDir())
	c := e.core(t, Defaults())
	ctx := context.Background()
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("a", "4"), 1, commonpb.ConsistencyLevel_Bounded, nil))
	vec := func(nullable bool) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{
			Name: "v2", DataType: schemapb.DataType_FloatVector, Nullable: nullable,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "4"}},
		}
	}
	_, err := c.AddField(ctx, "", "a", vec(false))
	require.ErrorContains(t, err, "added field must be nullable")
	col, err := c.AddField(ctx, "", "a", vec(true))
	require.NoError(t, err)
	require.NotNil(t, col.Field("v2"))
}

func TestAlterField(t *testing.T) {
	e := newEnv(t, t.TempDir())
	c := e.core(t, Defaults())
	ctx := context.Background()
	s := schemaNamed("a", "4")
	s.Fields = append(s.Fields, &schemapb.FieldSchema{
		Name: "s", DataType: schemapb.DataType_VarChar,
		TypeParams: []*commonpb.KeyValuePair{{Key: "max_length", Value: "16"}},
	})
	require.NoError(t, c.CreateCollection(ctx, "", s, 1, commonpb.ConsistencyLevel_Bounded, nil))

	require.NoError(t, c.AlterField(ctx, "", "a", "s", map[string]string{
		"max_length": "8", "mmap.enabled": "True",
		"field.description": "d",
	}, nil, false))
	col, err := c.Collection("", "a")
	require.NoError(t, err)
	f := col.Field("s")
	require.Equal(t, "d", f.GetDescription())
	v, _ := typeParam(f, "max_length")
	require.Equal(t, "8", v)
	v, _ = typeParam(f, "mmap.enabled")
	require.Equal(t, "True", v)
	require.NoError(t, c.AlterField(ctx, "", "a", "s", nil, []string{"mmap.enabled"}, false))
	col, err = c.Collection("", "a")
	require.NoError(t, err)
	_, ok := typeParam(col.Field("s"), "mmap.enabled")
	require.False(t, ok)

	for _, tc := range []struct {
		field, key, value string
		loaded            bool
		msg               string
	}{
		{"vec", "max_length", "8", false, "can not modify the maxlength for non-string types"},
		{"s", "nullable", "true", false, "nullable does not allow update in collection field param"},
		{"s", "mmap.enabled", "true", true, "can not alter collection field properties if collection loaded"},
		{"s", "max_length", "70000", false, "should be in (0, 65535]"},
		{"nope", "max_length", "8", false, "field nope does not exist in collection"},
	} {
		err := c.AlterField(ctx, "", "a", tc.field, map[string]string{tc.key: tc.value}, nil, tc.loaded)
		require.ErrorContains(t, err, tc.msg)
	}
	// A loaded collection may still change a max_length.
	require.NoError(t, c.AlterField(ctx, "", "a", "s", map[string]string{"max_length": "32"}, nil, true))
}

// TestAddTimestamptzFieldDefault: an added Timestamptz field's ISO default
// is stored as microseconds (read in the collection's time zone when it
// has no offset), and a default that is no timestamp is refused with
// Milvus's message.
func TestAddTimestamptzFieldDefault(t *testing.T) {
	e := newEnv(t, t.TempDir())
	c := e.core(t, Defaults())
	ctx := context.Background()
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("a", "4"), 1, commonpb.ConsistencyLevel_Bounded,
		map[string]string{"timezone": "Asia/Shanghai"}))
	ts := func(name, v string) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{
			Name: name, DataType: schemapb.DataType_Timestamptz, Nullable: true,
			DefaultValue: &schemapb.ValueField{Data: &schemapb.ValueField_StringData{StringData: v}},
		}
	}
	_, err := c.AddField(ctx, "", "a", ts("bad", "1234"))
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.EqualError(t, err, "invalid default value of field, name: bad, err: %!w(*errors.errorString=&{invalid timestamp string: '1234'. "+
		"Does not match any known format}): invalid parameter")
	col, err := c.AddField(ctx, "", "a", ts("utc", "2025-01-01T00:00:00Z"))
	require.NoError(t, err)
	require.Equal(t, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), col.Field("utc").GetDefaultValue().GetTimestamptzData())
	col, err = c.AddField(ctx, "", "a", ts("naive", "2025-01-01 08:00:00"))
	require.NoError(t, err)
	require.Equal(t, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), col.Field("naive").GetDefaultValue().GetTimestamptzData(),
		"a naive string is read in the collection's time zone (UTC+8)")
}
