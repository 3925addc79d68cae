package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Print writes the result: a short header, a table with one line per sweep
// value, then for each reference library a table of its measurements with
// the Strata/library throughput ratios, and for FLAT the bandwidth limit
// and the batched search.
func (r *Result) Print(w io.Writer) error {
	c := r.Config
	raw := int64(r.N) * int64(r.Dim) * 4
	fmt.Fprintf(w, "dataset  %s: %d base vectors × %d dims, %d queries, metric %v, recall@%d\n",
		r.Dataset, r.N, r.Dim, r.NQ, c.Metric, c.K)
	fmt.Fprintf(w, "index    strata %s (%s)\n", c.Index, c.Params(r.Dim))
	fmt.Fprintf(w, "build    %v (CPU %v) on %d threads; memory %s (raw vectors %s, ratio %.3f)\n",
		r.Build.Round(time.Millisecond), r.BuildCPU.Round(time.Millisecond), r.Threads, mib(r.MemoryBytes), mib(raw), float64(r.MemoryBytes)/float64(raw))
	for _, l := range r.Compare {
		fmt.Fprintf(w, "compare  %s, same parameters: build %.2fs (strata/lib time %s), CPU %.2fs (strata/lib %s), size %s\n",
			l.Library, l.BuildSeconds, ratio(r.Build.Seconds(), l.BuildSeconds),
			l.BuildCPUSeconds, ratio(r.BuildCPU.Seconds(), l.BuildCPUSeconds), mib(l.MemoryBytes))
	}
	if len(r.Compare) == 0 && r.CompareNote != "" {
		fmt.Fprintf(w, "compare  %s\n", r.CompareNote)
	}
	fmt.Fprintf(w, "timing   best of %d passes; strata times one Search call per query, the libraries one batch call "+
		"per pass (FLAT: one call per query; \"each\": one call per query); CPU = per second of the searching thread's CPU time\n\n", c.Rounds)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\trecall\tQPS 1 thr\tCPU-QPS 1\tQPS %d thr\t\n", c.SweepName(), r.Threads)
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%d\t%.4f\t%.0f\t%.0f\t%.0f\t\n", row.Param, row.Recall, row.QPS1, row.CPUQPS1, row.QPSN)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range r.Compare {
		fmt.Fprintf(w, "\n%s (ratios are strata/%s)\n", l.Library, l.Library)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\tlib recall\tlib QPS 1\tlib CPU-QPS 1\tlib QPS N\tQPS1 ratio\tCPU-QPS1 ratio\tQPSN ratio\tlib CPU-QPS 1 each\tratio each\t\n", c.SweepName())
		for i, row := range r.Rows {
			lr := l.Rows[i]
			each, eachRatio := "-", "-"
			if lr.CPUQPS1Each > 0 {
				each, eachRatio = fmt.Sprintf("%.0f", lr.CPUQPS1Each), ratio(row.CPUQPS1, lr.CPUQPS1Each)
			}
			fmt.Fprintf(tw, "%d\t%.4f\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", lr.Param, lr.Recall, lr.QPS1, lr.CPUQPS1, lr.QPSN,
				ratio(row.QPS1, lr.QPS1), ratio(row.CPUQPS1, lr.CPUQPS1), ratio(row.QPSN, lr.QPSN), each, eachRatio)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if r.Flat != nil {
		return r.printFlat(w)
	}
	return nil
}

// printFlat writes the FLAT section: bandwidth, the single-query limit it
// implies, and batched search against the libraries' batched search.
func (r *Result) printFlat(w io.Writer) error {
	f := r.Flat
	raw := float64(r.N) * float64(r.Dim) * 4
	fmt.Fprintf(w, "\nbandwidth  streaming the %.0f MB of base vectors: %.2f GB/s on one core (CPU time; wall %.2f), %.2f GB/s on %d threads\n",
		raw/1e6, f.StreamGBs, f.StreamWallGBs, f.StreamNGBs, r.Threads)
	if len(r.Rows) > 0 {
		row := r.Rows[0]
		fmt.Fprintf(w, "single     one query at a time reads every row once: limit %.1f QPS per core; strata %.1f CPU-QPS = %.0f%% of it\n",
			f.LimitQPS, row.CPUQPS1, f.SinglePercent(row))
	}
	gflops := func(qps float64) float64 { return 2 * float64(r.N) * float64(r.Dim) * qps / 1e9 }
	if f.PeakGFLOPs > 0 {
		fmt.Fprintf(w, "compute    peak FMA rate %.1f GFLOP/s on one core (CPU time): batched limit %.0f QPS\n",
			f.PeakGFLOPs, f.ComputeLimitQPS)
	}
	fmt.Fprintf(w, "batched    all %d queries in one call: recall %.4f; %.0f QPS (CPU %.0f, %.0f GFLOP/s = %.0f%% of the limit) on 1 thread, %.0f QPS on %d threads\n",
		r.NQ, f.BatchRecall, f.BatchQPS1, f.BatchCPUQPS1, gflops(f.BatchCPUQPS1), f.BatchPercent(), f.BatchQPSN, r.Threads)
	for _, l := range r.Compare {
		b := l.Batch
		if b == nil {
			continue
		}
		fmt.Fprintf(w, "           %s batched: recall %.4f; %.0f QPS (CPU %.0f) on 1 thread, %.0f QPS on %d threads; "+
			"strata/lib %s (CPU %s), %s\n", l.Library, b.Recall, b.QPS1, b.CPUQPS1, b.QPSN, r.Threads,
			ratio(f.BatchQPS1, b.QPS1), ratio(f.BatchCPUQPS1, b.CPUQPS1), ratio(f.BatchQPSN, b.QPSN))
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
