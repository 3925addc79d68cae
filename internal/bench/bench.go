package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/cputime"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/diskann"
	"github.com/strata-db/strata/internal/index/flat"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/index/ivf"
	"github.com/strata-db/strata/internal/index/quant"
	"github.com/strata-db/strata/internal/index/rabitq"
)

// Index types the benchmark builds. FLAT is the exact scan of package flat.
var IndexTypes = []string{"HNSW", "HNSW_SQ", "HNSW_PQ", "IVF_FLAT", "IVF_SQ8", "IVF_PQ", "IVF_RABITQ", "DISKANN", "FLAT"}

// graphTypes are the index types searched by ef: HNSW and its quantized
// forms, and DISKANN (its search_list).
var graphTypes = []string{"HNSW", "HNSW_SQ", "HNSW_PQ", "DISKANN"}

// Config describes one benchmark run.
type Config struct {
	// Index is the index type, one of IndexTypes.
	Index string
	// Metric is the similarity measure.
	Metric index.Metric
	// K is the number of neighbours per query; recall is recall@K.
	K int
	// HNSW holds the HNSW build parameters (M, EfConstruction).
	HNSW hnsw.Config
	// Nlist, M and Nbits are the IVF build parameters; M = 0 means dim/8
	// (or the largest divisor of dim below it) for IVF_PQ. M and Nbits are
	// also HNSW_PQ's m and nbits (M = 0: dim/4, or the largest divisor of
	// dim below it).
	Nlist, M, Nbits int
	// SQType is HNSW_SQ's sq_type (SQ8, SQ6, FP16 or BF16).
	SQType string
	// RefineType, when set, gives HNSW_SQ, HNSW_PQ and IVF_RABITQ a refine
	// store of that encoding (FP32, FP16, BF16, SQ8 or SQ6); RefineK is the
	// refine_k of their searches (0 = 1).
	RefineType string
	RefineK    float64
	// Sweep lists the search parameter values to measure: ef for HNSW,
	// nprobe for IVF. Empty selects DefaultSweep.
	Sweep []int
	// Threads is the number of concurrent searchers of the all-cores
	// measurement; 0 means runtime.GOMAXPROCS(0).
	Threads int
	// Rounds is the number of timed passes over the queries per setting;
	// the fastest counts.
	Rounds int
	// Python is the interpreter that runs hnswlib or faiss with the same
	// parameters for comparison; empty skips the comparison.
	Python string
}

