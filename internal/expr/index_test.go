package expr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/scalar"
)

// indexedBatch is a mapBatch with scalar indexes over some fields.
type indexedBatch struct {
	*mapBatch
	idx map[int64]any
}

func (b *indexedBatch) Index(id int64) any { return b.idx[id] }

// countingIndex counts the lookups answered by a scalar index.
type countingIndex struct {
	*scalar.Index
	calls *atomic.Int64
}

func (c countingIndex) MarkInts(lo, hi int64, out []bool) (int, bool) {
	c.calls.Add(1)
	return c.Index.MarkInts(lo, hi, out)
}

func (c countingIndex) MarkFloats(lo, hi float64, li, hiI bool, out []bool) (int, bool) {
	c.calls.Add(1)
	return c.Index.MarkFloats(lo, hi, li, hiI, out)
}

func (c countingIndex) MarkStrings(lo, hi string, li, hiI, inf bool, out []bool) (int, bool) {
	c.calls.Add(1)
	return c.Index.MarkStrings(lo, hi, li, hiI, inf, out)
}

func (c countingIndex) MarkPrefix(p string, out []bool) (int, bool) {
	c.calls.Add(1)
	return c.Index.MarkPrefix(p, out)
}

var propStrings = []string{"", "a", "ab", "abc", "b", "ba", "c", "a%", "é", "zz"}

// randomBatch builds n rows over the scalar fields of testSchema, with
// nulls in several fields and NaN, ±Inf and -0 among the doubles.
func randomBatch(r *rand.Rand, n int) *mapBatch {
	valid := func() []bool {
		v := make([]bool, n)
		for i := range v {
			v[i] = r.IntN(6) != 0
		}
		return v
	}
	ints := func(lo, span int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = lo + r.Int64N(span)
		}
		return out
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	i64 := ints(-20, 40)
	i64[0], i64[1] = math.MinInt64, math.MaxInt64
	fl := make([]float64, n)
	dl := make([]float64, n)
	for i := range fl {
		fl[i] = float64(float32(float64(r.IntN(40)-20) / 4))
		dl[i] = float64(r.IntN(40)-20) / 8
	}
	dl[2], dl[3], dl[4], dl[5] = math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)
	ss := make([]string, n)
	bl := make([]bool, n)
	for i := range ss {
		ss[i] = propStrings[r.IntN(len(propStrings))] + propStrings[r.IntN(len(propStrings))]
		bl[i] = r.IntN(2) == 0
	}
	ai, as, af := make([]*schemapb.ScalarField, n), make([]*schemapb.ScalarField, n), make([]*schemapb.ScalarField, n)
	for i := range n {
		var li []int64
		var ls []string
		var lf []float32
		for range r.IntN(4) {
			li = append(li, r.Int64N(8))
			ls = append(ls, propStrings[r.IntN(len(propStrings))])
			lf = append(lf, float32(r.IntN(6))/4)
		}
		ai[i], as[i], af[i] = longs(li...), strs(ls...), floats32(lf...)
	}
	return &mapBatch{n: n, cols: map[int64]column.Column{
		fAI:  &column.Arrays{Nulls: column.Nulls{Valid: valid()}, Elem: schemapb.DataType_Int64, Data: ai},
		fAS:  &column.Arrays{Nulls: column.Nulls{Valid: valid()}, Elem: schemapb.DataType_VarChar, Data: as},
		fAF:  &column.Arrays{Elem: schemapb.DataType_Float, Data: af},
		fID:  &column.Ints{T: schemapb.DataType_Int64, Data: ids},
		fS:   &column.Strings{Nulls: column.Nulls{Valid: valid()}, T: schemapb.DataType_VarChar, Data: ss},
		fI8:  &column.Ints{T: schemapb.DataType_Int8, Data: ints(-5, 10)},
		fI16: &column.Ints{Nulls: column.Nulls{Valid: valid()}, T: schemapb.DataType_Int16, Data: ints(-100, 200)},
		fI32: &column.Ints{T: schemapb.DataType_Int32, Data: ints(0, 30)},
		fF:   &column.Floats{T: schemapb.DataType_Float, Data: fl},
		fD:   &column.Floats{Nulls: column.Nulls{Valid: valid()}, T: schemapb.DataType_Double, Data: dl},
		fB:   &column.Bools{Nulls: column.Nulls{Valid: valid()}, Data: bl},
		fN:   &column.Ints{Nulls: column.Nulls{Valid: valid()}, T: schemapb.DataType_Int64, Data: i64},
	}}
}

