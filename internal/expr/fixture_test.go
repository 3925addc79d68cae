package expr

import (
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/column"
)

// Field IDs of the test schema.
const (
	fID   = 100 // Int64 pk
	fS    = 101 // VarChar
	fI8   = 102
	fI16  = 103
	fI32  = 104
	fF    = 105 // Float
	fD    = 106 // Double
	fB    = 107 // Bool
	fMeta = 108 // JSON
	fAI   = 109 // Array<Int64>
	fAS   = 110 // Array<VarChar>
	fN    = 111 // nullable Int64
	fDyn  = 112 // $meta
	fVec  = 113 // FloatVector
	fAF   = 114 // Array<Float>
)

func testSchema(dynamic bool) *schemapb.CollectionSchema {
	f := func(id int64, name string, dt schemapb.DataType) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{FieldID: id, Name: name, DataType: dt}
	}
	pk := f(fID, "id", schemapb.DataType_Int64)
	pk.IsPrimaryKey = true
	ai := f(fAI, "ai", schemapb.DataType_Array)
	ai.ElementType = schemapb.DataType_Int64
	as := f(fAS, "as", schemapb.DataType_Array)
	as.ElementType = schemapb.DataType_VarChar
	af := f(fAF, "af", schemapb.DataType_Array)
	af.ElementType = schemapb.DataType_Float
	n := f(fN, "n", schemapb.DataType_Int64)
	n.Nullable = true
	vec := f(fVec, "vec", schemapb.DataType_FloatVector)
	vec.TypeParams = []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}
	s := &schemapb.CollectionSchema{Name: "t", Fields: []*schemapb.FieldSchema{
		pk, f(fS, "s", schemapb.DataType_VarChar), f(fI8, "i8", schemapb.DataType_Int8),
		f(fI16, "i16", schemapb.DataType_Int16), f(fI32, "i32", schemapb.DataType_Int32),
		f(fF, "f", schemapb.DataType_Float), f(fD, "d", schemapb.DataType_Double),
		f(fB, "b", schemapb.DataType_Bool), f(fMeta, "meta", schemapb.DataType_JSON),
		ai, as, n, vec, af,
	}}
	if dynamic {
		d := f(fDyn, "$meta", schemapb.DataType_JSON)
		d.IsDynamic = true
		s.Fields = append(s.Fields, d)
		s.EnableDynamicField = true
	}
	return s
}

// mapBatch is a Batch over a map of columns.
type mapBatch struct {
	n    int
	cols map[int64]column.Column
}

func (b *mapBatch) Len() int                      { return b.n }
func (b *mapBatch) Column(id int64) column.Column { return b.cols[id] }

func longs(v ...int64) *schemapb.ScalarField {
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: v}}}
}

func strs(v ...string) *schemapb.ScalarField {
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: v}}}
}

func floats32(v ...float32) *schemapb.ScalarField {
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: v}}}
}