// Defaults returns an HNSW run at recall@10 under L2 with the Milvus default
// build parameters, IVF nlist 128 and nbits 8, all cores, three rounds and
// the comparison through python3.
func Defaults() Config {
	return Config{
		Index: "HNSW", Metric: index.L2, K: 10, HNSW: hnsw.Defaults(),
		Nlist: ivf.DefaultNlist, Nbits: ivf.DefaultNbits, SQType: "SQ8", Rounds: 3, Python: "python3",
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if !slices.Contains(IndexTypes, c.Index) {
		errs = append(errs, fmt.Errorf("bench: index %q is not one of %s", c.Index, strings.Join(IndexTypes, ", ")))
	}
	if !c.Metric.Float() {
		errs = append(errs, fmt.Errorf("bench: invalid metric %v", c.Metric))
	}
	if c.K < 1 {
		errs = append(errs, fmt.Errorf("bench: k(%d) must be positive", c.K))
	}
	if c.Threads < 0 || c.Rounds < 1 {
		errs = append(errs, fmt.Errorf("bench: threads(%d) must not be negative and rounds(%d) must be positive", c.Threads, c.Rounds))
	}
	for _, v := range c.Sweep {
		if v < 1 {
			errs = append(errs, fmt.Errorf("bench: sweep value %d must be positive", v))
		}
	}
	return errors.Join(errs...)
}

// DefaultSweep returns the search parameter values measured when
// Config.Sweep is empty: ef from k up to 512 for HNSW, powers of two up to
// nlist for IVF, and the single value 1 for FLAT.
func (c Config) DefaultSweep() []int {
	switch {
	case slices.Contains(graphTypes, c.Index):
		out := []int{c.K}
		for _, ef := range []int{16, 32, 64, 128, 256, 512} {
			if ef > c.K {
				out = append(out, ef)
			}
		}
		return out
	case c.Index == "FLAT":
		return []int{1}
	}
	var out []int
	for p := 1; p < c.Nlist; p *= 2 {
		out = append(out, p)
	}
	return append(out, c.Nlist)
}

// SweepName is the name of the swept search parameter: ef, nprobe, or for
// FLAT nq, the number of queries per Search call (always 1).
func (c Config) SweepName() string {
	switch {
	case slices.Contains(graphTypes, c.Index):
		return "ef"
	case c.Index == "FLAT":
		return "nq"
	}
	return "nprobe"
}

// ivfConfig returns the ivf.Config for an IVF or FLAT run over dimension
// dim.
func (c Config) ivfConfig(dim int) (ivf.Config, error) {
	switch c.Index {
	case "FLAT":
		cfg := ivf.Defaults(ivf.Flat)
		cfg.Nlist = 1
		return cfg, nil
	case "IVF_FLAT", "IVF_SQ8", "IVF_PQ":
		kind, err := ivf.ParseKind(c.Index)
		if err != nil {
			return ivf.Config{}, err
		}
		cfg := ivf.Defaults(kind)
		cfg.Nlist, cfg.Nbits = c.Nlist, c.Nbits
		if kind == ivf.PQ {
			cfg.M = c.M
			if cfg.M == 0 {
				cfg.M = defaultM(dim)
			}
		}
		return cfg, nil
	}
	return ivf.Config{}, fmt.Errorf("bench: %s is not an IVF index", c.Index)
}

// quantConfig returns the hnsw.QuantConfig of an HNSW_SQ or HNSW_PQ run
// over dimension dim.
func (c Config) quantConfig(dim int) (hnsw.QuantConfig, error) {
	var q hnsw.QuantConfig
	if c.Index == "HNSW_PQ" {
		q = hnsw.QuantConfig{Kind: quant.PQ, M: c.M, Nbits: c.Nbits}
		if q.M == 0 {
			q.M = defaultM(dim * 2)
			for dim%q.M != 0 {
				q.M--
			}
		}
	} else {
		kind, ok := quant.ParseKind(c.SQType)
		if !ok || kind == quant.FP32 {
			return q, fmt.Errorf("bench: invalid sq_type %q", c.SQType)
		}
		q.Kind = kind
	}
	if c.RefineType != "" {
		rt, ok := quant.ParseKind(c.RefineType)
		if !ok {
			return q, fmt.Errorf("bench: invalid refine_type %q", c.RefineType)
		}
		q.Refine, q.RefineType = true, rt
	}
	return q, nil
}

// defaultM returns dim/8 when 8 divides dim, else the largest divisor of
// dim not above dim/8 (at least 1): one code byte per 8 floats or fewer.
func defaultM(dim int) int {
	for m := max(dim/8, 1); m > 1; m-- {
		if dim%m == 0 {
			return m
		}
	}
	return 1
}

// Params describes the build parameters of the run.
func (c Config) Params(dim int) string {
	switch c.Index {
	case "HNSW":
		return fmt.Sprintf("M=%d efConstruction=%d", c.HNSW.M, c.HNSW.EfConstruction)
	case "HNSW_SQ", "HNSW_PQ":
		q, err := c.quantConfig(dim)
		if err != nil {
			return err.Error()
		}
		s := fmt.Sprintf("M=%d efConstruction=%d sq_type=%v", c.HNSW.M, c.HNSW.EfConstruction, q.Kind)
		if q.Kind == quant.PQ {
			s = fmt.Sprintf("M=%d efConstruction=%d m=%d nbits=%d", c.HNSW.M, c.HNSW.EfConstruction, q.M, q.Nbits)
		}
		if q.Refine {
			s += fmt.Sprintf(" refine_type=%v refine_k=%g", q.RefineType, max(c.RefineK, 1))
		}
		return s
	case "FLAT":
		return "exact scan"
	case "DISKANN":
		d := diskann.Defaults()
		return fmt.Sprintf("max_degree=%d search_list_size=%d pq_code_budget_gb_ratio=%g (m=%d)",
			d.MaxDegree, d.SearchListSize, d.PQCodeBudgetRatio, diskann.PQSubspaces(dim, d.PQCodeBudgetRatio))
	case "IVF_RABITQ":
		s := fmt.Sprintf("nlist=%d", c.Nlist)
		if c.RefineType != "" {
			s += fmt.Sprintf(" refine_type=%s refine_k=%g", c.RefineType, max(c.RefineK, 1))
		}
		return s
	}
	cfg, err := c.ivfConfig(dim)
	if err != nil {
		return err.Error()
	}
	if cfg.Kind == ivf.PQ {
		return fmt.Sprintf("nlist=%d m=%d nbits=%d", cfg.Nlist, cfg.M, cfg.Nbits)
	}
	return fmt.Sprintf("nlist=%d", cfg.Nlist)
}

// Row is the measurement of one search parameter value.
type Row struct {
	// Param is the ef or nprobe value.
	Param int
	// Recall is the mean recall@K over the queries.
	Recall float64
	// QPS1 is the single-threaded throughput in queries per second.
	QPS1 float64
	// CPUQPS1 is the single-threaded throughput per second of the
	// searching thread's CPU time, which leaves out time the thread waited
	// for a CPU on a loaded machine; 0 where it was not measured.
	CPUQPS1 float64
	// QPSN is the throughput with Threads concurrent searchers.
	QPSN float64
	// CPUQPS1Each is, for a library whose CPUQPS1 comes from one batch call
	// per pass (every type but FLAT), its single-threaded throughput per
	// CPU second with one search call per query, as Strata is timed; 0
	// where not measured.
	CPUQPS1Each float64
}

// Result is the outcome of Run.
type Result struct {
	// Config is the configuration run.
	Config Config
	// Dataset names the data set; N, Dim and NQ are its shape.
	Dataset    string
	N, Dim, NQ int
	Threads    int
	Build      time.Duration
	// BuildCPU is the process CPU time of the build, all threads.
	BuildCPU    time.Duration
	MemoryBytes int64
	// Rows holds one measurement per sweep value.
	Rows []Row
	// Flat holds the FLAT-only measurements; nil for other index types.
	Flat *FlatResult
	// Compare holds the reference libraries' measurements, if run: hnswlib
	// then faiss for HNSW, faiss for the other types.
	Compare []*Comparison
	// CompareNote says why no comparison ran, when none did.
	CompareNote string
}

// Run builds the index over ds, computes the exact ground truth and
// measures recall and throughput for every sweep value, then runs the
// reference library when cfg.Python is set. Progress lines go to logf.
func Run(ctx context.Context, cfg Config, ds *Dataset, logf func(format string, args ...any)) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	threads := cfg.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sweep := cfg.Sweep
	if len(sweep) == 0 {
		sweep = cfg.DefaultSweep()
	}
	if cfg.HNSW.Workers == 0 {
		cfg.HNSW.Workers = threads // builds on as many threads as the libraries
	}
	res := &Result{Config: cfg, Dataset: ds.Name, N: ds.N(), Dim: ds.Dim, NQ: ds.NQ(), Threads: threads}

	var err error
	logf("ground truth: %d queries over %d vectors", ds.NQ(), ds.N())
	truth := GroundTruth(ds, cfg.Metric, cfg.K, threads)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	logf("building %s (%s)", cfg.Index, cfg.Params(ds.Dim))
	start, startCPU := time.Now(), cputime.Process()
	var (
		x     searcher
		param func(v int) index.SearchParams
	)
	switch cfg.Index {
	case "HNSW":
		h, err := hnsw.Build(ctx, ds.Base, ds.Dim, cfg.Metric, cfg.HNSW)
		if err != nil {
			return nil, err
		}
		x, param = h, func(v int) index.SearchParams { return index.SearchParams{Ef: max(v, cfg.K)} }
	case "HNSW_SQ", "HNSW_PQ":
		hc := cfg.HNSW
		if hc.Quant, err = cfg.quantConfig(ds.Dim); err != nil {
			return nil, err
		}
		h, err := hnsw.Build(ctx, ds.Base, ds.Dim, cfg.Metric, hc)
		if err != nil {
			return nil, err
		}
		x, param = h, func(v int) index.SearchParams {
			return index.SearchParams{Ef: max(v, cfg.K), RefineK: cfg.RefineK}
		}
	case "IVF_RABITQ":
		rc := rabitq.Defaults()
		rc.Nlist, rc.Workers = cfg.Nlist, cfg.HNSW.Workers
		if cfg.RefineType != "" {
			rt, ok := quant.ParseKind(cfg.RefineType)
			if !ok {
				return nil, fmt.Errorf("bench: invalid refine_type %q", cfg.RefineType)
			}
			rc.Refine, rc.RefineType = true, rt
		}
		r, err := rabitq.Build(ctx, ds.Base, ds.Dim, cfg.Metric, rc)
		if err != nil {
			return nil, err
		}
		x, param = r, func(v int) index.SearchParams { return index.SearchParams{Nprobe: v, RefineK: cfg.RefineK} }
	case "DISKANN":
		d, closeFile, err := diskannFromFile(ctx, ds, cfg)
		if err != nil {
			return nil, err
		}
		defer closeFile()
		x, param = d, func(v int) index.SearchParams { return index.SearchParams{Ef: max(v, cfg.K)} }
	case "FLAT":
		f, err := flat.New(ds.Base, ds.Dim, cfg.Metric)
		if err != nil {
			return nil, err
		}
		x, param = f, func(int) index.SearchParams { return index.SearchParams{} }
	default:
		icfg, err := cfg.ivfConfig(ds.Dim)
		if err != nil {
			return nil, err
		}
		v, err := ivf.Build(ctx, ds.Base, ds.Dim, cfg.Metric, icfg)
		if err != nil {
			return nil, err
		}
		x, param = v, func(v int) index.SearchParams { return index.SearchParams{Nprobe: v} }
	}
	res.Build, res.BuildCPU = time.Since(start), cputime.Process()-startCPU
	res.MemoryBytes = x.MemoryBytes()
	logf("built in %v (CPU %v), %d bytes", res.Build.Round(time.Millisecond), res.BuildCPU.Round(time.Millisecond), res.MemoryBytes)

	for _, v := range sweep {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row, err := measure(x, ds, truth, cfg.K, param(v), threads, cfg.Rounds)
		if err != nil {
			return nil, fmt.Errorf("bench: %s=%d: %w", cfg.SweepName(), v, err)
		}
		row.Param = v
		res.Rows = append(res.Rows, row)
		logf("%s=%d recall@%d=%.4f qps(1)=%.0f cpu-qps(1)=%.0f qps(%d)=%.0f", cfg.SweepName(), v, cfg.K, row.Recall,
			row.QPS1, row.CPUQPS1, threads, row.QPSN)
	}
	if f, ok := x.(*flat.Index); ok {
		if res.Flat, err = measureFlat(ctx, f, ds, truth, cfg, threads, logf); err != nil {
			return nil, err
		}
	}

	if cfg.Python != "" && (cfg.Index == "HNSW_SQ" || cfg.Index == "HNSW_PQ" || cfg.Index == "IVF_RABITQ" || cfg.Index == "DISKANN") {
		res.CompareNote = "no reference library is run for " + cfg.Index
	} else if cfg.Python != "" {
		cmp, note, err := compare(ctx, cfg, ds, truth, sweep, threads, logf)
		if err != nil {
			return nil, err
		}
		res.Compare, res.CompareNote = cmp, note
	} else {
		res.CompareNote = "comparison disabled"
	}
	return res, nil
}

