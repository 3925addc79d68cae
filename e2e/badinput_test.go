package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// Milvus status codes the bad inputs must produce.
const (
	codeCollectionNotFound  = 100
	codeCollectionNotLoaded = 101
	codePartitionNotFound   = 200
	codeIllegalArgument     = 1100
	codeParameterTooLarge   = 1102
)

func longField(name string, v ...int64) *schemapb.FieldData {
	return &schemapb.FieldData{Type: schemapb.DataType_Int64, FieldName: name, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: v}}},
	}}
}

func strField(name string, v ...string) *schemapb.FieldData {
	return &schemapb.FieldData{Type: schemapb.DataType_VarChar, FieldName: name, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: v}}},
	}}
}

func vecField(name string, dim int64, v ...float32) *schemapb.FieldData {
	return &schemapb.FieldData{Type: schemapb.DataType_FloatVector, FieldName: name, Field: &schemapb.FieldData_Vectors{
		Vectors: &schemapb.VectorField{Dim: dim, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: v}}},
	}}
}

// rawInsert sends an InsertRequest past the SDK's client-side checks. A
// transport error fails the test: bad input must come back as a Status.
func rawInsert(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string, rows uint32, fds ...*schemapb.FieldData) error {
	t.Helper()
	resp, err := c.GetService().Insert(ctx, &milvuspb.InsertRequest{CollectionName: coll, NumRows: rows, FieldsData: fds})
	require.NoError(t, err, "a transport error instead of a Milvus Status")
	return merr.Error(resp.GetStatus())
}

