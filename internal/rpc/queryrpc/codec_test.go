package queryrpc_test

import (
	"reflect"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
)

// fill sets every field of the struct v points to (recursively) to a
// value that is not its zero value, so that a field the codec forgets
// comes back zero and the comparison fails.
func fill(t *testing.T, v reflect.Value, seed int) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(t, v.Elem(), seed)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), seed+i+1)
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(seed))
	case reflect.Uint64, reflect.Uint32, reflect.Uint8:
		v.SetUint(uint64(seed))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(seed) + 0.5)
	case reflect.String:
		v.SetString("s" + string(rune('a'+seed%26)))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), seed+i)
		}
		v.Set(s)
	case reflect.Map:
		if v.Type() != reflect.TypeFor[map[string]*schemapb.TemplateValue]() {
			t.Fatalf("fill: map type %s", v.Type())
		}
		v.Set(reflect.ValueOf(map[string]*schemapb.TemplateValue{
			"a": {Val: &schemapb.TemplateValue_Int64Val{Int64Val: int64(seed)}},
		}))
	default:
		t.Fatalf("fill: kind %s (%s): teach fill and the codec about it", v.Kind(), v.Type())
	}
}

// wire marshals and unmarshals m, as the hop does.
func wire[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	out := m.ProtoReflect().New().Interface().(M)
	require.NoError(t, proto.Unmarshal(b, out))
	return out
}

// sameTemplates compares the template maps with proto.Equal and clears
// them, so that the rest compares with require.Equal.
func sameTemplates(t *testing.T, want, got *plan.Read) {
	t.Helper()
	require.Len(t, got.Templates, len(want.Templates))
	for k, v := range want.Templates {
		require.True(t, proto.Equal(v, got.Templates[k]), k)
	}
	want.Templates, got.Templates = nil, nil
}

// TestCodecCoversPlan round-trips a search and a query with every field
// set through the wire form.
func TestCodecCoversPlan(t *testing.T) {
	var s plan.Search
	fill(t, reflect.ValueOf(&s), 0)
	got, err := queryrpc.DecodeSearch(wire(t, must(queryrpc.EncodeSearch(&s))(t)))
	require.NoError(t, err)
	sameTemplates(t, &s.Read, &got.Read)
	require.Equal(t, &s, got)

	// The optional fields absent stay absent.
	s = plan.Search{Read: plan.Read{CollectionID: 1}, TopK: 3}
	got, err = queryrpc.DecodeSearch(wire(t, must(queryrpc.EncodeSearch(&s))(t)))
	require.NoError(t, err)
	require.Equal(t, &s, got)

	var q plan.Query
	fill(t, reflect.ValueOf(&q), 7)
	gotQ, err := queryrpc.DecodeQuery(wire(t, must(queryrpc.EncodeQuery(&q))(t)))
	require.NoError(t, err)
	sameTemplates(t, &q.Read, &gotQ.Read)
	require.Equal(t, &q, gotQ)

	_, err = queryrpc.DecodeSearch(&querynodev1.SearchRequest{})
	require.Error(t, err)
	_, err = queryrpc.DecodeQuery(&querynodev1.QueryRequest{})
	require.Error(t, err)
	// A template value that is not a TemplateValue's serialized form.
	_, err = queryrpc.DecodeQuery(&querynodev1.QueryRequest{Read: &querynodev1.Read{Templates: map[string][]byte{"a": {0xff}}}})
	require.ErrorContains(t, err, `template value "a"`)
}

// must returns v once err is checked, for encoders used inline.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		require.NoError(t, err)
		return v
	}
}

// columns is one column of each kind the API serves, three rows each,
// with nulls where the kind allows them.
func columns(t *testing.T) map[int64]column.Column {
	t.Helper()
	wkb, err := column.ParseWKT("POINT (1.5 2)")
	require.NoError(t, err)
	valid := []bool{true, false, true}
	return map[int64]column.Column{
		100: &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 3}},
		101: &column.Ints{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_Int16, Data: []int64{-4, 0, 6}},
		102: &column.Floats{T: schemapb.DataType_Float, Data: []float64{0.5, 1.5, -2}},
		103: &column.Floats{T: schemapb.DataType_Double, Data: []float64{0.1, 0.2, 0.3}},
		104: &column.Strings{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_VarChar, Data: []string{"a", "", "c"}},
		105: &column.Bools{Data: []bool{true, false, true}},
		106: &column.JSONs{Data: [][]byte{[]byte(`{"a":1}`), []byte(`[]`), []byte(`"x"`)}},
		107: &column.Arrays{Elem: schemapb.DataType_Int64, Data: []*schemapb.ScalarField{
			{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{1}}}},
			{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{}}}},
			{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{2, 3}}}},
		}},
		108: &column.FloatVectors{Dim: 2, Data: []float32{1, 2, 3, 4, 5, 6}},
		109: &column.FloatVectors{Nulls: column.Nulls{Valid: valid}, Dim: 2, Data: []float32{1, 2, 0, 0, 5, 6}},
		110: &column.ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2, Data: []byte{1, 2, 3, 4, 5, 6}},
		111: &column.ByteVectors{T: schemapb.DataType_Float16Vector, Dim: 1, Width: 2, Data: []byte{1, 2, 3, 4, 5, 6}},
		112: &column.SparseVectors{Dim: 8, Data: [][]byte{{1, 0, 0, 0, 0, 0, 128, 63}, {}, {7, 0, 0, 0, 0, 0, 0, 64}}},
		113: &column.Geometries{Data: [][]byte{wkb, wkb, wkb}},
		114: &column.VectorArrays{Dim: 2, Data: [][]float32{{1, 2}, {3, 4, 5, 6}, {}}},
		115: &column.Ints{T: schemapb.DataType_Timestamptz, Data: []int64{1, 2, 3}},
	}
}

