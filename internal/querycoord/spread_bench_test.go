package querycoord_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querycoord"
)

// TestSpreadCost benchmarks searches of one shard whose sealed segments
// one query node serves, against the same searches with the segments
// spread over two nodes (the leader and a worker, half the rows each), in
// process: time per search one at a time (the two halves are searched in
// parallel), CPU per search (what the fan-out adds) and searches per
// second from 4 × GOMAXPROCS goroutines, over 8 sealed segments of 25,000
// rows (FLAT: every row is scored). It runs only under -bench (go test
// -run TestSpreadCost -bench . ./internal/querycoord/).
func TestSpreadCost(t *testing.T) {
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		t.Skip("a benchmark: run with -bench")
	}
	const segments, perSegment = 8, 25000
	c := newClusterWith(t, func(cfg *querycoord.Config) { cfg.SpreadSegments = true })
	a := c.addLocal()
	s := c.s
	for i := range int64(segments) {
		s.Insert(i*perSegment, (i+1)*perSegment)
		s.Flush()
	}
	ctx := context.Background()
	col, err := c.s.Root.CollectionByID(s.CollectionID)
	require.NoError(t, err)
	req := &plan.Search{
		Read: plan.Read{CollectionID: s.CollectionID, Strong: true}, FieldID: col.Field("vec").GetFieldID(), Metric: "L2",
		Vectors: [][]float32{{70000.4, 1}}, TopK: 10,
	}
	run := func(name string) {
		res, err := c.coord.Search(ctx, req)
		require.NoError(t, err, name)
		require.Len(t, res.Hits[0], 10, name)
		var cpu time.Duration
		var failed error
		one := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime(t)
			for b.Loop() {
				if _, err := c.coord.Search(ctx, req); err != nil {
					failed = err
					b.FailNow()
				}
			}
			cpu = (cpuTime(t) - start) / time.Duration(b.N)
		})
		require.NoError(t, failed, name)
		par := testing.Benchmark(func(b *testing.B) {
			b.SetParallelism(4) // × GOMAXPROCS goroutines
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.coord.Search(ctx, req); err != nil {
						failed = err
						return
					}
				}
			})
		})
		require.NoError(t, failed, name)
		t.Logf("%-22s 1 at a time: %8d ns/search %8d CPU-ns/search %5d allocs; concurrent: %7.0f searches/s",
			name, one.NsPerOp(), cpu.Nanoseconds(), one.AllocsPerOp(), float64(par.N)/par.T.Seconds())
	}
	require.NoError(t, c.coord.Load(ctx, s.CollectionID, nil, 1, nil))
	require.Empty(t, c.held(a))
	run("1 query node")
	c.coord.Release(s.CollectionID)
	b := c.addLocal()
	require.NoError(t, c.coord.Load(ctx, s.CollectionID, nil, 1, nil))
	held := c.held(a, b)
	require.NotEmpty(t, held[b], "the worker holds segments")
	run("2 query nodes, spread")
}
