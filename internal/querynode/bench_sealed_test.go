package querynode

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// The sealed-search benchmark's data: benchRows clustered vectors of
// benchDim, a label 0-9 per row (label == 3 keeps 10 %), one sealed
// segment with an HNSW index (M 16, efConstruction 64).
const (
	benchRows     = 200_000
	benchDim      = 128
	benchCentres  = 1000
	benchSchemaPK = 100
	benchLabel    = 101
	benchVec      = 102
)

var benchFixture struct {
	once    sync.Once
	schema  *schemapb.CollectionSchema
	cols    func() map[int64]column.Column
	tss     []uint64
	idx     *hnsw.Index
	queries [][]float32
	err     error
}

// benchData builds the fixture once per process. The HNSW graph is cached
// in the temporary directory (it takes about a minute to build), keyed by
// its parameters, so that runs compare the search and not the build.
func benchData(b *testing.B) {
	f := &benchFixture
	f.once.Do(func() {
		rng := rand.New(rand.NewPCG(7, 11))
		centres := make([]float32, benchCentres*benchDim)
		for i := range centres {
			centres[i] = rng.Float32() * 10
		}
		vecs := make([]float32, benchRows*benchDim)
		pks := make([]int64, benchRows)
		labels := make([]int64, benchRows)
		f.tss = make([]uint64, benchRows)
		for r := range benchRows {
			c := rng.IntN(benchCentres)
			for d := range benchDim {
				vecs[r*benchDim+d] = centres[c*benchDim+d] + float32(rng.NormFloat64())
			}
			pks[r], labels[r], f.tss[r] = int64(r), int64(r%10), uint64(1+r/1000)
		}
		for range 64 {
			q := make([]float32, benchDim)
			c := rng.IntN(benchCentres)
			for d := range q {
				q[d] = centres[c*benchDim+d] + float32(rng.NormFloat64())
			}
			f.queries = append(f.queries, q)
		}
		f.schema = &schemapb.CollectionSchema{Name: "bench", Fields: []*schemapb.FieldSchema{
			{FieldID: benchSchemaPK, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
			{FieldID: benchLabel, Name: "label", DataType: schemapb.DataType_Int64},
			{
				FieldID: benchVec, Name: "vec", DataType: schemapb.DataType_FloatVector,
				TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: fmt.Sprint(benchDim)}},
			},
		}}
		// Segments adopt their columns; they only read them, so the
		// benchmark's segments share one set.
		f.cols = func() map[int64]column.Column {
			return map[int64]column.Column{
				benchSchemaPK: &column.Ints{T: schemapb.DataType_Int64, Data: pks},
				benchLabel:    &column.Ints{T: schemapb.DataType_Int64, Data: labels},
				benchVec:      &column.FloatVectors{Dim: benchDim, Data: vecs},
			}
		}
		f.idx, f.err = benchIndex(vecs)
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
}

func benchIndex(vecs []float32) (*hnsw.Index, error) {
	cfg := hnsw.Config{M: 16, EfConstruction: 64, Seed: 1}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("strata-bench-sealed-%d-%d-m%d-ef%d.hnsw", benchRows, benchDim, cfg.M, cfg.EfConstruction))
	if fh, err := os.Open(path); err == nil {
		defer fh.Close()
		if x, err := hnsw.Unmarshal(bufio.NewReader(fh)); err == nil && x.Len() == benchRows {
			return x, nil
		}
	}
	x, err := hnsw.Build(context.Background(), vecs, benchDim, index.L2, cfg)
	if err != nil {
		return nil, err
	}
	if fh, err := os.Create(path + ".tmp"); err == nil {
		w := bufio.NewWriter(fh)
		if x.Marshal(w) == nil && w.Flush() == nil && fh.Close() == nil {
			_ = os.Rename(path+".tmp", path)
		}
	}
	return x, nil
}

// benchSegment returns a sealed segment of the fixture's rows with the
// HNSW index attached and delPermille rows in a thousand deleted at ts 500.
func benchSegment(b *testing.B, delPermille int) *segment.Segment {
	f := &benchFixture
	s, err := segment.New(segment.Info{ID: 1, CollectionID: 1, PartitionID: 1, VChannel: "v"}, f.schema)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Load(f.cols(), f.tss); err != nil {
		b.Fatal(err)
	}
	if delPermille > 0 {
		var keys []int64
		var tss []uint64
		for r := 0; r < benchRows; r += 1000 / delPermille {
			keys, tss = append(keys, int64(r)), append(tss, 500)
		}
		s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: keys}, tss)
	}
	s.SetIndex(benchVec, &attachedIndex{idx: f.idx, metric: plan.MetricL2})
	return s
}

// BenchmarkSealedSearch is one query (top 10, L2) of one 200k × 128 sealed
// segment with an HNSW index through the query node's per-segment search
// (visibility, filter, index walk, hit heap), read at a timestamp after
// every write. Run it with -benchtime=20x: the first run builds (or loads
// the cached) graph outside the timer.
func BenchmarkSealedSearch(b *testing.B) {
	benchData(b)
	for _, c := range []struct {
		name        string
		delPermille int
		filter      string
		ef          int
	}{
		{"deletes=0/ef=64", 0, "", 64},
		{"deletes=0/ef=256", 0, "", 256},
		{"deletes=1pct/ef=64", 10, "", 64},
		{"deletes=0/filter=10pct/ef=64", 0, "label == 3", 64},
		{"deletes=1pct/filter=10pct/ef=64", 10, "label == 3", 64},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := benchSegment(b, c.delPermille)
			var e *expr.Expr
			if c.filter != "" {
				var err error
				if e, err = expr.CompileTZ(c.filter, benchFixture.schema, nil, ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				req := &plan.Search{
					Read:    plan.Read{CollectionID: 1, Strong: true, Filter: c.filter},
					FieldID: benchVec, Metric: plan.MetricL2, TopK: 10, Ef: c.ef,
					Vectors: [][]float32{benchFixture.queries[i%len(benchFixture.queries)]},
				}
				st := &searchState{
					req: req, ts: 1000, e: e, qnorms: []float32{0},
					heaps: []*hitHeap{{better: func(a, b float32) bool { return a < b }}}, groupCands: make([][]candidate, 1),
				}
				err := s.Read(func(v *segment.View) error { return st.segment(0, v, benchSchemaPK) })
				if err != nil {
					b.Fatal(err)
				}
				if len(st.heaps[0].items) != 10 {
					b.Fatalf("%d hits, want 10", len(st.heaps[0].items))
				}
			}
		})
	}
}