// testBatch is the fixed 10-row batch the table tests run against.
//
//	row id s           i8   i16   i32 f   d    b n    meta                                   ai        as
//	0   0  "apple"     -128 -3000 0   0.5 0    T 0    {a:1,s:"x",b:true,arr:[1,2,3],o:{k:v,n:5}} [1,2,3] [a,b]
//	1   1  "banana"    -1   -2000 1   1.5 .25  F 10   {a:2,s:"y",b:false,arr:[4,5],o:{k:w,n:6}}  [4]     [c]
//	2   2  "cherry"    0    -1000 4   2.5 .5   T null {a:3.5,s:"xy",arr:["a","b"]}               []      []
//	3   3  "date"      1    0     9   3.5 .75  F 30   {a:"3",s:"abc"}                            [1,5]   [a]
//	4   4  "elder"     2    1000  16  4.5 1    T 40   {a:null}                                   [2,2]   [b,c]
//	5   5  "fig"       3    2000  25  5.5 1.25 F null {}                                         [10,20,30] [x]
//	6   6  "grape"     50   3000  36  6.5 1.5  T 60   {a:10,arr:[1,[1,2]],o:{n:7}}               [3]     [a,c]
//	7   7  "apple pie" 100  4000  49  7.5 1.75 F 70   {a:-1,s:"x\"q"}                            [1,2,3,4] []
//	8   8  ""          127  5000  64  8.5 2    T null [1,2,3]                                    [7]     [z]
//	9   9  "ab%c"      5    6000  81  9.5 2.25 F 90   {a:1e2,s:"ab%c"}                           [0]     [b]
//
// $meta row i: {"age":10i,"name":"u<i>","color":red (i<5) | blue} plus
// "tags":["t1","t2"] on even rows; row 9 is {}.
func testBatch() *mapBatch {
	const n = 10
	ids := make([]int64, n)
	i32 := make([]int64, n)
	i16 := make([]int64, n)
	fl := make([]float64, n)
	dl := make([]float64, n)
	bl := make([]bool, n)
	nn := make([]int64, n)
	dyn := make([][]byte, n)
	for i := range n {
		ids[i] = int64(i)
		i32[i] = int64(i * i)
		i16[i] = int64(i*1000 - 3000)
		fl[i] = float64(float32(float64(i) + 0.5))
		dl[i] = float64(i) * 0.25
		bl[i] = i%2 == 0
		nn[i] = int64(i * 10)
		color := "red"
		if i >= 5 {
			color = "blue"
		}
		tags := ""
		if i%2 == 0 {
			tags = `,"tags":["t1","t2"]`
		}
		dyn[i] = []byte(fmt.Sprintf(`{"age":%d,"name":"u%d","color":"%s"%s}`, i*10, i, color, tags))
	}
	dyn[9] = []byte(`{}`)
	meta := [][]byte{
		[]byte(`{"a":1,"s":"x","b":true,"arr":[1,2,3],"o":{"k":"v","n":5}}`),
		[]byte(`{"a":2,"s":"y","b":false,"arr":[4,5],"o":{"k":"w","n":6}}`),
		[]byte(`{"a":3.5,"s":"xy","arr":["a","b"]}`),
		[]byte(`{"a":"3","s":"abc"}`),
		[]byte(`{"a":null}`),
		[]byte(`{}`),
		[]byte(` { "a" : 10 , "arr" : [ 1 , [1,2] ] , "o" : { "n" : 7 } } `),
		[]byte(`{"a":-1,"s":"x\"q"}`),
		[]byte(`[1,2,3]`),
		[]byte(`{"a":1e2,"s":"ab%c"}`),
	}
	valid := []bool{true, true, false, true, true, false, true, true, false, true}
	return &mapBatch{n: n, cols: map[int64]column.Column{
		fID:   &column.Ints{T: schemapb.DataType_Int64, Data: ids},
		fS:    &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"apple", "banana", "cherry", "date", "elder", "fig", "grape", "apple pie", "", "ab%c"}},
		fI8:   &column.Ints{T: schemapb.DataType_Int8, Data: []int64{-128, -1, 0, 1, 2, 3, 50, 100, 127, 5}},
		fI16:  &column.Ints{T: schemapb.DataType_Int16, Data: i16},
		fI32:  &column.Ints{T: schemapb.DataType_Int32, Data: i32},
		fF:    &column.Floats{T: schemapb.DataType_Float, Data: fl},
		fD:    &column.Floats{T: schemapb.DataType_Double, Data: dl},
		fB:    &column.Bools{Data: bl},
		fMeta: &column.JSONs{Data: meta},
		fAI: &column.Arrays{Elem: schemapb.DataType_Int64, Data: []*schemapb.ScalarField{
			longs(1, 2, 3), longs(4), longs(), longs(1, 5), longs(2, 2), longs(10, 20, 30), longs(3), longs(1, 2, 3, 4), longs(7), longs(0),
		}},
		fAS: &column.Arrays{Elem: schemapb.DataType_VarChar, Data: []*schemapb.ScalarField{
			strs("a", "b"), strs("c"), strs(), strs("a"), strs("b", "c"), strs("x"), strs("a", "c"), strs(), strs("z"), strs("b"),
		}},
		fAF: &column.Arrays{Elem: schemapb.DataType_Float, Data: []*schemapb.ScalarField{
			floats32(1.1), floats32(), floats32(2.5, 1.1), floats32(), floats32(), floats32(), floats32(), floats32(), floats32(), floats32(0),
		}},
		fN:   &column.Ints{Nulls: column.Nulls{Valid: valid}, T: schemapb.DataType_Int64, Data: nn},
		fDyn: &column.JSONs{Data: dyn},
		fVec: &column.FloatVectors{Dim: 2, Data: make([]float32, 2*n)},
	}}
}

// matching returns the indices of true entries.
func matching(bs []bool) []int {
	out := []int{}
	for i, b := range bs {
		if b {
			out = append(out, i)
		}
	}
	return out
}
