package rootcoord

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

// TestSchemaLimits: each schema limit at Milvus 2.6's default, just under
// (accepted) and just over (refused with Milvus's code and message).
func TestSchemaLimits(t *testing.T) {
	scalars := func(n int) *schemapb.CollectionSchema {
		s := with()
		for i := len(s.Fields); i < n; i++ {
			s.Fields = append(s.Fields, &schemapb.FieldSchema{Name: fmt.Sprint("f", i), DataType: schemapb.DataType_Int64})
		}
		return s
	}
	vectors := func(n int) *schemapb.CollectionSchema {
		s := &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField()}}
		for i := 0; i < n; i++ {
			s.Fields = append(s.Fields, &schemapb.FieldSchema{Name: fmt.Sprint("v", i), DataType: schemapb.DataType_FloatVector, TypeParams: kv("dim", "2")})
		}
		return s
	}
	typed := func(dt schemapb.DataType, params ...string) *schemapb.CollectionSchema {
		f := &schemapb.FieldSchema{Name: "x", DataType: dt, TypeParams: kv(params...)}
		if dt == schemapb.DataType_Array {
			f.ElementType = schemapb.DataType_Int64
		}
		if dt == schemapb.DataType_BinaryVector {
			return &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), f}}
		}
		return with(f)
	}
	for _, tc := range []struct {
		name   string
		under  *schemapb.CollectionSchema
		over   *schemapb.CollectionSchema
		code   int32
		reason string
	}{
		{
			"fields 64", scalars(MaxFields), scalars(MaxFields + 1), errcode.IllegalArgument,
			"maximum field's number should be limited to 64",
		},
		{
			"vector fields 4", vectors(MaxVectorFields), vectors(MaxVectorFields + 1), errcode.IllegalArgument,
			"maximum vector field's number should be limited to 4",
		},
		{
			"dim 32768", &schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField("32768")}},
			&schemapb.CollectionSchema{Name: "c", Fields: []*schemapb.FieldSchema{pkField(), vecField("32769")}}, errcode.IllegalArgument,
			"invalid dimension: 32769 of field vec. float vector dimension should be in range 2 ~ 32768",
		},
		{
			"binary dim 262144", typed(schemapb.DataType_BinaryVector, "dim", strconv.Itoa(8*MaxDim)),
			typed(schemapb.DataType_BinaryVector, "dim", strconv.Itoa(8*MaxDim+8)), errcode.IllegalArgument,
			"invalid dimension: 262152 of field x. binary vector dimension should be in range 2 ~ 262144",
		},
		{
			"varchar max_length 65535", typed(schemapb.DataType_VarChar, "max_length", "65535"),
			typed(schemapb.DataType_VarChar, "max_length", "65536"), errcode.IllegalArgument,
			"the maximum length specified for the field(x) should be in (0, 65535], but got 65536 instead: invalid parameter",
		},
		{
			"array max_capacity 4096", typed(schemapb.DataType_Array, "max_capacity", "4096"),
			typed(schemapb.DataType_Array, "max_capacity", "4097"), errcode.IllegalArgument,
			"the maximum capacity specified for a Array should be in (0, 4096]",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PrepareSchema(tc.under)
			require.NoError(t, err)
			_, err = PrepareSchema(tc.over)
			require.Error(t, err)
			require.Equal(t, tc.code, errcode.CodeOf(err))
			require.Equal(t, tc.reason, err.Error())
		})
	}
}

// TestCatalogLimits: shards, partitions, databases and collections, just
// under and just over, with Milvus's codes and messages.
func TestCatalogLimits(t *testing.T) {
	e := newEnv(t, t.TempDir())
	cfg := Defaults()
	cfg.MaxCollections = 3
	c := e.core(t, cfg)
	ctx := context.Background()

	// Shards.
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("s16", "4"), MaxShards, 0, nil))
	err := c.CreateCollection(ctx, "", schemaNamed("s17", "4"), MaxShards+1, 0, nil)
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.EqualError(t, err, "shard num (17) exceeds max configuration (16)")

	// Partitions: 1024 in all, _default included.
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("parts", "4"), 1, 0, nil))
	for i := 1; i < MaxPartitions; i++ {
		require.NoError(t, c.CreatePartition(ctx, "", "parts", fmt.Sprint("p", i)))
	}
	err = c.CreatePartition(ctx, "", "parts", "one_more")
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.EqualError(t, err, "partition number (1024) exceeds max configuration (1024), collection: parts: invalid parameter")

	// Collections (a small configured limit; the default is Milvus's 65536).
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("third", "4"), 1, 0, nil))
	err = c.CreateCollection(ctx, "", schemaNamed("fourth", "4"), 1, 0, nil)
	require.Equal(t, errcode.CollectionNumLimit, errcode.CodeOf(err))
	require.EqualError(t, err, "exceeded the limit number of collections[dbName=default][limit=3]")

	// Databases: 64 in all, default included.
	for i := 1; i < MaxDatabases; i++ {
		require.NoError(t, c.CreateDatabase(ctx, fmt.Sprint("db", i), nil))
	}
	err = c.CreateDatabase(ctx, "one_more", nil)
	require.Equal(t, errcode.DatabaseNumLimit, errcode.CodeOf(err))
	require.EqualError(t, err, "exceeded the limit number of database[limit=64]")
}
