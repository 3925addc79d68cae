package scalar

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/indextest"
)

// nulls returns a validity mask with roughly one row in five null.
func nulls(r *rand.Rand, n int) []bool {
	v := make([]bool, n)
	for i := range v {
		v[i] = r.IntN(5) != 0
	}
	return v
}

func roundTrip(t *testing.T, x *Index) *Index {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, x.Marshal(&b))
	y, err := Unmarshal(b.Bytes())
	require.NoError(t, err)
	require.Equal(t, x, y)
	return y
}

func TestIntsAgainstScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 2000
	col := &column.Ints{T: schemapb.DataType_Int64, Data: make([]int64, n)}
	col.Valid = nulls(r, n)
	for i := range col.Data {
		col.Data[i] = r.Int64N(100) - 50
	}
	col.Data[0], col.Data[1] = math.MinInt64, math.MaxInt64
	x, err := Build(context.Background(), Inverted, col)
	require.NoError(t, err)
	x = roundTrip(t, x)
	for range 300 {
		lo, hi := r.Int64N(120)-60, r.Int64N(120)-60
		if r.IntN(10) == 0 {
			lo = math.MinInt64
		}
		out := make([]bool, n)
		cnt, ok := x.MarkInts(lo, hi, out)
		require.True(t, ok)
		want := 0
		for i, v := range col.Data {
			exp := col.Valid[i] && v >= lo && v <= hi
			require.Equal(t, exp, out[i], "row %d value %d range [%d,%d]", i, v, lo, hi)
			if exp {
				want++
			}
		}
		require.Equal(t, want, cnt)
	}
	_, ok := x.MarkStrings("a", "b", true, true, false, make([]bool, n))
	require.False(t, ok, "an int index cannot answer string ranges")
	_, ok = x.MarkInts(0, 1, make([]bool, n-1))
	require.False(t, ok, "a mask of the wrong length is refused")
}

func TestFloatsAgainstScan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 1500
	col := &column.Floats{T: schemapb.DataType_Double, Data: make([]float64, n)}
	col.Valid = nulls(r, n)
	for i := range col.Data {
		col.Data[i] = float64(r.IntN(40)-20) / 4
	}
	col.Data[0], col.Data[1], col.Data[2], col.Data[3] = math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)
	col.Valid[0], col.Valid[1], col.Valid[2], col.Valid[3] = true, true, true, true
	x, err := Build(context.Background(), Sort, col)
	require.NoError(t, err)
	x = roundTrip(t, x)
	bounds := []float64{math.Inf(-1), math.Inf(1), 0, -0.25, 2.5, 7.1, -100}
	for range 300 {
		lo, hi := bounds[r.IntN(len(bounds))], bounds[r.IntN(len(bounds))]
		if r.IntN(2) == 0 {
			lo, hi = float64(r.IntN(50)-25)/4, float64(r.IntN(50)-25)/4
		}
		li, hiI := r.IntN(2) == 0, r.IntN(2) == 0
		out := make([]bool, n)
		_, ok := x.MarkFloats(lo, hi, li, hiI, out)
		require.True(t, ok)
		for i, v := range col.Data {
			exp := col.Valid[i] && (v > lo || li && v == lo) && (v < hi || hiI && v == hi)
			require.Equal(t, exp, out[i], "row %d value %v (%v %v %v %v)", i, v, lo, hi, li, hiI)
		}
	}
	_, ok := x.MarkFloats(math.NaN(), 1, true, true, make([]bool, n))
	require.False(t, ok)
}

func TestStringsAgainstScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1500
	alpha := []string{"", "a", "ab", "abc", "b", "ba", "bab", "c", "\xff", "é"}
	col := &column.Strings{T: schemapb.DataType_VarChar, Data: make([]string, n)}
	col.Valid = nulls(r, n)
	for i := range col.Data {
		col.Data[i] = alpha[r.IntN(len(alpha))] + alpha[r.IntN(len(alpha))]
	}
	for _, k := range []Kind{Inverted, Trie, Bitmap} {
		x, err := Build(context.Background(), k, col)
		require.NoError(t, err)
		x = roundTrip(t, x)
		for range 200 {
			lo, hi := alpha[r.IntN(len(alpha))], alpha[r.IntN(len(alpha))]
			li, hiI, inf := r.IntN(2) == 0, r.IntN(2) == 0, r.IntN(4) == 0
			out := make([]bool, n)
			_, ok := x.MarkStrings(lo, hi, li, hiI, inf, out)
			require.True(t, ok)
			pre := make([]bool, n)
			_, ok = x.MarkPrefix(lo, pre)
			require.True(t, ok)
			for i, v := range col.Data {
				exp := col.Valid[i] && (v > lo || li && v == lo) && (inf || v < hi || hiI && v == hi)
				require.Equal(t, exp, out[i], "row %d value %q", i, v)
				require.Equal(t, col.Valid[i] && strings.HasPrefix(v, lo), pre[i], "prefix %q row %q", lo, v)
			}
		}
	}
}

