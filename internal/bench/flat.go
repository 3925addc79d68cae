package bench

import (
	"context"
	"sync"

	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/flat"
)

// FlatResult holds the measurements of a FLAT run beyond the sweep table:
// the read bandwidth that bounds one-query-at-a-time search, and batched
// search, where all queries go in one call and the scan is compute-bound.
type FlatResult struct {
	// StreamGBs is the single-core read bandwidth in GB/s of thread CPU
	// time, streaming the base vectors once with distance.Sum (best of the
	// rounds); StreamWallGBs is the same in wall time.
	StreamGBs, StreamWallGBs float64
	// StreamNGBs is the aggregate wall-time bandwidth of Threads goroutines
	// each streaming its share of the base vectors.
	StreamNGBs float64
	// LimitQPS is the single-query throughput the bandwidth allows:
	// StreamGBs over the bytes of the base vectors, which each query reads
	// once.
	LimitQPS float64
	// PeakGFLOPs is the core's peak arithmetic rate in GFLOP/s of thread
	// CPU time, timing distance.FMALoop (0 without assembly kernels).
	PeakGFLOPs float64
	// ComputeLimitQPS is the batched throughput that rate allows: each
	// query costs 2*N*Dim floating-point operations (a multiply and an add
	// per coordinate of every row).
	ComputeLimitQPS float64
	// BatchRecall is the mean recall@K of the batched search.
	BatchRecall float64
	// BatchQPS1 and BatchCPUQPS1 are the batched throughput on one thread,
	// per second of wall and of CPU time; BatchQPSN on Threads goroutines,
	// each searching its share of the queries in one call.
	BatchQPS1, BatchCPUQPS1, BatchQPSN float64
}

// SinglePercent is the single-threaded one-query-at-a-time CPU-time QPS as
// a percentage of LimitQPS.
func (f *FlatResult) SinglePercent(row Row) float64 {
	if f.LimitQPS <= 0 {
		return 0
	}
	return 100 * row.CPUQPS1 / f.LimitQPS
}

// BatchPercent is the batched single-thread CPU-time QPS as a percentage of
// ComputeLimitQPS, or 0 when that is unknown.
func (f *FlatResult) BatchPercent() float64 {
	if f.ComputeLimitQPS <= 0 {
		return 0
	}
	return 100 * f.BatchCPUQPS1 / f.ComputeLimitQPS
}

// fmaIters is the length of one timed FMALoop run: about 0.1 s.
const fmaIters = 20 << 20

// measureFlat measures the read bandwidth, the peak arithmetic rate and the
// batched search of x.
func measureFlat(ctx context.Context, x *flat.Index, ds *Dataset, truth [][]int32, cfg Config, threads int,
	logf func(string, ...any),
) (*FlatResult, error) {
	res := &FlatResult{}
	bytes := float64(len(ds.Base)) * 4
	var sink float32
	st := bestOf(cfg.Rounds, func() { sink += distance.Sum(ds.Base) })
	res.StreamWallGBs, res.StreamGBs = st.qps(1)
	res.StreamWallGBs *= bytes / 1e9
	res.StreamGBs *= bytes / 1e9
	res.LimitQPS = res.StreamGBs * 1e9 / bytes
	part := (ds.N() + threads - 1) / threads * ds.Dim
	res.StreamNGBs = bytes / 1e9 / bestWall(cfg.Rounds, threads, func(w int) {
		lo := min(w*part, len(ds.Base))
		s := distance.Sum(ds.Base[lo:min(lo+part, len(ds.Base))])
		_ = s
	})
	_ = sink
	logf("read bandwidth: %.2f GB/s on one core (CPU time), %.2f GB/s wall, %.2f GB/s on %d threads",
		res.StreamGBs, res.StreamWallGBs, res.StreamNGBs, threads)
	var flops int
	ft := bestOf(cfg.Rounds, func() { flops = distance.FMALoop(fmaIters) })
	if flops > 0 && ft.cpu > 0 {
		res.PeakGFLOPs = float64(flops) / ft.cpu.Seconds() / 1e9
		res.ComputeLimitQPS = res.PeakGFLOPs * 1e9 / (2 * float64(ds.N()) * float64(ds.Dim))
		logf("peak arithmetic rate: %.1f GFLOP/s on one core", res.PeakGFLOPs)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	all, err := x.SearchBatch(ds.Queries, cfg.K, nil)
	if err != nil {
		return nil, err
	}
	for i, hits := range all {
		res.BatchRecall += recallAt(hits, truth[i])
	}
	res.BatchRecall /= float64(ds.NQ())
	bt := bestOf(cfg.Rounds, func() { _, _ = x.SearchBatch(ds.Queries, cfg.K, nil) })
	res.BatchQPS1, res.BatchCPUQPS1 = bt.qps(ds.NQ())
	qpart := (ds.NQ() + threads - 1) / threads * ds.Dim
	res.BatchQPSN = float64(ds.NQ()) / bestWall(cfg.Rounds, threads, func(w int) {
		lo := min(w*qpart, len(ds.Queries))
		_, _ = x.SearchBatch(ds.Queries[lo:min(lo+qpart, len(ds.Queries))], cfg.K, nil)
	})
	logf("batched: recall@%d=%.4f qps(1)=%.0f cpu-qps(1)=%.0f qps(%d)=%.0f", cfg.K, res.BatchRecall,
		res.BatchQPS1, res.BatchCPUQPS1, threads, res.BatchQPSN)
	return res, ctx.Err()
}

// bestWall runs f(0..workers-1) on workers goroutines at once, rounds times,
// and returns the shortest wall time in seconds.
func bestWall(rounds, workers int, f func(w int)) float64 {
	best := 1e300
	for range rounds {
		t := bestOf(1, func() {
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() { f(w) })
			}
			wg.Wait()
		})
		best = min(best, t.wall.Seconds())
	}
	return best
}
