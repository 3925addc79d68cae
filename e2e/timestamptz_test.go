package e2e

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestTimestamptz: a Timestamptz field takes ISO strings (naive ones read in
// the collection's "timezone"), keeps instants across a flush and a restart
// (int64 binlogs), renders them in the request's timezone (else the
// collection's), filters with ISO and INTERVAL literals, fills its default,
// and refuses a bad string with 1100 and Milvus's message.
func TestTimestamptz(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "tstz"
	// The Go SDK v2.6.2 numbers Timestamptz 15 (the proto says 26), so the
	// schema goes over plain gRPC, as pymilvus sends it.
	b, err := proto.Marshal(timestamptzSchema(coll, nil))
	require.NoError(t, err)
	st, err := s.rawClient(t).CreateCollection(ctx, &milvuspb.CreateCollectionRequest{
		CollectionName: coll, Schema: b,
		Properties: []*commonpb.KeyValuePair{{Key: "timezone", Value: "Asia/Shanghai"}},
	})
	require.NoError(t, err)
	require.EqualValues(t, 0, st.GetCode(), st.GetReason())
	for _, f := range []string{"v", "ts"} {
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, f, index.NewAutoIndex(entity.L2)))
		require.NoError(t, err)
		require.NoError(t, it.Await(ctx))
	}

	ts := &schemapb.FieldData{
		FieldName: "ts", Type: schemapb.DataType_Timestamptz, ValidData: []bool{true, true, true, false},
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{
			StringData: &schemapb.StringArray{Data: []string{"2024-12-31T22:00:00Z", "2025-01-01 06:00:00", "1970-01-01T00:00:00+01:00"}},
		}}},
	}
	ids := &schemapb.FieldData{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1, 2, 3, 4}}}},
	}}
	vec := &schemapb.FieldData{FieldName: "v", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{
		Vectors: &schemapb.VectorField{Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: []float32{1, 0, 0, 1, 1, 1, 0, 0}}}},
	}}
	require.NoError(t, rawInsert(ctx, t, c, coll, 4, ids, vec, ts))

	bad := &schemapb.FieldData{FieldName: "ts", Type: schemapb.DataType_Timestamptz, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"2025-02-29 00:00:00"}}}},
	}}
	one := &schemapb.FieldData{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{9}}}},
	}}
	vec1 := &schemapb.FieldData{FieldName: "v", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{
		Vectors: &schemapb.VectorField{Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: []float32{1, 0}}}},
	}}
	err = rawInsert(ctx, t, c, coll, 1, one, vec1, bad)
	require.Error(t, err)
	require.EqualValues(t, 1100, merr.Code(err))
	require.Contains(t, err.Error(), "got invalid timestamptz string '2025-02-29 00:00:00'")

	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	s.stop()

	s = startServer(t, dir)
	raw := s.rawClient(t)
	c = s.client(t)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	query := func(filter, tz string) map[int64]string {
		t.Helper()
		return queryTimestamptz(ctx, t, raw, coll, filter, tz)
	}
	require.Equal(t, map[int64]string{
		1: "2025-01-01T06:00:00+08:00", 2: "2025-01-01T06:00:00+08:00",
		3: "1970-01-01T07:00:00+08:00", 4: "<null>",
	}, query("id > 0", ""), "collection timezone")
	require.Equal(t, map[int64]string{
		1: "2024-12-31T22:00:00Z", 2: "2024-12-31T22:00:00Z",
		3: "1969-12-31T23:00:00Z", 4: "<null>",
	}, query("id > 0", "UTC"), "request timezone wins")
	require.Equal(t, map[int64]string{1: "2024-12-31T17:00:00-05:00", 2: "2024-12-31T17:00:00-05:00"},
		query("ts == ISO '2024-12-31 17:00:00'", "America/New_York"), "naive ISO literal in the request timezone")
	require.Empty(t, query("ts == ISO '2024-12-31 17:00:00'", "Asia/Shanghai"))
	require.Equal(t, map[int64]string{1: "2024-12-31T22:00:00Z", 2: "2024-12-31T22:00:00Z"},
		query("ts - INTERVAL 'P3D' >= ISO '1970-01-01T00:00:00Z'", "UTC"))
	require.Equal(t, map[int64]string{3: "1969-12-31T23:00:00Z"},
		query("ts + INTERVAL 'PT1H' <= ISO '1970-01-01T00:00:00Z'", "UTC"))

	// A second segment, then a compaction that rewrites both.
	five := &schemapb.FieldData{FieldName: "ts", Type: schemapb.DataType_Timestamptz, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: []string{"2000-01-01T00:00:00.25Z"}}}},
	}}
	one.GetScalars().GetLongData().Data = []int64{5}
	require.NoError(t, rawInsert(ctx, t, c, coll, 1, one, vec1, five))
	ft, err = c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	waitCompaction(t, ctx, raw, coll)
	require.Equal(t, map[int64]string{
		1: "2024-12-31T22:00:00Z", 2: "2024-12-31T22:00:00Z",
		3: "1969-12-31T23:00:00Z", 4: "<null>", 5: "2000-01-01T00:00:00.25Z",
	}, query("id > 0", "UTC"), "after compaction")
	require.Equal(t, map[int64]string{5: "2000-01-01T00:00:00.25Z"},
		query("ts > ISO '1999-12-31 23:59:59' && ts < ISO '2000-01-02 00:00:00'", "UTC"))

	resp, err := raw.Query(ctx, &milvuspb.QueryRequest{
		CollectionName: coll, Expr: "id > 0",
		QueryParams: []*commonpb.KeyValuePair{{Key: "timezone", Value: "Mars/Olympus"}},
	})
	require.NoError(t, err)
	require.EqualValues(t, 1100, resp.GetStatus().GetCode())
	require.Contains(t, resp.GetStatus().GetReason(), "unknown or invalid IANA Time Zone ID: Mars/Olympus")
}

