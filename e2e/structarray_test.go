package e2e

import (
	bin "encoding/binary"
	"math"
	"sort"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// structRow is one row of the struct collection: its embedding list and labels.
type structRow struct {
	id     int64
	labels []string
	embs   [][]float32
}

// structColumns is the wire form of rows as pymilvus sends it: id, vec and
// the struct column "clips" holding its sub-field columns.
func structColumns(rows []structRow) []*schemapb.FieldData {
	var ids []int64
	var vecs []float32
	labels := &schemapb.ArrayArray{ElementType: schemapb.DataType_VarChar}
	embs := &schemapb.VectorArray{Dim: 2, ElementType: schemapb.DataType_FloatVector}
	for _, r := range rows {
		ids = append(ids, r.id)
		vecs = append(vecs, float32(r.id), 1)
		labels.Data = append(labels.Data, &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{
			StringData: &schemapb.StringArray{Data: r.labels},
		}})
		var flat []float32
		for _, e := range r.embs {
			flat = append(flat, e...)
		}
		embs.Data = append(embs.Data, &schemapb.VectorField{
			Dim:  2,
			Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: flat}},
		})
	}
	return []*schemapb.FieldData{
		{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: ids}},
		}}},
		{FieldName: "vec", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: vecs}},
		}}},
		{FieldName: "clips", Type: schemapb.DataType_ArrayOfStruct, Field: &schemapb.FieldData_StructArrays{
			StructArrays: &schemapb.StructArrayField{Fields: []*schemapb.FieldData{
				{FieldName: "label", Type: schemapb.DataType_Array, Field: &schemapb.FieldData_Scalars{
					Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_ArrayData{ArrayData: labels}},
				}},
				{FieldName: "emb", Type: schemapb.DataType_ArrayOfVector, Field: &schemapb.FieldData_Vectors{
					Vectors: &schemapb.VectorField{Dim: 2, Data: &schemapb.VectorField_VectorArray{VectorArray: embs}},
				}},
			}},
		}},
	}
}

// maxSimCosine is the reference MAX_SIM_COSINE score: per query vector
// the best cosine similarity among the row's vectors, summed.
func maxSimCosine(query, doc [][]float32) float64 {
	cos := func(a, b []float32) float64 {
		var d, na, nb float64
		for i := range a {
			d += float64(a[i] * b[i])
			na += float64(a[i] * a[i])
			nb += float64(b[i] * b[i])
		}
		return d / math.Sqrt(na*nb)
	}
	total := 0.0
	for _, q := range query {
		best := math.Inf(-1)
		for _, d := range doc {
			best = math.Max(best, cos(q, d))
		}
		total += best
	}
	return total
}

// floatBytes is v as little-endian float32s.
func floatBytes(v []float32) []byte {
	var b []byte
	for _, f := range v {
		b = bin.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// embListPlaceholder is one EmbListFloatVector query: the vectors back to back.
func embListPlaceholder(t *testing.T, lists ...[][]float32) []byte {
	ph := &commonpb.PlaceholderValue{Tag: "$0", Type: commonpb.PlaceholderType_EmbListFloatVector}
	for _, l := range lists {
		var b []byte
		for _, v := range l {
			b = append(b, floatBytes(v)...)
		}
		ph.Values = append(ph.Values, b)
	}
	raw, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{ph}})
	require.NoError(t, err)
	return raw
}