// diskannFromFile builds a DISKANN index at Milvus's defaults, writes it
// to a temporary file and loads it back as a query node does: the index
// measured holds its PQ codes in memory and reads node records from the
// file (the file is unlinked at once; closeFile closes it).
func diskannFromFile(ctx context.Context, ds *Dataset, cfg Config) (x *diskann.Index, closeFile func(), err error) {
	dc := diskann.Defaults()
	dc.Workers = cfg.HNSW.Workers
	built, err := diskann.Build(ctx, ds.Base, ds.Dim, cfg.Metric, dc)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp("", "strata-bench-diskann-*")
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	_ = os.Remove(f.Name()) // the open file stays readable
	if err := built.Marshal(f); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("bench: write DISKANN index: %w", err)
	}
	st, err := f.Stat()
	if err == nil {
		x, err = diskann.Open(f, st.Size())
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("bench: load DISKANN index: %w", err)
	}
	return x, func() { _ = f.Close() }, nil
}

// searcher is the part of an index the benchmark measures.
type searcher interface {
	Search(q []float32, k int, params index.SearchParams, allowed []bool) ([]index.Hit, error)
	MemoryBytes() int64
}

// measure runs every query once to score recall, then times rounds passes
// single-threaded and with threads searchers, keeping the fastest.
func measure(x searcher, ds *Dataset, truth [][]int32, k int, p index.SearchParams, threads, rounds int) (Row, error) {
	var row Row
	for i := range ds.NQ() {
		hits, err := x.Search(ds.Query(i), k, p, nil)
		if err != nil {
			return row, err
		}
		row.Recall += recallAt(hits, truth[i])
	}
	row.Recall /= float64(ds.NQ())
	pass := func(workers int) time.Duration {
		start := time.Now()
		forEach(ds.NQ(), workers, func() func(i int) {
			return func(i int) { _, _ = x.Search(ds.Query(i), k, p, nil) }
		})
		return time.Since(start)
	}
	best1, bestN := bestOf(rounds, func() { pass(1) }), time.Duration(1<<62)
	for range rounds {
		bestN = min(bestN, pass(threads))
	}
	row.QPS1, row.CPUQPS1 = best1.qps(ds.NQ())
	row.QPSN = float64(ds.NQ()) / bestN.Seconds()
	return row, nil
}

