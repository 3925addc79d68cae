package e2e

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// partialRow is one row of the "partial" collection as a query returns it.
type partialRow struct {
	v     []float32
	name  string
	price *float32
	tags  []int64
	color string
	size  int64
}

// TestPartialUpdate: an upsert with partial_update keeps the stored values
// of the fields it does not send (vectors included), merges dynamic keys,
// inserts new keys only when every required field is sent (else fails whole),
// and the ARRAY_APPEND / ARRAY_REMOVE field ops (sent raw: the Go SDK has no
// option for them) edit stored arrays, bounded by max_capacity, atomically.
func TestPartialUpdate(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	const coll = "partial"
	schema := entity.NewSchema().WithName(coll).WithDynamicFieldEnabled(true).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2)).
		WithField(entity.NewField().WithName("name").WithDataType(entity.FieldTypeVarChar).WithMaxLength(32)).
		WithField(entity.NewField().WithName("price").WithDataType(entity.FieldTypeFloat).WithNullable(true)).
		WithField(entity.NewField().WithName("tags").WithDataType(entity.FieldTypeArray).
			WithElementType(entity.FieldTypeInt64).WithMaxCapacity(4))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("id", []int64{1, 2, 3}).
		WithFloatVectorColumn("v", 2, [][]float32{{1, 0}, {0, 1}, {1, 1}}).
		WithVarcharColumn("name", []string{"one", "two", "three"}).
		WithColumns(column.NewColumnFloat("price", []float32{1.5, 2.5, 3.5}),
			column.NewColumnInt64Array("tags", [][]int64{{1}, {2, 2}, {}}),
			column.NewColumnVarChar("color", []string{"red", "green", "blue"})))
	require.NoError(t, err)
	// Flush so that the reads of the merge also come from a sealed segment.
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	indexAndLoad(ctx, t, c, coll, entity.L2)

	read := func() map[int64]partialRow {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id > 0").
			WithOutputFields("v", "name", "price", "tags", "color", "size").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		out := map[int64]partialRow{}
		for i := 0; i < rs.ResultCount; i++ {
			id, err := rs.GetColumn("id").GetAsInt64(i)
			require.NoError(t, err)
			var r partialRow
			v, err := rs.GetColumn("v").Get(i)
			require.NoError(t, err)
			r.v = []float32(v.(entity.FloatVector))
			r.name, err = rs.GetColumn("name").GetAsString(i)
			require.NoError(t, err)
			if null, _ := rs.GetColumn("price").IsNull(i); !null {
				p, err := rs.GetColumn("price").GetAsDouble(i)
				require.NoError(t, err)
				f := float32(p)
				r.price = &f
			}
			tags, err := rs.GetColumn("tags").Get(i)
			require.NoError(t, err)
			r.tags = append([]int64{}, tags.([]int64)...)
			r.color, _ = rs.GetColumn("color").GetAsString(i)
			r.size, _ = rs.GetColumn("size").GetAsInt64(i)
			out[id] = r
		}
		return out
	}
	price := func(f float32) *float32 { return &f }
	want := map[int64]partialRow{
		1: {v: []float32{1, 0}, name: "one", price: price(1.5), tags: []int64{1}, color: "red"},
		2: {v: []float32{0, 1}, name: "two", price: price(2.5), tags: []int64{2, 2}, color: "green"},
		3: {v: []float32{1, 1}, name: "three", price: price(3.5), tags: []int64{}, color: "blue"},
	}
	require.Equal(t, want, read())

	// A new key (4) without the required vector: the whole request fails,
	// key 2 is not changed either.
	_, err = c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartialUpdate(true).
		WithInt64Column("id", []int64{2, 4}).WithVarcharColumn("name", []string{"two-b", "four"}))
	require.ErrorContains(t, err, "fieldSchema(v) has no corresponding fieldData pass in")
	require.Equal(t, want, read())

	// Only name and a dynamic key are sent: vectors, price, tags and the
	// other dynamic keys stay; a new key with every required field is
	// inserted, its nullable price null.
	res, err := c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartialUpdate(true).
		WithInt64Column("id", []int64{2, 1, 5}).WithVarcharColumn("name", []string{"two-b", "one-b", "five"}).
		WithFloatVectorColumn("v", 2, [][]float32{{0, 2}, {2, 0}, {5, 5}}).
		WithColumns(column.NewColumnInt64Array("tags", [][]int64{{2}, {1}, {5}}), column.NewColumnInt64("size", []int64{20, 10, 50})))
	require.NoError(t, err)
	require.EqualValues(t, 3, res.UpsertCount)
	want[1] = partialRow{v: []float32{2, 0}, name: "one-b", price: price(1.5), tags: []int64{1}, color: "red", size: 10}
	want[2] = partialRow{v: []float32{0, 2}, name: "two-b", price: price(2.5), tags: []int64{2}, color: "green", size: 20}
	want[5] = partialRow{v: []float32{5, 5}, name: "five", tags: []int64{5}, size: 50}
	require.Equal(t, want, read())

	_, err = c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartialUpdate(true).
		WithInt64Column("id", []int64{3}).WithColumns(column.NewColumnFloat("price", []float32{9})))
	require.NoError(t, err)
	want[3] = partialRow{v: []float32{1, 1}, name: "three", price: price(9), tags: []int64{}, color: "blue"}
	require.Equal(t, want, read(), "a vector that is not sent is kept")

	// Field ops, raw: append to 1 and 3, remove from 2.
	tagsData := func(rows ...[]int64) *schemapb.FieldData {
		var data []*schemapb.ScalarField
		for _, r := range rows {
			data = append(data, &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: r}}})
		}
		return &schemapb.FieldData{FieldName: "tags", Type: schemapb.DataType_Array, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_ArrayData{ArrayData: &schemapb.ArrayArray{ElementType: schemapb.DataType_Int64, Data: data}},
		}}}
	}
	ids := func(v ...int64) *schemapb.FieldData {
		return &schemapb.FieldData{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: v}},
		}}}
	}
	upsertOp := func(op schemapb.FieldPartialUpdateOp_OpType, fds ...*schemapb.FieldData) *commonpb.Status {
		t.Helper()
		r, err := raw.Upsert(ctx, &milvuspb.UpsertRequest{
			CollectionName: coll, NumRows: uint32(len(fds[0].GetScalars().GetLongData().GetData())),
			FieldsData: fds, FieldOps: []*schemapb.FieldPartialUpdateOp{{FieldName: "tags", Op: op}},
		})
		require.NoError(t, err)
		return r.GetStatus()
	}
	st := upsertOp(schemapb.FieldPartialUpdateOp_ARRAY_APPEND, ids(1, 3), tagsData([]int64{7, 1}, []int64{8}))
	require.Zero(t, st.GetCode(), st.GetReason())
	st = upsertOp(schemapb.FieldPartialUpdateOp_ARRAY_REMOVE, ids(2), tagsData([]int64{2, 9}))
	require.Zero(t, st.GetCode(), st.GetReason())
	r1, r2, r3 := want[1], want[2], want[3]
	r1.tags, r2.tags, r3.tags = []int64{1, 7, 1}, []int64{}, []int64{8}
	want[1], want[2], want[3] = r1, r2, r3
	require.Equal(t, want, read(), "an op without partial_update still merges: name and vectors stay")

	// Past max_capacity (4): Milvus's code 65535, and key 3's valid append is not applied either.
	st = upsertOp(schemapb.FieldPartialUpdateOp_ARRAY_APPEND, ids(3, 1), tagsData([]int64{9}, []int64{2, 3}))
	require.EqualValues(t, 65535, st.GetCode())
	require.Contains(t, st.GetReason(), "array length 5 exceeds max_capacity 4")
	st = upsertOp(schemapb.FieldPartialUpdateOp_ARRAY_APPEND, ids(1))
	require.EqualValues(t, 1100, st.GetCode())
	require.Contains(t, st.GetReason(), `partial-update op targets field "tags" not present in fields_data`)
	require.Equal(t, want, read())

	// Duplicate keys in one batch are refused.
	_, err = c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartialUpdate(true).
		WithInt64Column("id", []int64{1, 1}).WithVarcharColumn("name", []string{"a", "b"}))
	require.ErrorContains(t, err, "duplicate primary keys are not allowed in the same batch")

	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
	require.EqualValues(t, 4, n, "updates replace rows, they do not add any")

	// The merge reads the collection: once released, Milvus's 101.
	require.NoError(t, c.ReleaseCollection(context.Background(), milvusclient.NewReleaseCollectionOption(coll)))
	_, err = c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartialUpdate(true).
		WithInt64Column("id", []int64{1}).WithVarcharColumn("name", []string{"x"}))
	require.ErrorContains(t, err, "failed to query: collection not loaded")
}

