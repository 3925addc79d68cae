package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Print writes the result as a short header and a table with one line per
// sweep value; with a comparison, the reference library's recall and
// throughput follow with the Strata/library throughput ratios.
func (r *Result) Print(w io.Writer) error {
	c := r.Config
	raw := int64(r.N) * int64(r.Dim) * 4
	fmt.Fprintf(w, "dataset  %s: %d base vectors × %d dims, %d queries, metric %v, recall@%d\n",
		r.Dataset, r.N, r.Dim, r.NQ, c.Metric, c.K)
	fmt.Fprintf(w, "index    strata %s (%s)\n", c.Index, c.Params(r.Dim))
	fmt.Fprintf(w, "build    %v on %d threads; memory %s (raw vectors %s, ratio %.3f)\n",
		r.Build.Round(time.Millisecond), r.Threads, mib(r.MemoryBytes), mib(raw), float64(r.MemoryBytes)/float64(raw))
	if r.Compare != nil {
		fmt.Fprintf(w, "compare  %s, same parameters: build %.2fs (strata/lib time %s), size %s\n",
			r.Compare.Library, r.Compare.BuildSeconds, ratio(r.Build.Seconds(), r.Compare.BuildSeconds), mib(r.Compare.MemoryBytes))
	} else if r.CompareNote != "" {
		fmt.Fprintf(w, "compare  %s\n", r.CompareNote)
	}
	fmt.Fprintf(w, "timing   best of %d passes; strata times one Search call per query, the library one batch call per pass;\n"+
		"         \"cpu\" columns count the searching thread's CPU time, not wall time (steadier under load)\n\n", c.Rounds)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := fmt.Sprintf("%s\trecall\tQPS 1 thr\tQPS %d thr\tQPS 1 cpu\t", c.SweepName(), r.Threads)
	if r.Compare != nil {
		head += "lib recall\tlib QPS 1\tlib QPS N\tlib QPS 1 cpu\tQPS1 ratio\tQPSN ratio\tcpu ratio\t"
	}
	fmt.Fprintln(tw, head)
	for i, row := range r.Rows {
		line := fmt.Sprintf("%d\t%.4f\t%.0f\t%.0f\t%.0f\t", row.Param, row.Recall, row.QPS1, row.QPSN, row.QPS1CPU)
		if r.Compare != nil {
			l := r.Compare.Rows[i]
			line += fmt.Sprintf("%.4f\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t", l.Recall, l.QPS1, l.QPSN, l.QPS1CPU,
				ratio(row.QPS1, l.QPS1), ratio(row.QPSN, l.QPSN), ratio(row.QPS1CPU, l.QPS1CPU))
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