// sameColumns compares columns by what they are on the wire (proto.Equal,
// so an empty list and a nil one are the same) and by their Go type and
// validity mask.
func sameColumns(t *testing.T, want, got map[int64]column.Column) {
	t.Helper()
	require.Len(t, got, len(want))
	for id, w := range want {
		g := got[id]
		require.NotNil(t, g, "field %d", id)
		sameColumn(t, w, g)
	}
}

func sameColumn(t *testing.T, want, got column.Column) {
	t.Helper()
	require.IsType(t, want, got)
	require.Equal(t, want.Type(), got.Type())
	require.Equal(t, want.Len(), got.Len())
	require.Equal(t, want.Validity(), got.Validity(), want.Type().String())
	wfd, gfd := column.ToFieldData("", 0, want), column.ToFieldData("", 0, got)
	require.True(t, proto.Equal(wfd, gfd), "%s:\nwant %v\ngot  %v", want.Type(), wfd, gfd)
}

// sameSearchResult compares hits exactly and columns with sameColumns.
func sameSearchResult(t *testing.T, want, got *plan.SearchResult) {
	t.Helper()
	require.Equal(t, want.Hits, got.Hits)
	sameColumns(t, want.Fields, got.Fields)
	if want.GroupValues == nil {
		require.Nil(t, got.GroupValues)
	} else {
		sameColumn(t, want.GroupValues, got.GroupValues)
	}
}

func TestSearchResultRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  *plan.SearchResult
	}{
		{"int keys with fields", &plan.SearchResult{
			Hits:   [][]plan.Hit{{{PK: int64(1), Score: 0.5}, {PK: int64(2), Score: 0.25}}, {}, {{PK: int64(3), Score: -1}}},
			Fields: columns(t),
		}},
		{"string keys, elements, groups", &plan.SearchResult{
			Hits:        [][]plan.Hit{{{PK: "a", Score: 1, Element: 1}, {PK: "a", Score: 2, Element: 3}}, {{PK: "b", Score: 3}}},
			GroupValues: &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"x", "x", "y"}},
		}},
		{"no hits", &plan.SearchResult{Hits: [][]plan.Hit{{}, {}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := queryrpc.MarshalSearchResult(tc.res)
			require.NoError(t, err)
			got, err := queryrpc.UnmarshalSearchResult(b)
			require.NoError(t, err)
			sameSearchResult(t, tc.res, got)
		})
	}
	_, err := queryrpc.EncodeSearchResult(&plan.SearchResult{Hits: [][]plan.Hit{{{PK: int64(1)}, {PK: "a"}}}})
	require.Error(t, err)
	_, err = queryrpc.DecodeSearchResult(&schemapb.SearchResultData{
		Topks: []int64{2}, Scores: []float32{1},
		Ids: &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: []int64{1}}}},
	})
	require.Error(t, err, "topks beyond the hits")
	_, err = queryrpc.UnmarshalSearchResult([]byte{0xff})
	require.Error(t, err, "not a SearchResultData")
}

func TestQueryResultRoundTrip(t *testing.T) {
	for _, res := range []*plan.QueryResult{
		{Fields: columns(t), Rows: 3},
		{Count: 42},
	} {
		got, err := queryrpc.DecodeQueryResult(wire(t, must(queryrpc.EncodeQueryResult(res))(t)))
		require.NoError(t, err)
		require.Equal(t, res.Rows, got.Rows)
		require.Equal(t, res.Count, got.Count)
		sameColumns(t, res.Fields, got.Fields)
	}
}

// TestBM25StatsOnTheWire: statistics round-trip; ones that cannot be
// summed or weighed by are refused.
func TestBM25StatsOnTheWire(t *testing.T) {
	st := &plan.BM25Stats{Rows: 9, TotalLen: 41, Terms: []uint32{3, 8, 20}, DF: []int64{1, 0, 9}}
	got, err := queryrpc.DecodeBM25Stats(wire(t, queryrpc.EncodeBM25Stats(st)))
	require.NoError(t, err)
	require.Equal(t, st, got)
	none, err := queryrpc.DecodeBM25Stats(nil)
	require.NoError(t, err)
	require.Nil(t, none)
	for name, m := range map[string]*querynodev1.BM25Stats{
		"counts":   {Rows: 1, Terms: []uint32{1, 2}, Df: []int64{1}},
		"unsorted": {Rows: 1, Terms: []uint32{2, 1}, Df: []int64{1, 1}},
		"repeated": {Rows: 1, Terms: []uint32{2, 2}, Df: []int64{1, 1}},
		"negative": {Rows: -1},
	} {
		_, err := queryrpc.DecodeBM25Stats(m)
		require.Error(t, err, name)
	}
}