func TestBadInput(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll, cold, vdim = "bad", "cold", 4
	schemaOf := func(name string, dim int) *entity.Schema {
		return entity.NewSchema().WithName(name).
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("title").WithDataType(entity.FieldTypeVarChar).WithMaxLength(8)).
			WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(int64(dim)))
	}
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schemaOf(coll, vdim))))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(cold, schemaOf(cold, vdim))))
	require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, "p1")))
	good := func(part string, ids ...int64) writeOption {
		titles := make([]string, len(ids))
		vecs := make([][]float32, len(ids))
		for i, id := range ids {
			titles[i] = fmt.Sprint("t", id)
			vecs[i] = []float32{float32(id), 0, 0, 1}
		}
		opt := milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
			WithVarcharColumn("title", titles).WithFloatVectorColumn("vec", vdim, vecs)
		if part != "" {
			opt = opt.WithPartition(part)
		}
		return opt
	}
	_, err := c.Insert(ctx, good("", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)

	count := func() int64 {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, err := rs.GetColumn("count(*)").GetAsInt64(0)
		require.NoError(t, err)
		return n
	}
	titleOf := func(id int64) string {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(fmt.Sprintf("id == %d", id)).
			WithOutputFields("title").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 1, rs.ResultCount)
		v, err := rs.GetColumn("title").GetAsString(0)
		require.NoError(t, err)
		return v
	}
	require.EqualValues(t, 10, count())

	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	big := strings.Repeat("x", 65<<20) // a request over the 64 MB DML limit
	for _, tc := range []struct {
		name string
		code int32
		msg  []string // each must appear in the message
		do   func() error
	}{
		// Rows.
		{"wrong vector dimension", codeIllegalArgument, []string{"dim", "vec", "4"}, func() error {
			return rawInsert(ctx, t, c, coll, 1, longField("id", 100), strField("title", "a"), vecField("vec", 8, 1, 2, 3, 4, 5, 6, 7, 8))
		}},
		{"vector data not whole rows", codeIllegalArgument, []string{"vec", "dim 4"}, func() error {
			return rawInsert(ctx, t, c, coll, 1, longField("id", 100), strField("title", "a"), vecField("vec", 0, 1, 2, 3, 4, 5, 6))
		}},
		{"NaN in a vector", codeIllegalArgument, []string{"vec", "NaN"}, func() error {
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{100}).
				WithVarcharColumn("title", []string{"a"}).WithFloatVectorColumn("vec", vdim, [][]float32{{0, nan, 0, 0}}))
			return err
		}},
		{"+Inf in a vector", codeIllegalArgument, []string{"vec", "Inf"}, func() error {
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{100, 101}).
				WithVarcharColumn("title", []string{"a", "b"}).WithFloatVectorColumn("vec", vdim, [][]float32{{0, 0, 0, 0}, {inf, 0, 0, 0}}))
			return err
		}},
		{"-Inf in an upsert", codeIllegalArgument, []string{"vec", "Inf"}, func() error {
			_, err := c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1}).
				WithVarcharColumn("title", []string{"changed"}).WithFloatVectorColumn("vec", vdim, [][]float32{{-inf, 0, 0, 0}}))
			return err
		}},
		{"varchar over max_length", codeIllegalArgument, []string{"title", "exceeds max length", "max length: 8"}, func() error {
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{100}).
				WithVarcharColumn("title", []string{"123456789"}).WithFloatVectorColumn("vec", vdim, [][]float32{{0, 0, 0, 0}}))
			return err
		}},
		{"varchar over max_length in an upsert", codeIllegalArgument, []string{"title", "max length"}, func() error {
			_, err := c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1}).
				WithVarcharColumn("title", []string{"123456789"}).WithFloatVectorColumn("vec", vdim, [][]float32{{0, 0, 0, 0}}))
			return err
		}},
		{"missing field", codeIllegalArgument, []string{"title"}, func() error {
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{100}).
				WithFloatVectorColumn("vec", vdim, [][]float32{{0, 0, 0, 0}}))
			return err
		}},
		{"missing primary key", codeIllegalArgument, []string{"id"}, func() error {
			return rawInsert(ctx, t, c, coll, 1, strField("title", "a"), vecField("vec", 4, 1, 2, 3, 4))
		}},
		{"unknown field", codeIllegalArgument, []string{"color", "does not exist"}, func() error {
			return rawInsert(ctx, t, c, coll, 1, longField("id", 100), strField("title", "a"), vecField("vec", 4, 1, 2, 3, 4), strField("color", "red"))
		}},
		{"columns of different lengths", codeIllegalArgument, []string{"number of rows", "title"}, func() error {
			return rawInsert(ctx, t, c, coll, 0, longField("id", 100, 101), strField("title", "a"), vecField("vec", 4, 1, 2, 3, 4, 5, 6, 7, 8))
		}},
		{"columns shorter than num_rows", codeIllegalArgument, []string{"number of rows"}, func() error {
			return rawInsert(ctx, t, c, coll, 3, longField("id", 100, 101), strField("title", "a", "b"), vecField("vec", 4, 1, 2, 3, 4, 5, 6, 7, 8))
		}},
		{"wrong data type", codeIllegalArgument, []string{"title"}, func() error {
			return rawInsert(ctx, t, c, coll, 1, longField("id", 100), longField("title", 5), vecField("vec", 4, 1, 2, 3, 4))
		}},
		{"request over 64 MB", codeParameterTooLarge, []string{"bytes", "limit"}, func() error {
			return rawInsert(ctx, t, c, coll, 1, longField("id", 100), strField("title", big), vecField("vec", 4, 1, 2, 3, 4))
		}},
		{"upsert over 64 MB", codeParameterTooLarge, []string{"bytes", "limit"}, func() error {
			resp, err := c.GetService().Upsert(ctx, &milvuspb.UpsertRequest{
				CollectionName: coll, NumRows: 1,
				FieldsData: []*schemapb.FieldData{longField("id", 1), strField("title", big), vecField("vec", 4, 1, 2, 3, 4)},
			})
			require.NoError(t, err, "a transport error instead of a Milvus Status")
			return merr.Error(resp.GetStatus())
		}},

		// Collections and partitions.
		{"duplicate collection name, other schema", codeIllegalArgument, []string{"duplicate", coll}, func() error {
			return c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schemaOf(coll, 8)))
		}},
		{"insert into a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			return rawInsert(ctx, t, c, "nope", 1, longField("id", 100), strField("title", "a"), vecField("vec", 4, 1, 2, 3, 4))
		}},
		{"delete from a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			_, err := c.Delete(ctx, milvusclient.NewDeleteOption("nope").WithInt64IDs("id", []int64{1}))
			return err
		}},
		{"query a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			_, err := c.Query(ctx, milvusclient.NewQueryOption("nope").WithFilter("id > 0"))
			return err
		}},
		{"search a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			_, err := c.Search(ctx, milvusclient.NewSearchOption("nope", 3, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}))
			return err
		}},
		{"load a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			_, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("nope"))
			return err
		}},
		{"describe a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			_, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("nope"))
			return err
		}},
		{"flush a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			_, err := c.Flush(ctx, milvusclient.NewFlushOption("nope"))
			return err
		}},
		{"create a partition in a missing collection", codeCollectionNotFound, []string{"nope"}, func() error {
			return c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption("nope", "p"))
		}},
		{"insert into a missing partition", codePartitionNotFound, []string{"nopart"}, func() error {
			_, err := c.Insert(ctx, good("nopart", 100))
			return err
		}},
		{"upsert into a missing partition", codePartitionNotFound, []string{"nopart"}, func() error {
			_, err := c.Upsert(ctx, good("nopart", 1))
			return err
		}},
		{"delete from a missing partition", codePartitionNotFound, []string{"nopart"}, func() error {
			_, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithPartition("nopart").WithInt64IDs("id", []int64{1}))
			return err
		}},
		{"query a missing partition", codePartitionNotFound, []string{"nopart"}, func() error {
			_, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id > 0").WithPartitions("nopart"))
			return err
		}},
		{"search a missing partition", codePartitionNotFound, []string{"nopart"}, func() error {
			_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}).WithPartitions("nopart"))
			return err
		}},
		{"search with a wrong-dimension vector", codeIllegalArgument, []string{"dim"}, func() error {
			_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector{1, 0, 0, 0, 0, 0, 0, 0}}))
			return err
		}},
		{"search with NaN in the query vector", codeIllegalArgument, []string{"NaN"}, func() error {
			_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector{nan, 0, 0, 0}}))
			return err
		}},
		{"search an unloaded collection", codeCollectionNotLoaded, []string{"not loaded"}, func() error {
			_, err := c.Search(ctx, milvusclient.NewSearchOption(cold, 3, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}))
			return err
		}},
		{"query an unloaded collection", codeCollectionNotLoaded, []string{"not loaded"}, func() error {
			_, err := c.Query(ctx, milvusclient.NewQueryOption(cold).WithFilter("id > 0"))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			require.Error(t, err)
			require.Equal(t, tc.code, merr.Code(err), "status code of %v", err)
			for _, m := range tc.msg {
				require.Contains(t, err.Error(), m)
			}
			require.EqualValues(t, 10, count(), "the bad request changed nothing")
			require.Equal(t, "t1", titleOf(1), "row 1 is unchanged")
		})
	}

	// Bad schemas: each is refused and creates nothing.
	field := func(name string, dt entity.FieldType) *entity.Field {
		return entity.NewField().WithName(name).WithDataType(dt)
	}
	pk := func() *entity.Field { return field("id", entity.FieldTypeInt64).WithIsPrimaryKey(true) }
	vec := func(dim int64) *entity.Field { return field("vec", entity.FieldTypeFloatVector).WithDim(dim) }
	for _, tc := range []struct {
		name   string
		fields []*entity.Field
		msg    []string
	}{
		{"no primary key", []*entity.Field{field("id", entity.FieldTypeInt64), vec(4)}, []string{"no primary key"}},
		{"two primary keys", []*entity.Field{pk(), field("id2", entity.FieldTypeInt64).WithIsPrimaryKey(true), vec(4)}, []string{"2 primary key"}},
		{"dim 0", []*entity.Field{pk(), vec(0)}, []string{"vec", "dimension"}},
		{"dim negative", []*entity.Field{pk(), vec(-1)}, []string{"vec", "dimension"}},
		{"dim over 32768", []*entity.Field{pk(), vec(32769)}, []string{"vec", "32768"}},
		{"binary vector dim not a multiple of 8", []*entity.Field{pk(), vec(4), field("bits", entity.FieldTypeBinaryVector).WithDim(12)}, []string{"bits", "multiple of 8"}},
		{"unsupported scalar type", []*entity.Field{pk(), vec(4), field("s", entity.FieldTypeString)}, []string{`"s"`, "not supported"}},
		{"float primary key", []*entity.Field{field("id", entity.FieldTypeFloat).WithIsPrimaryKey(true), vec(4)}, []string{"id", "Int64 or VarChar"}},
		{"varchar without max_length", []*entity.Field{pk(), vec(4), field("s", entity.FieldTypeVarChar)}, []string{"s", "max_length"}},
		{"no vector field", []*entity.Field{pk()}, []string{"does not contain vector field"}},
	} {
		t.Run("schema "+tc.name, func(t *testing.T) {
			sch := entity.NewSchema().WithName("schema_test")
			for _, f := range tc.fields {
				sch.WithField(f)
			}
			err := c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("schema_test", sch))
			require.Error(t, err)
			require.Equal(t, int32(codeIllegalArgument), merr.Code(err), "status code of %v", err)
			for _, m := range tc.msg {
				require.Contains(t, err.Error(), m)
			}
			has, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption("schema_test"))
			require.NoError(t, err)
			require.False(t, has, "nothing was created")
		})
	}

	// The server still serves: the first schema stands, writes and reads work.
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	for _, f := range desc.Schema.Fields {
		if f.Name == "vec" {
			require.Equal(t, "4", f.TypeParams["dim"])
		}
	}
	cols, err := c.ListCollections(ctx, milvusclient.NewListCollectionOption())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{coll, cold}, cols)
	_, err = c.Insert(ctx, good("", 11))
	require.NoError(t, err)
	require.EqualValues(t, 11, count())
	rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 1, []entity.Vector{entity.FloatVector{11, 0, 0, 1}}).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	id, err := rs[0].IDs.GetAsInt64(0)
	require.NoError(t, err)
	require.EqualValues(t, 11, id)
}