func TestBoolsAndArrays(t *testing.T) {
	b := &column.Bools{Data: []bool{true, false, true, false}}
	b.Valid = []bool{true, true, false, true}
	x, err := Build(context.Background(), Bitmap, b)
	require.NoError(t, err)
	x = roundTrip(t, x)
	out := make([]bool, 4)
	_, ok := x.MarkInts(1, 1, out)
	require.True(t, ok)
	require.Equal(t, []bool{true, false, false, false}, out)

	arr := &column.Arrays{Elem: schemapb.DataType_Int32, Data: []*schemapb.ScalarField{
		{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{1, 2, 2}}}},
		{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{}}}},
		{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{2, 3}}}},
		nil,
	}}
	arr.Valid = []bool{true, true, true, false}
	x, err = Build(context.Background(), Inverted, arr)
	require.NoError(t, err)
	x = roundTrip(t, x)
	require.True(t, x.Array())
	require.Equal(t, 3, x.Cardinality())
	out = make([]bool, 4)
	n, ok := x.MarkInts(2, 2, out)
	require.True(t, ok)
	require.Equal(t, 2, n, "a row is posted once per distinct element")
	require.Equal(t, []bool{true, false, true, false}, out)

	_, err = Build(context.Background(), Inverted, &column.JSONs{Data: [][]byte{[]byte("1")}})
	require.Error(t, err)
	_, err = Build(context.Background(), Kind(9), b)
	require.Error(t, err)
}

func TestEmpty(t *testing.T) {
	x, err := Build(context.Background(), Inverted, &column.Ints{T: schemapb.DataType_Int64})
	require.NoError(t, err)
	x = roundTrip(t, x)
	require.Equal(t, 0, x.Len())
	require.Equal(t, 0, x.Cardinality())
}

func TestUnmarshalCorrupt(t *testing.T) {
	col := &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"b", "a", "b", "c"}}
	x, err := Build(context.Background(), Trie, col)
	require.NoError(t, err)
	indextest.RequireRejects(t, indextest.Bytes(t, x), ErrCorrupt, Unmarshal)
}

func TestCheck(t *testing.T) {
	f := func(name string, dt, elem schemapb.DataType) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{Name: name, DataType: dt, ElementType: elem}
	}
	none := schemapb.DataType_None
	for _, tc := range []struct {
		kind   Kind
		field  *schemapb.FieldSchema
		params map[string]string
		errHas string // "" = accepted
	}{
		{Inverted, f("a", schemapb.DataType_Int8, none), nil, ""},
		{Inverted, f("a", schemapb.DataType_Double, none), nil, ""},
		{Inverted, f("a", schemapb.DataType_Bool, none), nil, ""},
		{Inverted, f("a", schemapb.DataType_Array, schemapb.DataType_Float), nil, ""},
		{Inverted, f("j", schemapb.DataType_JSON, none), nil, "json_cast_type"},
		{Inverted, f("j", schemapb.DataType_JSON, none), map[string]string{"json_cast_type": "double", "json_path": "j['a']"}, ""},
		{Inverted, f("j", schemapb.DataType_JSON, none), map[string]string{"json_cast_type": "int", "json_path": "j['a']"}, "json_cast_type int is not supported"},
		{Inverted, f("j", schemapb.DataType_JSON, none), map[string]string{"json_cast_type": "Json"}, ""},
		{Inverted, f("j", schemapb.DataType_JSON, none), map[string]string{"json_cast_type": "varchar", "json_cast_function": "STRING_TO_DOUBLE"}, "not supported for json_cast_type varchar"},
		{Inverted, f("j", schemapb.DataType_JSON, none), map[string]string{"json_cast_type": "DOUBLE", "json_cast_function": "string_to_double"}, ""},
		{Inverted, f("v", schemapb.DataType_FloatVector, none), nil, "not supported on FloatVector field v"},
		{Sort, f("s", schemapb.DataType_VarChar, none), nil, ""},
		{Sort, f("j", schemapb.DataType_JSON, none), nil, "STL_SORT are only supported on numeric or varchar field"},
		{Sort, f("d", schemapb.DataType_Double, none), nil, ""},
		{Sort, f("b", schemapb.DataType_Bool, none), nil, "numeric"},
		{Trie, f("n", schemapb.DataType_Int64, none), nil, "TRIE are only supported on varchar field"},
		{Trie, f("s", schemapb.DataType_VarChar, none), nil, ""},
		{Bitmap, f("d", schemapb.DataType_Double, none), nil, "bitmap index are only supported"},
		{Bitmap, f("a", schemapb.DataType_Array, schemapb.DataType_Float), nil, "Array of Float"},
		{Bitmap, f("a", schemapb.DataType_Array, schemapb.DataType_VarChar), nil, ""},
		{Bitmap, &schemapb.FieldSchema{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true}, nil, "primary key"},
		{Bitmap, f("c", schemapb.DataType_Int32, none), map[string]string{BitmapCardinalityKey: "1001"}, "cardinality"},
		{Bitmap, f("c", schemapb.DataType_Int32, none), map[string]string{BitmapCardinalityKey: "500"}, ""},
	} {
		err := Check(tc.kind, tc.field, tc.params)
		if tc.errHas == "" {
			require.NoError(t, err, "%s on %s", tc.kind, tc.field.GetName())
		} else {
			require.ErrorContains(t, err, tc.errHas, "%s on %s", tc.kind, tc.field.GetName())
		}
	}
	for _, s := range []string{"INVERTED", "STL_SORT", "BITMAP", "Trie", "TRIE"} {
		k, ok := ParseKind(s)
		require.True(t, ok)
		require.Equal(t, strings.ToUpper(s), strings.ToUpper(k.String()))
	}
	_, ok := ParseKind("HNSW")
	require.False(t, ok)
}