// TestStructArrayField drives an Array of Structs field end to end: the
// schema from the Go SDK (max_capacity on the struct), describe showing the
// struct as Milvus does, rows inserted column-wise as pymilvus sends them,
// capacity and shape errors with nothing written, query output joined back
// into structs, embedding-list search scored by MAX_SIM_COSINE, and the
// same answers from flushed binlogs after a reload.
func TestStructArrayField(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	const coll = "structs"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(2)).
		WithField(entity.NewField().WithName("clips").WithDataType(entity.FieldTypeArray).WithElementType(entity.FieldTypeStruct).
			WithMaxCapacity(3).WithStructSchema(entity.NewStructSchema().
			WithField(entity.NewField().WithName("label").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16)).
			WithField(entity.NewField().WithName("emb").WithDataType(entity.FieldTypeFloatVector).WithDim(2))))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))

	desc, err := raw.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: coll})
	require.NoError(t, err)
	require.Zero(t, desc.GetStatus().GetCode(), desc.GetStatus().GetReason())
	require.Len(t, desc.GetSchema().GetFields(), 2, "sub-fields are shown inside the struct only")
	require.Len(t, desc.GetSchema().GetStructArrayFields(), 1)
	sa := desc.GetSchema().GetStructArrayFields()[0]
	require.Equal(t, "clips", sa.GetName())
	require.Len(t, sa.GetFields(), 2)
	require.Equal(t, "label", sa.GetFields()[0].GetName())
	require.Equal(t, schemapb.DataType_Array, sa.GetFields()[0].GetDataType())
	require.Equal(t, "emb", sa.GetFields()[1].GetName())
	require.Equal(t, schemapb.DataType_ArrayOfVector, sa.GetFields()[1].GetDataType())
	require.Equal(t, schemapb.DataType_FloatVector, sa.GetFields()[1].GetElementType())

	// Rows 0..19: row i holds 1 + i%3 unit vectors at angles around i.
	var rows []structRow
	for i := range 20 {
		r := structRow{id: int64(i)}
		for j := 0; j <= i%3; j++ {
			a := float64(i)*0.15 + float64(j)*0.7
			r.labels = append(r.labels, string(rune('a'+j)))
			r.embs = append(r.embs, []float32{float32(math.Cos(a)), float32(math.Sin(a))})
		}
		rows = append(rows, r)
	}
	rows[5].labels, rows[5].embs = nil, nil // an empty list
	ins, err := raw.Insert(ctx, &milvuspb.InsertRequest{CollectionName: coll, NumRows: uint32(len(rows)), FieldsData: structColumns(rows)})
	require.NoError(t, err)
	require.Zero(t, ins.GetStatus().GetCode(), ins.GetStatus().GetReason())

	// Bad rows are refused whole: over max_capacity, and sub-fields of different lengths.
	over := []structRow{{id: 100, labels: []string{"a", "b", "c", "d"}, embs: [][]float32{{1, 0}, {0, 1}, {1, 1}, {1, 2}}}}
	bad, err := raw.Insert(ctx, &milvuspb.InsertRequest{CollectionName: coll, NumRows: 1, FieldsData: structColumns(over)})
	require.NoError(t, err)
	require.Equal(t, int32(1100), bad.GetStatus().GetCode())
	require.Contains(t, bad.GetStatus().GetReason(), "exceeds max_capacity")
	skew := []structRow{{id: 101, labels: []string{"a"}, embs: [][]float32{{1, 0}, {0, 1}}}}
	bad, err = raw.Insert(ctx, &milvuspb.InsertRequest{CollectionName: coll, NumRows: 1, FieldsData: structColumns(skew)})
	require.NoError(t, err)
	require.Equal(t, int32(1100), bad.GetStatus().GetCode())

	for _, it := range []struct {
		field string
		idx   index.Index
	}{{"vec", index.NewFlatIndex(entity.L2)}, {"clips[emb]", index.NewHNSWIndex(entity.MetricType("MAX_SIM_COSINE"), 16, 100)}} {
		task, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, it.field, it.idx))
		require.NoError(t, err)
		require.NoError(t, task.Await(ctx))
	}
	// A plain metric that is neither MAX_SIM nor element-level is refused.
	_, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "clips[emb]", index.NewHNSWIndex(entity.HAMMING, 16, 100)))
	require.Error(t, err)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	query := [][]float32{{1, 0}, {0, 1}}
	check := func(stage string) {
		// Query returns each struct list as it was written.
		q, err := raw.Query(ctx, &milvuspb.QueryRequest{
			CollectionName: coll, Expr: "id in [3, 4, 5]",
			OutputFields: []string{"clips"}, ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		})
		require.NoError(t, err, stage)
		require.Zero(t, q.GetStatus().GetCode(), q.GetStatus().GetReason())
		var st *schemapb.FieldData
		var idCol []int64
		for _, fd := range q.GetFieldsData() {
			switch fd.GetFieldName() {
			case "clips":
				st = fd
			case "id":
				idCol = fd.GetScalars().GetLongData().GetData()
			}
		}
		require.NotNil(t, st, stage)
		require.Equal(t, schemapb.DataType_ArrayOfStruct, st.GetType())
		subs := st.GetStructArrays().GetFields()
		require.Len(t, subs, 2)
		require.Equal(t, "label", subs[0].GetFieldName())
		require.Equal(t, "emb", subs[1].GetFieldName())
		for k, id := range idCol {
			want := rows[id]
			require.Len(t, subs[0].GetScalars().GetArrayData().GetData()[k].GetStringData().GetData(), len(want.labels), stage)
			got := subs[1].GetVectors().GetVectorArray().GetData()[k].GetFloatVector().GetData()
			require.Len(t, got, 2*len(want.embs), stage)
			for j, e := range want.embs {
				require.Equal(t, e, got[2*j:2*j+2], stage)
			}
		}

		// Embedding-list search: scores are MAX_SIM_COSINE, best first,
		// and the empty row is never a hit.
		sr, err := raw.Search(ctx, &milvuspb.SearchRequest{
			CollectionName: coll,
			SearchInput:    &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: embListPlaceholder(t, query)},
			SearchParams: []*commonpb.KeyValuePair{
				{Key: "topk", Value: "20"},
				{Key: "anns_field", Value: "clips[emb]"},
				{Key: "metric_type", Value: "MAX_SIM_COSINE"},
				{Key: "params", Value: "{}"},
			},
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		})
		require.NoError(t, err, stage)
		require.Zero(t, sr.GetStatus().GetCode(), sr.GetStatus().GetReason())
		ids := sr.GetResults().GetIds().GetIntId().GetData()
		scores := sr.GetResults().GetScores()
		require.Len(t, ids, 19, stage)
		require.Nil(t, sr.GetResults().GetElementIndices(), "%s: embedding-list hits are rows", stage)
		want := make([]int64, 0, 19)
		for _, r := range rows {
			if len(r.embs) > 0 {
				want = append(want, r.id)
			}
		}
		sort.SliceStable(want, func(a, b int) bool {
			return maxSimCosine(query, rows[want[a]].embs) > maxSimCosine(query, rows[want[b]].embs)
		})
		for k, id := range ids {
			require.NotEqual(t, int64(5), id, stage)
			require.InDelta(t, maxSimCosine(query, rows[id].embs), float64(scores[k]), 1e-4, stage)
		}
		require.Equal(t, want[0], ids[0], stage)

		// Element-level search: a plain query vector scores each element on
		// its own, so a row may take several places.
		ph, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{{
			Tag:  "$0",
			Type: commonpb.PlaceholderType_FloatVector, Values: [][]byte{floatBytes([]float32{1, 0})},
		}}})
		require.NoError(t, err)
		sr, err = raw.Search(ctx, &milvuspb.SearchRequest{
			CollectionName:   coll,
			SearchInput:      &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: ph},
			SearchParams:     []*commonpb.KeyValuePair{{Key: "topk", Value: "30"}, {Key: "anns_field", Value: "clips[emb]"}, {Key: "metric_type", Value: "COSINE"}},
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		})
		require.NoError(t, err, stage)
		require.Zero(t, sr.GetStatus().GetCode(), sr.GetStatus().GetReason())
		elemIDs, elemScores := sr.GetResults().GetIds().GetIntId().GetData(), sr.GetResults().GetScores()
		require.Len(t, elemIDs, 30, stage)
		require.Equal(t, int64(0), elemIDs[0], stage)
		offsets := sr.GetResults().GetElementIndices().GetData()
		require.Len(t, offsets, 30, stage)
		require.Equal(t, int64(0), offsets[0], "%s: the best element is the first of row 0", stage)
		for k, id := range elemIDs {
			require.Less(t, int(offsets[k]), len(rows[id].embs), stage)
		}
		require.InDelta(t, 1, float64(elemScores[0]), 1e-5, stage)
		seen := map[int64]bool{}
		repeated := false
		for k, id := range elemIDs {
			repeated = repeated || seen[id]
			seen[id] = true
			if k > 0 {
				require.LessOrEqual(t, elemScores[k], elemScores[k-1], stage)
			}
		}
		require.True(t, repeated, "%s: 30 of the 38 elements include two of one row", stage)

		// Range search on an embedding list is refused.
		sr, err = raw.Search(ctx, &milvuspb.SearchRequest{
			CollectionName: coll,
			SearchInput:    &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: embListPlaceholder(t, query)},
			SearchParams: []*commonpb.KeyValuePair{
				{Key: "topk", Value: "5"},
				{Key: "anns_field", Value: "clips[emb]"},
				{Key: "metric_type", Value: "MAX_SIM_COSINE"},
				{Key: "params", Value: `{"radius": 0.1}`},
			},
		})
		require.NoError(t, err, stage)
		require.Contains(t, sr.GetStatus().GetReason(), "range search is not supported", stage)
	}
	check("growing")

	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	check("flushed")

	// Upsert every row unchanged into a second segment, then compact the
	// two: the struct columns survive the rewrite.
	up, err := raw.Upsert(ctx, &milvuspb.UpsertRequest{CollectionName: coll, NumRows: uint32(len(rows)), FieldsData: structColumns(rows)})
	require.NoError(t, err)
	require.Zero(t, up.GetStatus().GetCode(), up.GetStatus().GetReason())
	check("upserted")
	ft, err = c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	waitCompaction(t, ctx, raw, coll)
	check("compacted")
}
