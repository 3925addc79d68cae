package querynode

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/cputime"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// BenchmarkGrowingSearch is one query (top 10, L2) of one growing segment
// of 100k × 128 rows, appended in batches of 1,000 as the WAL feeds them,
// searched by brute force (a growing segment has no index) through the
// query node's per-segment search. heap keeps the rows on the Go heap
// (GrowingReserve 0), offheap in regions (the default), so the two show
// what the memory's place costs a search. cpu-ns/op is the searching
// thread's CPU time (the search runs on it), which the machine's load
// disturbs less than the wall time.
//
//	go test -run '^$' -bench GrowingSearch -benchtime 50x ./internal/querynode/
func BenchmarkGrowingSearch(b *testing.B) {
	const rows, dim, batch = 100_000, 128, 1000
	schema := &schemapb.CollectionSchema{Name: "bench", Fields: []*schemapb.FieldSchema{
		{FieldID: benchSchemaPK, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: benchLabel, Name: "label", DataType: schemapb.DataType_Int64},
		{
			FieldID: benchVec, Name: "vec", DataType: schemapb.DataType_FloatVector,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: fmt.Sprint(dim)}},
		},
	}}
	rng := rand.New(rand.NewPCG(3, 5))
	queries := make([][]float32, 16)
	for i := range queries {
		queries[i] = make([]float32, dim)
		for d := range queries[i] {
			queries[i][d] = rng.Float32()
		}
	}
	for _, c := range []struct {
		name    string
		reserve int
	}{{"heap", 0}, {"offheap", DefaultGrowingReserve}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := segment.NewGrowing(segment.Info{ID: 1, CollectionID: 1, PartitionID: 1, VChannel: "v"}, schema, c.reserve)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Release() }()
			rng := rand.New(rand.NewPCG(7, 11))
			for from := 0; from < rows; from += batch {
				pks := &column.Ints{T: schemapb.DataType_Int64, Data: make([]int64, batch)}
				labels := &column.Ints{T: schemapb.DataType_Int64, Data: make([]int64, batch)}
				vecs := &column.FloatVectors{Dim: dim, Data: make([]float32, batch*dim)}
				tss := make([]uint64, batch)
				for i := range batch {
					pks.Data[i], labels.Data[i], tss[i] = int64(from+i), int64((from+i)%10), uint64(1+from/batch)
				}
				for i := range vecs.Data {
					vecs.Data[i] = rng.Float32()
				}
				if err := s.Append(map[int64]column.Column{benchSchemaPK: pks, benchLabel: labels, benchVec: vecs}, tss); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			runtime.LockOSThread() // the search runs on this thread: its CPU time is the search's
			defer runtime.UnlockOSThread()
			cpu := cputime.Thread()
			for i := range b.N {
				req := &plan.Search{
					Read:    plan.Read{CollectionID: 1, Strong: true},
					FieldID: benchVec, Metric: plan.MetricL2, TopK: 10,
					Vectors: [][]float32{queries[i%len(queries)]},
				}
				st := &searchState{
					req: req, ts: 1000, qnorms: []float32{0},
					heaps: []*hitHeap{{better: func(a, b float32) bool { return a < b }}}, groupCands: make([][]candidate, 1),
				}
				if err := s.Read(func(v *segment.View) error { return st.segment(0, v, benchSchemaPK) }); err != nil {
					b.Fatal(err)
				}
				if len(st.heaps[0].items) != 10 {
					b.Fatalf("%d hits, want 10", len(st.heaps[0].items))
				}
			}
			b.ReportMetric(float64(cputime.Thread()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
