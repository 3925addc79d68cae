package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/strata-db/strata/internal/bench"
	"github.com/strata-db/strata/internal/index"
)

// benchCmd runs `strata bench`: see internal/bench.
func benchCmd(args []string, stdout, stderr io.Writer) error {
	cfg := bench.Defaults()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Index, "index", cfg.Index, "index type: "+strings.Join(bench.IndexTypes, ", ")+
		"; a comma-separated list runs each over the same data, TYPE+REFINE (HNSW_SQ+FP32) giving a refine_type")
	metric := fs.String("metric", "L2", "metric: L2, IP or COSINE")
	fs.IntVar(&cfg.K, "k", cfg.K, "neighbours per query (recall@k)")
	fs.IntVar(&cfg.HNSW.M, "M", cfg.HNSW.M, "HNSW: links per node")
	fs.IntVar(&cfg.HNSW.EfConstruction, "efConstruction", cfg.HNSW.EfConstruction, "HNSW: build candidate list size")
	fs.IntVar(&cfg.Nlist, "nlist", cfg.Nlist, "IVF: number of lists")
	fs.IntVar(&cfg.M, "m", cfg.M, "IVF_PQ: sub-quantizers (0 = dim/8 or the nearest divisor below)")
	fs.IntVar(&cfg.Nbits, "nbits", cfg.Nbits, "IVF_PQ, HNSW_PQ: bits per code")
	fs.StringVar(&cfg.SQType, "sq_type", cfg.SQType, "HNSW_SQ: SQ8, SQ6, FP16 or BF16")
	fs.StringVar(&cfg.RefineType, "refine_type", "", "HNSW_SQ, HNSW_PQ, IVF_RABITQ: refine store encoding (FP32, FP16, BF16, SQ8, SQ6; empty = no refine)")
	fs.Float64Var(&cfg.RefineK, "refine_k", 0, "HNSW_SQ, HNSW_PQ, IVF_RABITQ: refine_k of the searches (0 = 1)")
	sweep := fs.String("sweep", "", "comma-separated ef (HNSW) or nprobe (IVF) values (default: a power-of-two sweep)")
	fs.IntVar(&cfg.Threads, "threads", 0, "searchers of the all-cores measurement (0 = GOMAXPROCS)")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "timed passes per setting; the fastest counts")
	fs.StringVar(&cfg.Python, "python", cfg.Python, "interpreter for the hnswlib/faiss comparison (empty = none)")
	synthetic := fs.String("synthetic", "", "use N,DIM synthetic clustered vectors instead of Fashion-MNIST")
	dataDir := fs.String("data-dir", bench.FashionMNISTDir, "directory with the Fashion-MNIST IDX files")
	queries := fs.Int("queries", 1000, "number of query vectors")
	seed := fs.Uint64("seed", 1, "seed of the synthetic data")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: strata bench [flags]\n\nmeasures a vector index: build time, memory, recall and QPS (see README, \"Tests and benchmarks\")")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))
	}
	cfg.Index = strings.ToUpper(cfg.Index)
	var err error
	if cfg.Metric, err = index.ParseMetric(*metric); err != nil {
		return err
	}
	if *sweep != "" {
		for _, f := range strings.Split(*sweep, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("bench: --sweep value %q is not an integer", f)
			}
			cfg.Sweep = append(cfg.Sweep, v)
		}
	}
	logf := func(format string, a ...any) {
		if !*quiet {
			fmt.Fprintf(stderr, "bench: "+format+"\n", a...)
		}
	}

	var ds *bench.Dataset
	if *synthetic == "" {
		ds, err = bench.LoadFashionMNIST(*dataDir, *queries)
		if errors.Is(err, os.ErrNotExist) {
			logf("Fashion-MNIST not found in %s (apt-get install dataset-fashion-mnist); using --synthetic 20000,64", *dataDir)
			*synthetic = "20000,64"
		} else if err != nil {
			return err
		}
	}
	if *synthetic != "" {
		n, dim, err := bench.ParseSynthetic(*synthetic)
		if err != nil {
			return err
		}
		ds = bench.Synthetic(n, dim, *queries, *seed)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, spec := range strings.Split(cfg.Index, ",") {
		run := cfg
		run.Index, run.RefineType, _ = strings.Cut(strings.TrimSpace(spec), "+")
		if run.RefineType == "" {
			run.RefineType = cfg.RefineType
		}
		res, err := bench.Run(ctx, run, ds, logf)
		if err != nil {
			return err
		}
		if err := res.Print(stdout); err != nil {
			return err
		}
	}
	return nil
}
