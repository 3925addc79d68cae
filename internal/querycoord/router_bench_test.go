package querycoord_test

import (
	"context"
	"flag"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querycoord"
)

// cpuTime is the CPU time (user and system) this process used so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReadCost benchmarks a search through the coordinator against the
// same search through a Router fed by it, in process, on one query node
// leading both shards (the single-node case): the time, CPU and
// allocations each adds around the node's own work. It runs only under
// -bench (go test -run TestReadCost -bench . ./internal/querycoord/),
// since the cluster it reads needs a *testing.T, which a benchmark lacks.
func TestReadCost(t *testing.T) {
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		t.Skip("a benchmark: run with -bench")
	}
	c := newCluster(t)
	c.prepare()
	c.addLocal()
	ok(t, c.load(1), nil)
	id := c.collectionID()
	col, err := c.s.Root.Collection("", coll)
	require.NoError(t, err)
	req := &plan.Search{
		Read: plan.Read{CollectionID: id}, FieldID: col.Field("vec").GetFieldID(), Metric: "L2",
		Vectors: [][]float32{{70.4, 1}}, TopK: 10,
	}
	router, _ := c.newRouter(c.coord, querycoord.RouterDefaults())
	ctx := context.Background()
	for name, r := range map[string]querycoord.Reader{"coordinator": c.coord, "router": router} {
		res, err := r.Search(ctx, req)
		require.NoError(t, err, name)
		require.Len(t, res.Hits[0], 10, name)
		var cpu time.Duration
		var failed error
		b := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime(t)
			for b.Loop() {
				if _, err := r.Search(ctx, req); err != nil {
					failed = err
					b.FailNow()
				}
			}
			cpu = (cpuTime(t) - start) / time.Duration(b.N)
		})
		require.NoError(t, failed, name)
		t.Logf("%-11s %8d searches  %8d ns/op  %8d CPU-ns/op  %5d allocs/op  %7d B/op",
			name, b.N, b.NsPerOp(), cpu.Nanoseconds(), b.AllocsPerOp(), b.AllocedBytesPerOp())
	}
}