// randomFilter writes a random filter over the indexed fields.
func randomFilter(r *rand.Rand, depth int) string {
	if depth > 0 && r.IntN(3) != 0 {
		switch r.IntN(3) {
		case 0:
			return "(" + randomFilter(r, depth-1) + " and " + randomFilter(r, depth-1) + ")"
		case 1:
			return "(" + randomFilter(r, depth-1) + " or " + randomFilter(r, depth-1) + ")"
		default:
			return "not (" + randomFilter(r, depth-1) + ")"
		}
	}
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	op := ops[r.IntN(len(ops))]
	intConst := func() string {
		switch r.IntN(12) {
		case 0:
			return "-9223372036854775808"
		case 1:
			return "9223372036854775807"
		case 2:
			return "1e19"
		case 3:
			return "-1e19"
		case 4:
			return fmt.Sprint(float64(r.IntN(40)-20) / 2)
		}
		return fmt.Sprint(r.IntN(60) - 30)
	}
	floatConst := func() string {
		if r.IntN(6) == 0 {
			return "-0.0"
		}
		return fmt.Sprint(float64(r.IntN(50)-25) / 8)
	}
	str := func() string { return fmt.Sprintf("%q", propStrings[r.IntN(len(propStrings))]) }
	list := func(gen func() string) string {
		parts := make([]string, r.IntN(4))
		for i := range parts {
			parts[i] = gen()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	intField := []string{"i8", "i16", "i32", "n", "id"}[r.IntN(5)]
	floatField := []string{"f", "d"}[r.IntN(2)]
	switch r.IntN(13) {
	case 11:
		fn := []string{"array_contains", "array_contains_any", "array_contains_all"}[r.IntN(3)]
		arr, gen := "ai", func() string { return fmt.Sprint(r.IntN(10)) }
		switch r.IntN(3) {
		case 0:
			arr, gen = "as", str
		case 1:
			arr, gen = "af", func() string { return fmt.Sprint(float64(r.IntN(7)) / 4) }
		}
		if fn == "array_contains" {
			return fn + "(" + arr + ", " + gen() + ")"
		}
		return fn + "(" + arr + ", " + list(gen) + ")"
	case 0:
		return intField + " " + op + " " + intConst()
	case 1:
		return floatField + " " + op + " " + floatConst()
	case 2:
		return "s " + op + " " + str()
	case 3:
		return intField + " in " + list(intConst)
	case 4:
		return floatField + " not in " + list(floatConst)
	case 5:
		return "s in " + list(str)
	case 6:
		p := propStrings[r.IntN(len(propStrings))]
		if r.IntN(3) == 0 {
			return fmt.Sprintf("s like %q", strings.ReplaceAll(p, "%", `\%`))
		}
		return fmt.Sprintf("s like %q", strings.ReplaceAll(p, "%", `\%`)+"%")
	case 7:
		return fmt.Sprintf("%s < %s <= %s", intConst(), intField, intConst())
	case 8:
		return "b " + []string{"==", "!="}[r.IntN(2)] + " " + []string{"true", "false"}[r.IntN(2)]
	case 9:
		return []string{"n is null", "s is not null", "b", "not b"}[r.IntN(4)]
	}
	// A conjunction of ordering comparisons on one field (one range lookup),
	// with constants from a small set so bounds often coincide.
	rops := []string{"<", "<=", ">", ">="}
	field, konst := floatField, func() string { return []string{"-0.5", "0", "0.5", "1.25"}[r.IntN(4)] }
	switch r.IntN(3) {
	case 0:
		field, konst = intField, func() string { return []string{"-3", "0", "2", "2.5", "9223372036854775807"}[r.IntN(5)] }
	case 1:
		field, konst = "s", func() string { return []string{`""`, `"a"`, `"ab"`, `"b"`}[r.IntN(4)] }
	}
	parts := make([]string, 2+r.IntN(2))
	for i := range parts {
		parts[i] = field + " " + rops[r.IntN(len(rops))] + " " + konst()
	}
	return "(" + strings.Join(parts, " and ") + ")"
}

// TestIndexedEvalMatchesScan compares evaluation with scalar indexes against
// plain scanning over many random filters, with nulls, NaN and infinities.
func TestIndexedEvalMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	schema := testSchema(false)
	var calls atomic.Int64
	for round := range 4 {
		b := randomBatch(r, 500+r.IntN(1500))
		kinds := map[int64][]scalar.Kind{
			fID: {scalar.Inverted, scalar.Sort}, fS: {scalar.Inverted, scalar.Trie, scalar.Bitmap},
			fI8: {scalar.Bitmap, scalar.Sort, scalar.Inverted}, fI16: {scalar.Sort, scalar.Inverted},
			fI32: {scalar.Inverted, scalar.Bitmap}, fF: {scalar.Sort, scalar.Inverted}, fD: {scalar.Inverted, scalar.Sort},
			fB: {scalar.Bitmap, scalar.Inverted}, fN: {scalar.Sort, scalar.Inverted},
			fAI: {scalar.Inverted, scalar.Bitmap}, fAS: {scalar.Inverted, scalar.Bitmap}, fAF: {scalar.Inverted},
		}
		ib := &indexedBatch{mapBatch: b, idx: map[int64]any{}}
		for fid, ks := range kinds {
			if round > 0 && r.IntN(4) == 0 {
				continue // some fields stay unindexed
			}
			x, err := scalar.Build(context.Background(), ks[r.IntN(len(ks))], b.cols[fid])
			require.NoError(t, err)
			ib.idx[fid] = countingIndex{Index: x, calls: &calls}
		}
		for range 500 {
			src := randomFilter(r, 3)
			e, err := Compile(src, schema, nil)
			require.NoError(t, err, src)
			want, err := e.Eval(b)
			require.NoError(t, err, src)
			got, err := e.Eval(ib)
			require.NoError(t, err, src)
			require.Equal(t, matching(want), matching(got), "filter %s", src)
		}
	}
	require.Greater(t, calls.Load(), int64(1000), "the index path must actually be taken")
}

// BenchmarkIndexedEval compares scanning with scalar-index evaluation over
// 1M rows: an Int64 field with 1000 distinct values and a VarChar field
// with 10000, at several selectivities.
//
//	go test -run x -bench IndexedEval ./internal/expr/
func BenchmarkIndexedEval(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(9, 9))
	bucket := make([]int64, n)
	tag := make([]string, n)
	for i := range n {
		bucket[i] = r.Int64N(1000)
		tag[i] = fmt.Sprintf("tag-%05d", r.IntN(10000))
	}
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 1, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 2, Name: "bucket", DataType: schemapb.DataType_Int64},
		{FieldID: 3, Name: "tag", DataType: schemapb.DataType_VarChar},
	}}
	plain := &mapBatch{n: n, cols: map[int64]column.Column{
		2: &column.Ints{T: schemapb.DataType_Int64, Data: bucket},
		3: &column.Strings{T: schemapb.DataType_VarChar, Data: tag},
	}}
	bi, err := scalar.Build(context.Background(), scalar.Inverted, plain.cols[2])
	require.NoError(b, err)
	ti, err := scalar.Build(context.Background(), scalar.Trie, plain.cols[3])
	require.NoError(b, err)
	indexed := &indexedBatch{mapBatch: plain, idx: map[int64]any{2: bi, 3: ti}}
	for _, f := range []string{
		"bucket == 7", "bucket in [1, 50, 900]", "bucket < 10", "bucket < 100", "bucket < 500", "bucket != 7", "500 <= bucket < 510",
		`tag == "tag-00042"`, `tag like "tag-001%"`, `tag in ["tag-00001", "tag-09999"]`, `bucket < 20 and tag like "tag-0%"`,
	} {
		e, err := Compile(f, schema, nil)
		require.NoError(b, err)
		for _, mode := range []struct {
			name string
			b    Batch
		}{{"scan", plain}, {"index", indexed}} {
			b.Run(mode.name+"/"+f, func(b *testing.B) {
				for range b.N {
					if _, err := e.Eval(mode.b); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