// timing is the wall and thread CPU time of the fastest of several runs.
type timing struct{ wall, cpu time.Duration }

// qps converts the timing of n queries into queries per second of wall
// time and of CPU time (0 when the CPU time is unknown).
func (t timing) qps(n int) (wall, cpu float64) {
	wall = float64(n) / t.wall.Seconds()
	if t.cpu > 0 {
		cpu = float64(n) / t.cpu.Seconds()
	}
	return wall, cpu
}

// bestOf runs f rounds times on the calling goroutine, locked to its OS
// thread, and returns the shortest wall time and the shortest thread CPU
// time (each the minimum over the rounds).
func bestOf(rounds int, f func()) timing {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := timing{wall: 1 << 62, cpu: 1 << 62}
	for range rounds {
		c0, w0 := threadCPUTime(), time.Now()
		f()
		w, c := time.Since(w0), threadCPUTime()-c0
		best.wall = min(best.wall, w)
		if c0 > 0 && c > 0 {
			best.cpu = min(best.cpu, c)
		}
	}
	if best.cpu == 1<<62 {
		best.cpu = 0
	}
	return best
}

// forEach calls the function made by newWorker for each i in [0, n), on
// workers goroutines that each make their own function (and so their own
// scratch state), handing out indices one at a time. It returns when all
// calls are done.
func forEach(n, workers int, newWorker func() func(i int)) {
	if workers <= 1 {
		f := newWorker()
		for i := range n {
			f(i)
		}
		return
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Go(func() {
			f := newWorker()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}
