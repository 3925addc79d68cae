package expr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/column"
	"github.com/stretchr/testify/require"
)

func benchSchema() *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 1, Name: "x", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 2, Name: "s", DataType: schemapb.DataType_VarChar},
		{FieldID: 3, Name: "meta", DataType: schemapb.DataType_JSON},
		{FieldID: 4, Name: "f", DataType: schemapb.DataType_Double},
	}}
}

func benchBatch(n int) *mapBatch {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]int64, n)
	ss := make([]string, n)
	fs := make([]float64, n)
	js := make([][]byte, n)
	letters := "abcdefgh"
	for i := range n {
		xs[i] = r.Int64N(1_000_000)
		fs[i] = r.Float64()
		var sb strings.Builder
		for range 8 {
			sb.WriteByte(letters[r.IntN(len(letters))])
		}
		ss[i] = sb.String()
		if i < 100_000 {
			js[i] = []byte(fmt.Sprintf(`{"name":"%s","age":%d,"tags":["a","b"],"score":%d}`, ss[i], r.IntN(100), xs[i]))
		}
	}
	return &mapBatch{n: n, cols: map[int64]column.Column{
		1: &column.Ints{T: schemapb.DataType_Int64, Data: xs},
		2: &column.Strings{T: schemapb.DataType_VarChar, Data: ss},
		3: &column.JSONs{Data: js[:min(n, 100_000)]},
		4: &column.Floats{T: schemapb.DataType_Double, Data: fs},
	}}
}

func benchEval(b *testing.B, src string, batch *mapBatch) {
	e, err := Compile(src, benchSchema(), nil)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Eval(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch.n), "ns/row")
}

func BenchmarkEval(b *testing.B) {
	big := benchBatch(1_000_000)
	small := &mapBatch{n: 100_000, cols: big.cols}
	for k, c := range big.cols {
		small.cols[k] = c
	}
	small.cols = map[int64]column.Column{3: big.cols[3]}
	var dense, sparse []string
	for i := range 100 {
		dense = append(dense, fmt.Sprint(i*37%1000+500_000))
		sparse = append(sparse, fmt.Sprint(i*9_973))
	}
	b.Run("int_gt_1M", func(b *testing.B) { benchEval(b, "x > 500000", big) })
	b.Run("like_prefix_1M", func(b *testing.B) { benchEval(b, `s like "ab%"`, big) })
	b.Run("in_100_sparse_1M", func(b *testing.B) { benchEval(b, "x in ["+strings.Join(sparse, ",")+"]", big) })
	b.Run("in_100_dense_1M", func(b *testing.B) { benchEval(b, "x in ["+strings.Join(dense, ",")+"]", big) })
	b.Run("range_and_1M", func(b *testing.B) { benchEval(b, "100 < x <= 900000 and f > 0.5", big) })
	b.Run("arith_1M", func(b *testing.B) { benchEval(b, "x % 7 == 0", big) })
	b.Run("json_path_100k", func(b *testing.B) { benchEval(b, `meta["age"] > 50`, small) })
	b.Run("json_string_100k", func(b *testing.B) { benchEval(b, `meta["name"] == "abcdefgh"`, small) })
}

func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		if _, err := Compile(`x in [1,2,3] and (s like "ab%" or meta["age"] > 5) and 1 < f < 2`, benchSchema(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