// TestTimestamptzSchema: the default value is an ISO string read in the
// collection's zone; a wrongly typed default and an INVERTED index are
// refused with Milvus's messages.
func TestTimestamptzSchema(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	create := func(def *schemapb.ValueField) *commonpb.Status {
		t.Helper()
		b, err := proto.Marshal(timestamptzSchema("d", def))
		require.NoError(t, err)
		st, err := raw.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "d", Schema: b})
		require.NoError(t, err)
		return st
	}
	st := create(&schemapb.ValueField{Data: &schemapb.ValueField_LongData{LongData: 10}})
	require.Contains(t, st.GetReason(), "type (Timestamptz) of field (ts) is not equal to the type(DataType_Int64) of default_value: invalid parameter")
	st = create(&schemapb.ValueField{Data: &schemapb.ValueField_StringData{StringData: "timestamp"}})
	require.Contains(t, st.GetReason(), "invalid timestamp string: 'timestamp'. Does not match any known format")
	st = create(&schemapb.ValueField{Data: &schemapb.ValueField_StringData{StringData: "2025-01-01T00:00:00"}})
	require.EqualValues(t, 0, st.GetCode(), st.GetReason())
	desc, err := raw.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: "d"})
	require.NoError(t, err)
	require.Equal(t, "2025-01-01T00:00:00Z", desc.GetSchema().GetFields()[2].GetDefaultValue().GetStringData())

	_, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption("d", "ts", index.NewInvertedIndex()))
	require.Error(t, err)
	require.Contains(t, err.Error(), "INVERTED are not supported on Timestamptz field")
	idx, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption("d", "v", index.NewAutoIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, idx.Await(ctx))
	idx, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption("d", "ts", index.NewSortedIndex()))
	require.NoError(t, err)
	require.NoError(t, idx.Await(ctx))

	ids := &schemapb.FieldData{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{
		Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1}}}},
	}}
	vec := &schemapb.FieldData{FieldName: "v", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{
		Vectors: &schemapb.VectorField{Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: []float32{1, 0}}}},
	}}
	require.NoError(t, rawInsert(ctx, t, c, "d", 1, ids, vec))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("d"))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	require.Equal(t, map[int64]string{1: "2025-01-01T08:00:00+08:00"}, queryTimestamptz(ctx, t, raw, "d", "id == 1", "Asia/Shanghai"))
}

// queryTimestamptz returns id → rendered ts ("<null>" for null) of the
// rows filter selects, read with the request timezone tz ("" = none).
func queryTimestamptz(ctx context.Context, t *testing.T, raw milvuspb.MilvusServiceClient, coll, filter, tz string) map[int64]string {
	t.Helper()
	req := &milvuspb.QueryRequest{
		CollectionName: coll, Expr: filter, OutputFields: []string{"ts"},
		ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
	}
	if tz != "" {
		req.QueryParams = []*commonpb.KeyValuePair{{Key: "timezone", Value: tz}}
	}
	resp, err := raw.Query(ctx, req)
	require.NoError(t, err)
	require.EqualValues(t, 0, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	var ids []int64
	var strs []string
	var valid []bool
	for _, fd := range resp.GetFieldsData() {
		switch fd.GetFieldName() {
		case "id":
			ids = fd.GetScalars().GetLongData().GetData()
		case "ts":
			require.Equal(t, schemapb.DataType_Timestamptz, fd.GetType())
			strs, valid = fd.GetScalars().GetStringData().GetData(), fd.GetValidData()
		}
	}
	out := map[int64]string{}
	for i, id := range ids {
		if len(valid) > 0 && !valid[i] {
			out[id] = "<null>"
			continue
		}
		out[id] = strs[i]
	}
	return out
}

// timestamptzSchema is id (Int64 key), v (FloatVector, dim 2) and a
// nullable Timestamptz ts with default def.
func timestamptzSchema(name string, def *schemapb.ValueField) *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Name: name, Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
		{Name: "ts", DataType: schemapb.DataType_Timestamptz, Nullable: true, DefaultValue: def},
	}}
}