// TestPartialUpdateConcurrent: partial updates of one key that overlap are
// last writer wins at the row level: the key keeps exactly one row, which is
// one writer's whole merge (its field set, the other field as it read it).
func TestPartialUpdateConcurrent(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "partialrace"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2)).
		WithField(entity.NewField().WithName("a").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("b").WithDataType(entity.FieldTypeInt64))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1}).
		WithFloatVectorColumn("v", 2, [][]float32{{1, 1}}).WithInt64Column("a", []int64{0}).WithInt64Column("b", []int64{0}))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)

	const rounds = 10
	errs := make(chan error, 2)
	for _, field := range []string{"a", "b"} {
		go func() {
			for i := int64(1); i <= rounds; i++ {
				if _, err := c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartialUpdate(true).
					WithInt64Column("id", []int64{1}).WithInt64Column(field, []int64{i})); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 1").WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
	require.EqualValues(t, 1, n, "the key has one row")
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 1").WithOutputFields("v", "a", "b").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 1, rs.ResultCount)
	a, _ := rs.GetColumn("a").GetAsInt64(0)
	b, _ := rs.GetColumn("b").GetAsInt64(0)
	require.True(t, a == rounds || b == rounds, "the last write (a=%d, b=%d) is one writer's final update", a, b)
	v, err := rs.GetColumn("v").Get(0)
	require.NoError(t, err)
	require.Equal(t, entity.FloatVector{1, 1}, v, "the vector no update sent is kept")
}
